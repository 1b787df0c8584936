/**
 * The audit entry: one record per state change (docs/audit-and-webhooks.md), stored newest first in the
 * store's audit port and sent unchanged over the admin API, the event stream and webhooks.
 */

import type { AuditDiff } from './audit-diff.js'

/** One audit entry, with the field names of the wire format. */
export interface AuditEntry {
  /** UUID. */
  id: string
  /** ISO 8601 UTC with milliseconds. */
  timestamp: string
  /** Route key (`GET:/payments`), or a label such as `[Global Maintenance]`. */
  route: string
  service: string | null
  /** `enable`, `disable`, `maintenance_on`, `global_maintenance_on`, `rl_policy_set`, … */
  action: string
  /** Who acted; `system` for automatic transitions. */
  actor: string
  /** `cli`, `dashboard`, `sdk`, `api`, `scheduler`, `apply` (a configuration document), or empty. */
  platform: string
  reason: string
  previous_status: string | null
  new_status: string | null
  /**
   * Whom the actor acted for, as the actor reported it (e.g. the user of an SDK app whose token
   * is the actor); absent when the actor acted for itself.
   */
  on_behalf_of?: string
  /**
   * What an update changed: `{<field>: [before, after]}`, only the fields that differ, large
   * values cut (see `audit-diff.ts`); absent on entries that are not updates.
   */
  diff?: AuditDiff
}

/** Filter of an audit listing; every given field must match. */
export interface AuditFilter {
  /**
   * A route key (`GET:/payments`) matches entries of that method; a bare path (`/payments`)
   * matches every method of that path; a label (`[Global Maintenance]`) matches exactly.
   */
  route?: string
  service?: string
  /** An exact action, e.g. `disable`. */
  action?: string
  /** An exact actor, e.g. `admin`. */
  actor?: string
}

/** True when `entry` passes `filter` (the one definition every store uses). */
export function auditMatches(entry: AuditEntry, filter: AuditFilter): boolean {
  if (filter.service !== undefined && entry.service !== filter.service) return false
  if (filter.action !== undefined && entry.action !== filter.action) return false
  if (filter.actor !== undefined && entry.actor !== filter.actor) return false
  const route = filter.route
  if (route === undefined || entry.route === route) return true
  if (!route.startsWith('/')) return false
  const colon = entry.route.indexOf(':')
  return colon > 0 && entry.route.slice(colon + 1) === route
}
