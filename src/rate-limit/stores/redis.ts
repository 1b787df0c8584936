/**
 * Rate-limit policies and the blocked-request log on the Redis store, shared by every instance
 * on one Redis under the route-control store's prefix:
 *
 *   <prefix>rl:routes     hash   `<service>\0<METHOD:path>` → RateLimitPolicy JSON
 *   <prefix>rl:global     hash   `global` → ScopeRateLimitPolicy JSON
 *   <prefix>rl:services   hash   service → ScopeRateLimitPolicy JSON
 *   <prefix>rl:seq        string write counter (versions)
 *   <prefix>rl:hits       list   RateLimitHit JSON, newest first, trimmed to the cap
 *   <prefix>rl:changes    pub/sub channel: `<version>|<origin>|<RateLimitChangeEvent JSON>`
 *
 * Writes, versions, messages and the pub/sub connection are the shared {@link RecordFeed} of
 * the `rl` namespace: a policy write, its version and its message are one Lua script, so the
 * change is never stored without being announced. The writing instance applies its own change
 * at once (the service does that); other instances receive it over the feed's pub/sub
 * connection. Versions are tracked per record so that a late message never rolls back a newer
 * change; after the pub/sub connection comes back, `onResync` asks for a full reload.
 */
import { execAll } from '../../common/redis.js'
import type { IgnoredMessageCounts } from '../../common/ignored-messages.js'
import { feedSubscriberName, redisRecordFeed } from '../../stores/record-feed.js'
import type { RedisHandle } from '../../stores/types.js'
import type { RateLimitChangeEvent } from '../events.js'
import { hitMatches, type RateLimitHit } from '../exceeded.js'
import type { RateLimitPolicy, ScopeRateLimitPolicy } from '../policy.js'
import type { RateLimitHitStore, RateLimitPolicyStore } from '../ports.js'
import { turnBatch } from './turn-batch.js'

/** A policy store whose changes reach every instance, with its own lifecycle. */
export interface SharedPolicyStore extends RateLimitPolicyStore {
  /** Adds a listener for changes made by OTHER instances; returns the unsubscriber. */
  subscribe(listener: (event: RateLimitChangeEvent) => void): () => void
  /** Adds a listener called when changes may have been missed (reload in full then). */
  onResync(listener: () => void): () => void
  /** Opens the pub/sub connection; call after the route store's `connect()`. Idempotent. */
  connect(): Promise<void>
  /** Closes the pub/sub connection. */
  close(): Promise<void>
  /** Change messages ignored so far, by kind (malformed; a type this version does not know). */
  ignoredMessages(): IgnoredMessageCounts
}

/** Options of {@link redisPolicyStore}. */
export interface RedisPolicyStoreOptions {
  /** Receives faults recovered from (a throwing listener, a malformed message). */
  onError?: (error: Error, what: string) => void
  /** Where ignored change messages are reported, as warnings (once per kind and type). */
  warn?: (message: string) => void
}

/** The client name of the rate-limit pub/sub connection under `prefix`. */
export function rateLimitSubscriberName(prefix: string): string {
  return feedSubscriberName(prefix, 'rl')
}

const routeId = (service: string, route: string) => `${service}\u0000${route}`

/** The record an event changes, for per-record version tracking. */
function recordOf(event: RateLimitChangeEvent): string {
  switch (event.type) {
    case 'rl_policy':
      return `r\u0000${routeId(event.service, event.route)}`
    case 'global_rl_policy':
      return 'g'
    case 'service_rl_policy':
      return `s\u0000${event.service}`
  }
}

/** Where an event's policy is stored (the reverse of `write` below). */
function storedAs(event: RateLimitChangeEvent): {
  container: string
  field: string
  value: string | null
} {
  switch (event.type) {
    case 'rl_policy':
      return {
        container: 'routes',
        field: routeId(event.service, event.route),
        value: json(event.policy),
      }
    case 'global_rl_policy':
      return { container: 'global', field: 'global', value: json(event.policy) }
    case 'service_rl_policy':
      return { container: 'services', field: event.service, value: json(event.policy) }
  }
}

/** Whether a message's event is one this version knows, with the fields it needs. */
/** The fields of each policy change this version reads. */
const POLICY_EVENT_FIELDS: Readonly<Record<string, ReadonlySet<string>>> = {
  rl_policy: new Set(['type', 'service', 'route', 'policy']),
  global_rl_policy: new Set(['type', 'policy']),
  service_rl_policy: new Set(['type', 'service', 'policy']),
}

