/**
 * The comparable forms of what a configuration document holds: the same function turns the
 * server's current record and the document's entry into one shape, so the plan compares like
 * with like and an export applied to the state it came from changes nothing.
 *
 * Why forms rather than the stored records: records carry bookkeeping (timestamps, `since`,
 * `created_by`) and fields the document does not manage (a policy's tiers, a route's
 * deprecation), and some fields mean nothing in some states (the reason of maintenance that is
 * off, the deadline of a route that is not disabled).
 */
import type { MaintenanceConfig } from '../core/maintenance.js'
import type { RouteState } from '../core/route-state.js'
import type { Flag, Segment } from '../flags/model.js'
import type { RateLimitPolicy, ScopeRateLimitPolicy } from '../rate-limit/policy.js'

/** A route's state as the document manages it. */
export interface RouteStateForm {
  status: 'active' | 'disabled' | 'maintenance'
  reason: string
  until: string | null
  window: { start: string | null; end: string | null } | null
}

/**
 * The form of a stored route state at `now`, or null for a status the document does not set
 * (`env_gated`, `deprecated`). A deadline or window that has passed is the `active` it stands
 * for, so an export never carries a time already gone.
 */
export function routeStateForm(state: RouteState, now: number): RouteStateForm | null {
  const expired =
    (state.status === 'disabled' && state.until !== null && Date.parse(state.until) <= now) ||
    (state.status === 'maintenance' &&
      state.window?.end != null &&
      Date.parse(state.window.end) <= now)
  if (expired) return { status: 'active', reason: '', until: null, window: null }
  if (state.status !== 'active' && state.status !== 'disabled' && state.status !== 'maintenance')
    return null
  return {
    status: state.status,
    reason: state.reason,
    until: state.status === 'disabled' ? state.until : null,
    window: state.status === 'maintenance' ? state.window : null,
  }
}

/** What a route's rate-limit entry sets. */
export interface RouteLimitForm {
  limit: string
  algorithm: string
  key_strategy: string
  on_missing_key: string | null
  burst: number
}

/** The form of a route policy (its tiers and exemptions are the decorator's business). */
export function routeLimitForm(policy: RateLimitPolicy): RouteLimitForm {
  return {
    limit: policy.limit,
    algorithm: policy.algorithm,
    key_strategy: policy.key_strategy,
    on_missing_key: policy.on_missing_key,
    burst: policy.burst,
  }
}

/** The form of a global or service policy: all of it. */
export function scopeLimitForm(policy: ScopeRateLimitPolicy): ScopeRateLimitPolicy {
  return {
    limit: policy.limit,
    algorithm: policy.algorithm,
    key_strategy: policy.key_strategy,
    on_missing_key: policy.on_missing_key,
    burst: policy.burst,
    exempt_routes: [...policy.exempt_routes].sort(),
    enabled: policy.enabled,
  }
}

/** A maintenance configuration as the document manages it. */
export type MaintenanceForm =
  | { active: true; reason: string; include_force_active: boolean; exempt_paths: string[] }
  | { active: false; exempt_paths: string[] }

/**
 * The form of a maintenance configuration. While it is off, only the exemptions are kept: the
 * reason and `include_force_active` of maintenance that is off have no effect, and setting
 * them would mean turning maintenance on.
 */
export function maintenanceForm(config: MaintenanceConfig): MaintenanceForm {
  const exempt = [...config.exempt_paths].sort()
  return config.active
    ? {
        active: true,
        reason: config.reason,
        include_force_active: config.include_force_active,
        exempt_paths: exempt,
      }
    : { active: false, exempt_paths: exempt }
}

/** True for maintenance that is off with no exemptions: what "no configuration" means. */
export function isEmptyMaintenance(form: MaintenanceForm): boolean {
  return !form.active && form.exempt_paths.length === 0
}

/** A flag as the document holds it. */
export type FlagForm = Omit<Flag, 'created_at' | 'updated_at' | 'created_by'>
/** A segment as the document holds it. */
export type SegmentForm = Omit<Segment, 'created_at' | 'updated_at'>

/** A flag without its bookkeeping (`created_at`, `updated_at`, `created_by`). */
export function flagForm(flag: Flag): FlagForm {
  const { created_at: _created, updated_at: _updated, created_by: _by, ...rest } = flag
  return rest
}

/** A segment without its timestamps. */
export function segmentForm(segment: Segment): SegmentForm {
  const { created_at: _created, updated_at: _updated, ...rest } = segment
  return rest
}
