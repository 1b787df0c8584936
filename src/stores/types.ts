/**
 * The store ports of route control: one small interface per kind of record. Every
 * implementation (memory, and the file and Redis stores) passes the same conformance suite
 * (`test/stores/conformance.ts`), which is the executable form of the semantics written here.
 *
 * Writes notify the store's change feed after they are durable, so that every engine sharing
 * the store (other processes, with Redis) can update its replica.
 */
import type { ChangeListener } from '../core/events.js'
import type { MaintenanceConfig } from '../core/maintenance.js'
import type { RouteState } from '../core/route-state.js'

/** Runtime overrides of route states. Declared states live in code and are never stored. */
export interface RouteStateStore {
  /** Every stored override, in no particular order. */
  list(): Promise<RouteState[]>
  /** Stores (creates or replaces) the override of `state.service` + `state.route`, then publishes `route_state`. */
  put(state: RouteState): Promise<void>
  /** Removes an override; resolves true when one existed. Publishes `route_state` with `state: null`. */
  delete(service: string, route: string): Promise<boolean>
}

/** Global and per-service maintenance configurations. */
export interface MaintenanceStore {
  /** The global configuration, or null when none was ever stored. */
  getGlobal(): Promise<MaintenanceConfig | null>
  /** Replaces the global configuration, then publishes `global_maintenance`. */
  putGlobal(config: MaintenanceConfig): Promise<void>
  /** Every stored per-service configuration, by service name. */
  listServices(): Promise<Map<string, MaintenanceConfig>>
  /** Replaces one service's configuration, then publishes `service_maintenance`. */
  putService(service: string, config: MaintenanceConfig): Promise<void>
}

/** Delivery of change events from the store to every engine that shares it. */
export interface ChangeFeedPort {
  /** Adds a listener for changes (including this process's own writes); returns the unsubscriber. */
  subscribe(listener: ChangeListener): () => void
}

/** A route-control store: its ports plus lifecycle. */
export interface Store {
  /** Backend name, as in `CTL_BACKEND`. */
  readonly kind: string
  readonly routes: RouteStateStore
  readonly maintenance: MaintenanceStore
  readonly changes: ChangeFeedPort
  /** Opens connections or files; safe to call more than once. */
  connect(): Promise<void>
  /** Releases connections, timers and files. */
  close(): Promise<void>
}