function accepts(event: object): boolean {
  const fields = event as Record<string, unknown>
  const policy = fields.policy
  if (policy === undefined || (policy !== null && typeof policy !== 'object')) return false
  switch (fields.type) {
    case 'rl_policy':
      return typeof fields.service === 'string' && typeof fields.route === 'string'
    case 'global_rl_policy':
      return true
    case 'service_rl_policy':
      return typeof fields.service === 'string'
    default:
      return false
  }
}

const json = (value: unknown) => (value === null ? null : JSON.stringify(value))

/** Creates the Redis policy store on the route store's Redis. */
export function redisPolicyStore(
  redis: RedisHandle,
  options: RedisPolicyStoreOptions = {},
): SharedPolicyStore {
  const feed = redisRecordFeed<RateLimitChangeEvent>(redis, {
    namespace: 'rl',
    label: 'rate-limit',
    recordOf,
    accepts,
    knownFields: (event) => POLICY_EVENT_FIELDS[event.type] ?? new Set(),
    containers: ['routes', 'global', 'services'],
    storedAs,
    onError: options.onError,
    warn: options.warn,
  })

  async function write(
    container: 'routes' | 'global' | 'services',
    field: string,
    value: RateLimitPolicy | ScopeRateLimitPolicy | null,
    event: RateLimitChangeEvent,
  ): Promise<boolean> {
    const operation = value === null ? 'hdel' : 'hset'
    const text = value === null ? '' : JSON.stringify(value)
    return (await feed.write(container, operation, field, text, event)).version > 0
  }

  async function values<T>(container: 'routes' | 'global' | 'services'): Promise<Map<string, T>> {
    await feed.beforeRead()
    const [all, seq] = (await execAll(
      redis.client().multi().hgetall(feed.key(container)).get(feed.versionKey),
    )) as [Record<string, string>, string | null]
    feed.loaded(container, all, seq === null ? 0 : Number(seq))
    return new Map(Object.entries(all).map(([field, text]) => [field, JSON.parse(text) as T]))
  }

  return {
    async listRoutePolicies() {
      return [...(await values<RateLimitPolicy>('routes')).values()]
    },
    async putRoutePolicy(policy) {
      const copy = structuredClone(policy)
      const route = `${copy.method}:${copy.path}`
      const event = { type: 'rl_policy', service: copy.service, route, policy: copy } as const
      await write('routes', routeId(copy.service, route), copy, event)
    },
    deleteRoutePolicy: (service, route) =>
      write('routes', routeId(service, route), null, {
        type: 'rl_policy',
        service,
        route,
        policy: null,
      }),
    async getGlobal() {
      return (await values<ScopeRateLimitPolicy>('global')).get('global') ?? null
    },
    async putGlobal(policy) {
      await write('global', 'global', policy, { type: 'global_rl_policy', policy })
    },
    listServices: () => values<ScopeRateLimitPolicy>('services'),
    async putService(service, policy) {
      await write('services', service, policy, { type: 'service_rl_policy', service, policy })
    },
    subscribe: (listener) => feed.subscribe(listener),
    onResync: (listener) => feed.onResync(listener),
    connect: () => feed.connect(),
    close: () => feed.close(),
    ignoredMessages: () => feed.ignoredMessages(),
  }
}

/**
 * The blocked-request log in a Redis list, newest first: LPUSH and LTRIM in one MULTI, so the
 * list never holds more than `capacity` records, whichever instance writes. The 429s of one
 * event-loop turn share one MULTI (one LPUSH of all their records), so a flood of rejections
 * costs one command per turn, not one per 429.
 */
export function redisHitStore(
  redis: Pick<RedisHandle, 'prefix' | 'client'>,
  capacity = 10_000,
): RateLimitHitStore {
  if (!Number.isSafeInteger(capacity) || capacity < 1)
    throw new RangeError('maxRlHitEntries must be an integer ≥ 1')
  const list = `${redis.prefix}rl:hits`

  async function write(texts: string[]): Promise<void> {
    // LPUSH with several values pushes them one by one: the last ends up first.
    await execAll(
      redis
        .client()
        .multi()
        .lpush(list, ...texts)
        .ltrim(list, 0, capacity - 1),
    )
  }

  const batch = turnBatch(write)

  return {
    add: (record) => batch.add(JSON.stringify(record)),
    async list(options = {}) {
      // Records of the current turn are read back once written (a read never overtakes them).
      await batch.settled()
      const limit = Math.min(options.limit ?? capacity, capacity)
      // Without a filter only the wanted records travel; with one the whole log is read.
      const filtered = options.path !== undefined || options.service !== undefined
      const texts = await redis.client().lrange(list, 0, filtered ? capacity - 1 : limit - 1)
      const records = texts.map((text) => JSON.parse(text) as RateLimitHit)
      const matching = filtered ? records.filter((hit) => hitMatches(hit, options)) : records
      return matching.slice(0, limit)
    },
  }
}
