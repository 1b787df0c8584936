/**
 * The change feed: one typed event for every change of shared state. The engine's replica,
 * the scheduler and the admin event stream subscribe to it. Listeners run in isolation: one
 * that throws is logged and never stops the others or the change itself.
 *
 * Why events carry a `version`: a shared store (Redis) numbers every write from one counter.
 * The instance that writes applies its own change at once, while changes of other instances
 * arrive later over pub/sub; without a number, an older change arriving after a newer one
 * would roll the replica back. The replica keeps the highest version seen per record and
 * drops anything older.
 */
import type { AuditEntry } from './audit-entry.js'
import type { MaintenanceConfig } from './maintenance.js'
import type { RouteState } from './route-state.js'

/** Every change event, discriminated by `type` (the SSE event names of docs/reference/admin-rest.md). */
export type ChangeEvent =
  | {
      type: 'route_state'
      service: string
      route: string
      /** The new runtime override, or null when the override was removed (declared state applies). */
      state: RouteState | null
      /** Store write sequence number; absent for changes applied locally before storing. */
      version?: number
    }
  | { type: 'global_maintenance'; config: MaintenanceConfig; version?: number }
  | { type: 'service_maintenance'; service: string; config: MaintenanceConfig; version?: number }
  | {
      type: 'audit'
      entry: AuditEntry
      version?: number
    }

/** The `type` of a {@link ChangeEvent}. */
export type ChangeEventType = ChangeEvent['type']

/** A change-feed listener. */
export type ChangeListener = (event: ChangeEvent) => void

/** Receives errors thrown by listeners (`event` is null for resync listeners). */
export type ListenerErrorHandler = (error: unknown, event: ChangeEvent | null) => void

/**
 * The identity of the record an event changes (`route_state:<service>\0<route>`,
 * `global_maintenance`, …), or null for events that change no record (audit).
 */
export function eventRecordKey(event: ChangeEvent): string | null {
  switch (event.type) {
    case 'route_state':
      return `route_state:${event.service}\u0000${event.route}`
    case 'global_maintenance':
      return 'global_maintenance'
    case 'service_maintenance':
      return `service_maintenance:${event.service}`
    case 'audit':
      return null
  }
}

/** An in-process change feed: synchronous delivery in subscription order. */
export class LocalChangeFeed {
  private readonly listeners = new Set<ChangeListener>()
  private readonly resyncListeners = new Set<() => void>()

  constructor(private readonly onListenerError: ListenerErrorHandler = () => undefined) {}

  /** Adds a listener; returns the function that removes it. */
  subscribe(listener: ChangeListener): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  /** Adds a listener told when events may have been missed; returns the remover. */
  onResync(listener: () => void): () => void {
    this.resyncListeners.add(listener)
    return () => this.resyncListeners.delete(listener)
  }

  /** Delivers an event to every listener. */
  publish(event: ChangeEvent): void {
    for (const listener of this.listeners) {
      try {
        listener(event)
      } catch (error) {
        this.onListenerError(error, event)
      }
    }
  }

  /** Tells every resync listener that events may have been lost (e.g. a pub/sub reconnect). */
  requestResync(): void {
    for (const listener of this.resyncListeners) {
      try {
        listener()
      } catch (error) {
        this.onListenerError(error, null)
      }
    }
  }
}
