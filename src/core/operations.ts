/**
 * Operations: one record per state change made through the engine, with who made it and the
 * statuses before and after. The audit log and webhooks are built on this stream.
 */

import type { AuditDiff } from './audit-diff.js'

/** Who made a change, and through which client. */
export interface ActorOptions {
  /** Default `system`. */
  actor?: string
  /** `cli`, `dashboard`, `sdk`, `api`…; default empty. */
  platform?: string
}

/** A state change made through the engine. */
export interface Operation {
  action: string
  /** The route key, or a label such as `[Global Maintenance]` for changes not tied to one route. */
  route: string
  service: string | null
  actor: string
  platform: string
  reason: string
  /** A route status, or `on`/`off` for maintenance. */
  previous_status: string | null
  new_status: string | null
  /**
   * Whom the actor acted for, when it relays someone else's change: an SDK app reporting a
   * change its own users made (the actor is the app's token, this the user it named).
   */
  on_behalf_of?: string
  /** What an update changed, `{<field>: [before, after]}` (see `audit-diff.ts`); absent otherwise. */
  diff?: AuditDiff
}

/** Receives every {@link Operation}. */
export type OperationListener = (operation: Operation) => void
