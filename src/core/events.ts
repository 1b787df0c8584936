/**
 * The change feed: one typed event for every change of shared state. The engine's replica,
 * the audit log, webhooks and the admin event stream all subscribe to it. Listeners run in
 * isolation: one that throws is logged and never stops the others or the change itself.
 */
import type { MaintenanceConfig } from './maintenance.js'
import type { RouteState } from './route-state.js'

/** Every change event, discriminated by `type` (the SSE event names of CONTRACT.md §3). */
export type ChangeEvent =
  | {
      type: 'route_state'
      service: string
      route: string
      /** The new runtime override, or null when the override was removed (declared state applies). */
      state: RouteState | null
    }
  | { type: 'global_maintenance'; config: MaintenanceConfig }
  | { type: 'service_maintenance'; service: string; config: MaintenanceConfig }

/** The `type` of a {@link ChangeEvent}. */
export type ChangeEventType = ChangeEvent['type']

/** A change-feed listener. */
export type ChangeListener = (event: ChangeEvent) => void

/** Receives errors thrown by listeners. */
export type ListenerErrorHandler = (error: unknown, event: ChangeEvent) => void

/** An in-process change feed: synchronous delivery in subscription order. */
export class LocalChangeFeed {
  private readonly listeners = new Set<ChangeListener>()

  constructor(private readonly onListenerError: ListenerErrorHandler = () => undefined) {}

  /** Adds a listener; returns the function that removes it. */
  subscribe(listener: ChangeListener): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
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
}
