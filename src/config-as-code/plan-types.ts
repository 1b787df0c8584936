/**
 * What a plan is made of: the changes it reports (`POST /api/config/plan`) and, for each, the
 * operation that makes it.
 */
import type { AuditDiff } from '../core/audit-diff.js'
import type { ActorOptions } from '../core/operations.js'

/** What a change does to its record. */
export type ChangeOp = 'create' | 'update' | 'delete'

/** The kinds of record a document manages. */
export type ChangeKind =
  | 'segment'
  | 'flag'
  | 'route_rate_limit'
  | 'service_rate_limit'
  | 'global_rate_limit'
  | 'route_state'
  | 'global_maintenance'
  | 'service_maintenance'

/**
 * One change of a plan: `key` is the flag or segment key, the route key (`GET:/orders`), the
 * service name (service policies and maintenance) or `global`; `service` is the service of a
 * route's change; `diff` of an update is `{<field>: [current, desired]}`.
 */
export interface ConfigChange {
  op: ChangeOp
  kind: ChangeKind
  key: string
  service?: string
  diff?: AuditDiff
}

/** A change and the operation (audited as usual) that makes it. */
export interface PlanStep {
  change: ConfigChange
  run(actor: ActorOptions): Promise<unknown>
}
