/**
 * The live replica: every route state and maintenance configuration this engine enforces,
 * held in memory so that the per-request check never waits on the store. It is loaded at
 * startup and kept current by the change feed (and by this engine's own writes, applied at
 * once so the very next request sees them).
 *
 * Versioned events (from the store) are applied only when newer than what the replica already
 * holds for that record, so a change arriving late over pub/sub never rolls back a newer one.
 */
import { Backoff, type BackoffSettings } from '../common/backoff.js'
import type { Logger } from '../common/logger.js'
import { ConfigError, toError } from './errors.js'
import { eventRecordKey, type ChangeEvent } from './events.js'
import {
  compileMaintenance,
  MAINTENANCE_OFF,
  type CompiledMaintenance,
  type MaintenanceConfig,
} from './maintenance.js'
import type { RouteRegistry } from './registry.js'
import type { RouteState } from './route-state.js'
import type { RouteSlot } from './route-slot.js'
import type { Store } from '../stores/types.js'

const overrideKey = (service: string, route: string) => `${service}\u0000${route}`

/** In-memory copy of the shared state, applied to the registry's slots. */
export class Replica {
  /** Overrides by service + route, including those of routes not registered (yet) here. */
  private readonly overrides = new Map<string, RouteState>()
  /** The compiled global maintenance configuration. */
  global: CompiledMaintenance = compileMaintenance(MAINTENANCE_OFF)
  /** Compiled per-service maintenance configurations. */
  readonly services = new Map<string, CompiledMaintenance>()
  /** Highest version applied per record (see `eventRecordKey`). */
  private readonly versions = new Map<string, number>()
  /** Version of the last full load: every record is at least this recent. */
  private loadedVersion = 0
  /**
   * True once the replica is loaded from the store and kept current by its change feed; until
   * then (no store yet, fail-open) local writes are applied directly.
   */
  live = false

  constructor(private readonly registry: RouteRegistry) {}

  /** Replaces everything with a full snapshot from the store. */
  load(snapshot: {
    overrides: RouteState[]
    global: MaintenanceConfig | null
    services: Map<string, MaintenanceConfig>
    /** Feed position of the snapshot (0 when unknown). */
    version?: number
  }): void {
    this.versions.clear()
    this.loadedVersion = snapshot.version ?? 0
    const previous = [...this.overrides.values()]
    this.overrides.clear()
    for (const state of snapshot.overrides)
      this.overrides.set(overrideKey(state.service, state.route), state)
    for (const state of previous) {
      if (!this.overrides.has(overrideKey(state.service, state.route))) {
        this.registry.get(state.service, state.route)?.setOverride(null)
      }
    }
    for (const state of snapshot.overrides)
      this.registry.get(state.service, state.route)?.setOverride(state)
    this.global = compileMaintenance(snapshot.global ?? MAINTENANCE_OFF)
    this.services.clear()
    for (const [service, config] of snapshot.services)
      this.services.set(service, compileMaintenance(config))
  }

  /**
   * Applies one change event (idempotent: applying the same event twice changes nothing).
   * Returns false when the event was older than the replica's copy and was dropped.
   */
  apply(event: ChangeEvent): boolean {
    // Once fed by the store's feed, the feed delivers every local write (versioned) before the
    // write resolves; the unversioned copy the operations apply afterwards could only be stale
    // (a newer write of another instance may have arrived in between), so it is ignored.
    if (event.version === undefined && this.live) return false
    if (event.version !== undefined) {
      const record = eventRecordKey(event)
      if (record !== null) {
        if (event.version <= (this.versions.get(record) ?? this.loadedVersion)) return false
        this.versions.set(record, event.version)
      }
    }
    switch (event.type) {
      case 'route_state': {
        const key = overrideKey(event.service, event.route)
        if (event.state === null) this.overrides.delete(key)
        else this.overrides.set(key, event.state)
        this.registry.get(event.service, event.route)?.setOverride(event.state)
        return true
      }
      case 'global_maintenance':
        this.global = compileMaintenance(event.config)
        return true
      case 'service_maintenance':
        this.services.set(event.service, compileMaintenance(event.config))
        return true
      case 'audit':
        return false
    }
  }

  /** Every runtime override known, including those of routes not registered here. */
  overrideStates(): RouteState[] {
    return [...this.overrides.values()]
  }

  /** Gives a newly registered slot the override already known for it. */
  attach(slot: RouteSlot): void {
    const override = this.overrides.get(overrideKey(slot.service, slot.route))
    if (override !== undefined && slot.override !== override) slot.setOverride(override)
  }

  /** The maintenance configuration of one service (off when none is stored). */
  serviceMaintenance(service: string): CompiledMaintenance {
    return this.services.get(service) ?? OFF
  }
}

const OFF = compileMaintenance(MAINTENANCE_OFF)

/** What {@link ReplicaSync} needs. */
export interface ReplicaSyncDeps {
  replica: Replica
  store: Store
  logger: Logger
  /** The retry rhythm while the store is unreachable. */
  backoff: BackoffSettings
  /** Called after every successful full load. */
  onLoaded?: () => void
  /** Called after every failed load: `fatal` for a {@link ConfigError} (never retried). */
  onFailed?: (error: Error, fatal: boolean) => void
  /** Called with every change event after the replica has seen it. */
  onEvent?: (event: ChangeEvent) => void
}

