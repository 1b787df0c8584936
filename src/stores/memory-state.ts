/**
 * The records of one process held in plain maps, behind the store ports. The memory store is
 * this alone; the file store is this plus a JSON document written after every change.
 *
 * Every write mutates the maps synchronously (so a compare-and-set is atomic in one process),
 * then awaits `persist` (a no-op in memory, the durable file write for the file store), then
 * publishes its event: listeners only ever hear about durable changes.
 */
import { stderrLogger, type Logger } from '../common/logger.js'
import { auditMatches, type AuditEntry } from '../core/audit-entry.js'
import { LocalChangeFeed, type ChangeEvent } from '../core/events.js'
import type { MaintenanceConfig } from '../core/maintenance.js'
import type { RouteState } from '../core/route-state.js'
import type {
  AuditStore,
  ChangeFeedPort,
  ClaimStore,
  MaintenanceStore,
  RouteStateStore,
  StoreSnapshot,
  TokenRecord,
  TokenStore,
} from './types.js'

const clone = <T>(value: T): T => structuredClone(value)
/**
 * A route state's own copy: its only nested values are `window` and `envs`. Written out
 * because every route change copies twice (the stored record, the event) and a field-by-field
 * copy costs a fraction of `structuredClone`.
 */
const copyState = (state: RouteState): RouteState => ({
  ...state,
  window: state.window === null ? null : { ...state.window },
  envs: [...state.envs],
})
const overrideKey = (service: string, route: string) => `${service}\u0000${route}`

/** The serialisable content of a {@link MemoryState} (the file store's document body). */
export interface StateDocument {
  /** Version of the document format. */
  format: 1
  /** Last write version. */
  version: number
  routes: RouteState[]
  global: MaintenanceConfig | null
  services: Record<string, MaintenanceConfig>
  /** Oldest first. */
  audit: AuditEntry[]
  tokens: Record<string, TokenRecord>
  /** Claim key → expiry (epoch ms). */
  claims: Record<string, number>
  /** Sections of ports defined by other modules (see `FileSections`). */
  sections: Record<string, unknown>
}

/** Options of {@link MemoryState}. */
export interface MemoryStateOptions {
  /** Makes the current content durable; resolves when it is. */
  persist?: () => Promise<void>
  /** Current time for expiries (tokens, claims); default `Date.now`. */
  now?: () => number
  /** Where a change listener's error is logged; default stderr (src/common/logger.ts). */
  logger?: Logger
}

/** In-process records and the store ports over them. */
export class MemoryState {
  readonly feed: LocalChangeFeed
  private version = 0
  private readonly overrides = new Map<string, RouteState>()
  private global: MaintenanceConfig | null = null
  private readonly services = new Map<string, MaintenanceConfig>()
  /** Oldest first, so appending is cheap. */
  private auditLog: AuditEntry[] = []
  private readonly tokenMap = new Map<string, TokenRecord>()
  private readonly claimMap = new Map<string, number>()
  private readonly sectionMap = new Map<string, unknown>()
  private readonly persist: () => Promise<void>
  private readonly now: () => number

  constructor(options: MemoryStateOptions = {}) {
    this.persist = options.persist ?? (() => Promise.resolve())
    this.now = options.now ?? Date.now
    const logger = options.logger ?? stderrLogger({ bindings: { module: 'switchyard' } })
    this.feed = new LocalChangeFeed((error) => {
      logger.error({ err: error }, 'change listener failed')
    })
  }

  /** Replaces everything with a document's content (the file store's load). */
  load(document: StateDocument): void {
    this.version = document.version
    this.overrides.clear()
    for (const state of document.routes)
      this.overrides.set(overrideKey(state.service, state.route), state)
    this.global = document.global
    this.services.clear()
    for (const [name, config] of Object.entries(document.services)) this.services.set(name, config)
    this.auditLog = [...document.audit]
    this.tokenMap.clear()
    for (const [hash, record] of Object.entries(document.tokens)) this.tokenMap.set(hash, record)
    this.claimMap.clear()
    for (const [key, expiry] of Object.entries(document.claims)) this.claimMap.set(key, expiry)
    this.sectionMap.clear()
    for (const [name, value] of Object.entries(document.sections)) this.sectionMap.set(name, value)
  }

  /** The current content as a document (expired tokens and claims left out). */
  toDocument(): StateDocument {
    const now = this.now()
    return {
      format: 1,
      version: this.version,
      routes: [...this.overrides.values()],
      global: this.global,
      services: Object.fromEntries(this.services),
      audit: this.auditLog,
      tokens: Object.fromEntries(
        [...this.tokenMap].filter(([, record]) => Date.parse(record.expires_at) > now),
      ),
      claims: Object.fromEntries([...this.claimMap].filter(([, expiry]) => expiry > now)),
      sections: Object.fromEntries(this.sectionMap),
    }
  }

  private async commit(event: ChangeEvent | null): Promise<void> {
    await this.persist()
    if (event !== null) this.feed.publish(event)
  }

  private nextVersion(): number {
    this.version += 1
    return this.version
  }

