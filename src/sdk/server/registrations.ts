/**
 * Where the central server keeps what each SDK app declared at registration: per app id, the
 * list of its declared routes. It lives on the engine's backend, beside the route states, so
 * that every server instance on one Redis knows every app's routes (any of them can change a
 * route of an app registered with another) and a restarted file-backed server still knows them.
 *
 *   memory → a Map of this process
 *   file   → the `sdk_registrations` section of the state document
 *   redis  → the hash `<prefix>sdk:registrations` (app id → JSON), announced on the versioned
 *            record feed of the `sdk` namespace so other instances register the routes at once
 *   postgres → the `sdk_registrations` section of the PostgreSQL store's shared sections; a
 *            registration made on another instance arrives as a resync (a full reload)
 */
import { redisRecordFeed } from '../../stores/record-feed.js'
import type { StoreBackend } from '../../stores/types.js'
import type { DeclaredRoute } from '../wire.js'

/** What one app declared at its last registration. */
export interface Registration {
  /** The app id (its service name). */
  service: string
  routes: DeclaredRoute[]
}

/** The registrations of every SDK app. */
export interface RegistrationStore {
  /** Every registration, in no particular order. */
  list(): Promise<Registration[]>
  /** One app's registration, or null. */
  get(service: string): Promise<Registration | null>
  /** Creates or replaces one app's registration. */
  put(registration: Registration): Promise<void>
  /** Adds a listener for registrations written by OTHER instances; returns the unsubscriber. */
  subscribe(listener: (registration: Registration) => void): () => void
  /** Adds a listener called when changes may have been missed (reload in full then). */
  onResync(listener: () => void): () => void
  /** Opens what the store needs beyond the engine's store connection. Idempotent. */
  connect(): Promise<void>
  close(): Promise<void>
}

const SECTION = 'sdk_registrations'

/** The fields of a registration message this version reads. */
const REGISTRATION_FIELDS: ReadonlySet<string> = new Set(['service', 'routes'])

/** The registration store on `backend` (see the module comment). */
export function registrationStoreFor(
  backend: StoreBackend,
  onError: (error: Error, what: string) => void = () => undefined,
): RegistrationStore {
  switch (backend.kind) {
    case 'memory':
      return mapStore(new Map(), () => Promise.resolve())
    case 'file': {
      const read = () =>
        new Map(Object.entries((backend.sections.read(SECTION) ?? {}) as Record<string, unknown>))
      return mapStore(
        () => read() as Routes,
        (all) => backend.sections.write(SECTION, Object.fromEntries(all)),
      )
    }
    case 'redis':
      return redisRegistrations(backend.redis, onError)
    case 'postgres': {
      const sections = backend.postgres.sections
      const read = () =>
        new Map(Object.entries((sections.read(SECTION) ?? {}) as Record<string, unknown>))
      return {
        ...mapStore(
          () => read() as Routes,
          (all) => sections.write(SECTION, Object.fromEntries(all)),
        ),
        onResync: (listener) =>
          sections.onChange((name) => {
            if (name === SECTION) listener()
          }),
      }
    }
  }
}

type Routes = Map<string, DeclaredRoute[]>

/** A store of one process (memory) or of the file document. */
function mapStore(
  source: Routes | (() => Routes),
  persist: (all: Routes) => Promise<void>,
): RegistrationStore {
  const current = () => (typeof source === 'function' ? source() : source)
  return {
    list: () =>
      Promise.resolve(
        [...current()].map(([service, routes]) => ({ service, routes: structuredClone(routes) })),
      ),
    get(service) {
      const routes = current().get(service)
      return Promise.resolve(
        routes === undefined ? null : { service, routes: structuredClone(routes) },
      )
    },
    async put(registration) {
      const all = current()
      all.set(registration.service, structuredClone(registration.routes))
      await persist(all)
    },
    subscribe: () => () => undefined,
    onResync: () => () => undefined,
    connect: () => Promise.resolve(),
    close: () => Promise.resolve(),
  }
}

function redisRegistrations(
  redis: import('../../stores/types.js').RedisHandle,
  onError: (error: Error, what: string) => void,
): RegistrationStore {
  const feed = redisRecordFeed<Registration>(redis, {
    namespace: 'sdk',
    label: 'SDK registration',
    recordOf: (registration) => registration.service,
    accepts: (event) => {
      const fields = event as Record<string, unknown>
      return typeof fields.service === 'string' && Array.isArray(fields.routes)
    },
    knownFields: () => REGISTRATION_FIELDS,
    containers: ['registrations'],
    // Re-seeded like the other namespaces when Redis comes back empty.
    storedAs: (registration) => ({
      container: 'registrations',
      field: registration.service,
      value: JSON.stringify(registration.routes),
    }),
    onError,
  })
  const hash = feed.key('registrations')
  const parse = (service: string, json: string): Registration | null => {
    try {
      return { service, routes: JSON.parse(json) as DeclaredRoute[] }
    } catch (error) {
      onError(error instanceof Error ? error : new Error(String(error)), 'SDK registration read')
      return null
    }
  }
  return {
    async list() {
      const all = await redis.client().hgetall(hash)
      return Object.entries(all).flatMap(([service, json]) => parse(service, json) ?? [])
    },
    async get(service) {
      const json = await redis.client().hget(hash, service)
      return json === null ? null : parse(service, json)
    },
    async put(registration) {
      await feed.write(
        'registrations',
        'hset',
        registration.service,
        JSON.stringify(registration.routes),
        registration,
      )
    },
    subscribe: (listener) => feed.subscribe((registration) => listener(registration)),
    onResync: (listener) => feed.onResync(listener),
    connect: () => feed.connect(),
    close: () => feed.close(),
  }
}