/**
 * Told when loading the store's state failed: `load` the first load, `resync` a reload after
 * missed events or a lost connection.
 */
export type StoreFailureListener = (operation: 'load' | 'resync', error: Error) => void

/**
 * Keeps a replica loaded from the store: the first full load at startup, a full reload after
 * the change feed reports lost events, and retries with capped exponential backoff while the
 * store is unreachable (requests keep passing on what the replica holds, fail-open).
 *
 * Why events are buffered during a load: an event can arrive between the snapshot read and
 * its application; it is applied after the snapshot, and versions drop it if the snapshot
 * already included it.
 */
export class ReplicaSync {
  private buffer: ChangeEvent[] | null = null
  private unsubscribers: (() => void)[] = []
  private readonly retries: Backoff
  private readonly failureListeners = new Set<StoreFailureListener>()
  private running: Promise<void> | null = null
  private again = false
  private closed = false
  /** True once a full load succeeded. */
  loaded = false

  constructor(private readonly deps: ReplicaSyncDeps) {
    this.retries = new Backoff(deps.backoff)
  }

  /**
   * The first load. Resolves after the first attempt, whether it worked or a retry is
   * scheduled; rejects only with a {@link ConfigError} (a corrupt file, a missing driver),
   * which no retry can fix.
   */
  start(): Promise<void> {
    return this.attempt('startup')
  }

  /** Reloads in full (after a pub/sub reconnect). */
  resync(): void {
    if (this.closed) return
    void this.attempt('resync').catch((error: unknown) => {
      this.deps.logger.error({ err: toError(error) }, 'replica resync failed')
    })
  }

  private attempt(reason: 'startup' | 'resync'): Promise<void> {
    if (this.running !== null) {
      // A load in progress may have read its snapshot before the events that were missed:
      // run once more after it.
      if (reason === 'resync') this.again = true
      return this.running
    }
    this.running = this.load(reason).finally(() => {
      this.running = null
      if (this.again && !this.closed) {
        this.again = false
        this.resync()
      }
    })
    return this.running
  }

  private async load(reason: 'startup' | 'resync'): Promise<void> {
    const { store, replica } = this.deps
    this.retries.cancel()
    try {
      await store.connect()
      if (this.closed) return
      this.buffer = []
      if (this.unsubscribers.length === 0) {
        this.unsubscribers.push(
          store.changes.subscribe((event) => this.receive(event)),
          store.changes.onResync(() => this.resync()),
        )
      }
      replica.load(await store.changes.snapshot())
      replica.live = true
      const buffered = this.buffer
      this.buffer = null
      for (const event of buffered) this.deliver(event)
      if (this.retries.failing)
        this.deps.logger.warn(`store "${store.kind}" available again; replica loaded`)
      this.retries.succeeded()
      if (!this.loaded || reason === 'resync') this.deps.onLoaded?.()
      this.loaded = true
    } catch (error) {
      this.buffer = null
      if (!this.closed) {
        this.deps.onFailed?.(toError(error), error instanceof ConfigError)
        this.tellFailure(reason === 'startup' && !this.loaded ? 'load' : 'resync', error)
      }
      if (error instanceof ConfigError) throw error
      if (this.closed) return
      const delay = this.retries.schedule(() => {
        void this.attempt(reason).catch((fatal: unknown) => {
          this.deps.logger.error({ err: toError(fatal) }, 'store configuration error')
        })
      })
      const what = reason === 'startup' && !this.loaded ? 'unavailable at startup' : 'resync failed'
      this.deps.logger.error(
        { err: toError(error) },
        `store "${store.kind}" ${what}; serving ${this.loaded ? 'the last known' : 'declared'} states and retrying in ${delay / 1000}s`,
      )
    }
  }

  private receive(event: ChangeEvent): void {
    if (this.buffer !== null) this.buffer.push(event)
    else this.deliver(event)
  }

  private deliver(event: ChangeEvent): void {
    this.deps.replica.apply(event)
    this.deps.onEvent?.(event)
  }

  /** Adds a listener told of every failed load of the store's state; returns the remover. */
  onFailure(listener: StoreFailureListener): () => void {
    this.failureListeners.add(listener)
    return () => this.failureListeners.delete(listener)
  }

  private tellFailure(operation: 'load' | 'resync', error: unknown): void {
    for (const listener of this.failureListeners) {
      try {
        listener(operation, toError(error))
      } catch (failure) {
        this.deps.logger.error({ err: toError(failure) }, 'store failure listener failed')
      }
    }
  }

  /**
   * Whether the store answered the last load and no retry is pending: false before the first
   * load, and from a failed load or resync until one succeeds again.
   */
  get available(): boolean {
    return this.loaded && !this.retries.failing
  }

  /** Stops retries and unsubscribes from the feed. */
  close(): void {
    this.closed = true
    this.retries.cancel()
    for (const unsubscribe of this.unsubscribers) unsubscribe()
    this.unsubscribers = []
  }
}