  /** The route-state port. */
  readonly routes: RouteStateStore = {
    list: () => Promise.resolve([...this.overrides.values()].map(copyState)),
    put: (state) => {
      const stored = copyState(state)
      this.overrides.set(overrideKey(state.service, state.route), stored)
      const version = this.nextVersion()
      return this.commit({
        type: 'route_state',
        service: state.service,
        route: state.route,
        state: copyState(stored),
        version,
      })
    },
    replaceIf: async (state, expectedSince) => {
      const key = overrideKey(state.service, state.route)
      if (this.overrides.get(key)?.since !== expectedSince) return false
      await this.routes.put(state)
      return true
    },
    delete: async (service, route) => {
      const existed = this.overrides.delete(overrideKey(service, route))
      if (!existed) return false
      const version = this.nextVersion()
      await this.commit({ type: 'route_state', service, route, state: null, version })
      return true
    },
  }

  /** The maintenance port. */
  readonly maintenance: MaintenanceStore = {
    getGlobal: () => Promise.resolve(this.global === null ? null : clone(this.global)),
    putGlobal: (config) => {
      this.global = clone(config)
      const version = this.nextVersion()
      return this.commit({ type: 'global_maintenance', config: clone(config), version })
    },
    listServices: () =>
      Promise.resolve(new Map([...this.services].map(([name, c]) => [name, clone(c)]))),
    putService: (service, config) => {
      this.services.set(service, clone(config))
      const version = this.nextVersion()
      return this.commit({ type: 'service_maintenance', service, config: clone(config), version })
    },
  }

  /** The audit port. */
  readonly audit: AuditStore = {
    append: (entry, cap) => {
      this.auditLog.push(clone(entry))
      const excess = this.auditLog.length - Math.max(1, cap)
      if (excess > 0) this.auditLog.splice(0, excess)
      return this.commit({ type: 'audit', entry: clone(entry) })
    },
    list: (query) => {
      const matching: AuditEntry[] = []
      for (let i = this.auditLog.length - 1; i >= 0; i--) {
        const entry = this.auditLog[i] as AuditEntry
        if (auditMatches(entry, query)) matching.push(entry)
      }
      return Promise.resolve({
        items: matching.slice(query.offset, query.offset + query.limit).map(clone),
        total: matching.length,
      })
    },
  }

  /** The token port. */
  readonly tokens: TokenStore = {
    put: (hash, record) => {
      this.tokenMap.set(hash, clone(record))
      return this.commit(null)
    },
    get: (hash) => {
      const record = this.tokenMap.get(hash)
      if (record === undefined || Date.parse(record.expires_at) <= this.now())
        return Promise.resolve(null)
      return Promise.resolve(clone(record))
    },
    revoke: async (hash) => {
      const existed = this.tokenMap.delete(hash)
      if (existed) await this.commit(null)
      return existed
    },
  }

  /** The claim port. */
  readonly claims: ClaimStore = {
    claim: async (key, ttlMs) => {
      const now = this.now()
      const expiry = this.claimMap.get(key)
      if (expiry !== undefined && expiry > now) return false
      this.claimMap.set(key, now + ttlMs)
      await this.commit(null)
      return true
    },
  }

  /** The change-feed port. */
  readonly changes: ChangeFeedPort = {
    subscribe: (listener) => this.feed.subscribe(listener),
    onResync: (listener) => this.feed.onResync(listener),
    snapshot: (): Promise<StoreSnapshot> =>
      Promise.resolve({
        overrides: [...this.overrides.values()].map(clone),
        global: this.global === null ? null : clone(this.global),
        services: new Map([...this.services].map(([name, c]) => [name, clone(c)])),
        version: this.version,
      }),
  }

  /**
   * Forgets expired tokens and claims; returns how many went. Reads already ignore them, but
   * without this they would stay in memory (and in the file) for ever: every login adds one.
   */
  purgeExpired(): number {
    const now = this.now()
    let purged = 0
    for (const [hash, record] of this.tokenMap) {
      if (Date.parse(record.expires_at) <= now) {
        this.tokenMap.delete(hash)
        purged++
      }
    }
    for (const [key, expiry] of this.claimMap) {
      if (expiry <= now) {
        this.claimMap.delete(key)
        purged++
      }
    }
    return purged
  }

  /**
   * Purges expired tokens and claims every `seconds` (0 = never), persisting when something
   * went; the timer does not keep the process alive. Returns the function that stops it.
   */
  purgeEvery(seconds: number, onError: (error: unknown) => void): () => void {
    if (seconds <= 0) return () => undefined
    const timer = setInterval(() => {
      if (this.purgeExpired() > 0) this.commit(null).catch(onError)
    }, seconds * 1000)
    timer.unref()
    return () => clearInterval(timer)
  }

  /** Reads a named section (a copy). */
  readSection(name: string): unknown {
    const value = this.sectionMap.get(name)
    return value === undefined ? undefined : clone(value)
  }

  /** Replaces a named section and persists. */
  writeSection(name: string, value: unknown): Promise<void> {
    this.sectionMap.set(name, clone(value))
    return this.commit(null)
  }
}
