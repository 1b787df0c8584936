/**
 * Route states: the record stored and sent on the wire ({@link RouteState}, snake_case as on
 * the wire), the declarations decorators make, and the time-aware "effective status".
 *
 * Why effective status is computed, not only stored: a maintenance window or a `disable --until`
 * deadline must hold at the exact instant it passes, on every instance, even if the scheduler
 * that persists the transition runs a moment later (or the process was down). The stored record
 * says what was asked for; {@link effectiveStatus} says what applies now.
 */
import type { HttpMethod } from './route-key.js'

/** Lifecycle status of a route, lower case as on the wire. */
export type RouteStatus = 'active' | 'maintenance' | 'disabled' | 'env_gated' | 'deprecated'

/** Every {@link RouteStatus}. */
export const ROUTE_STATUSES: readonly RouteStatus[] = [
  'active',
  'maintenance',
  'disabled',
  'env_gated',
  'deprecated',
]

/** A maintenance window; `start` null means "already started", `end` null "open-ended". */
export interface MaintenanceWindow {
  start: string | null
  end: string | null
}

/** The state of one method of one route, as stored and as returned by the admin API. */
export interface RouteState {
  /** Canonical key, `GET:/items/:id`. */
  route: string
  method: HttpMethod
  path: string
  service: string
  /** Stored status; see {@link effectiveStatus} for what applies at a given time. */
  status: RouteStatus
  reason: string
  /** ISO time of the last change, or `startup` for a declared state. */
  since: string
  window: MaintenanceWindow | null
  /** ISO deadline of a `disable --until`; the route is re-enabled then. */
  until: string | null
  /** Environments an `env_gated` route is served in. */
  envs: string[]
  force_active: boolean
  /** HTTP-date of the sunset of a deprecated route. */
  sunset: string | null
  use_instead: string | null
  /** ISO date the deprecation took effect (`Deprecation: @<epoch>`), when declared. */
  deprecated_since: string | null
}

/** What a lifecycle decorator declares; the startup default of the route's state. */
export type RouteDeclaration =
  | { kind: 'maintenance'; reason: string; start: string | null; end: string | null }
  | { kind: 'disabled'; reason: string }
  | { kind: 'env_only'; envs: string[] }
  | { kind: 'deprecated'; sunset: string | null; useInstead: string | null; since: string | null }
  | { kind: 'force_active' }

/** Identity of a registered route. */
export interface RouteIdentity {
  route: string
  method: HttpMethod
  path: string
  service: string
}

/** Builds the startup state of a route from its declaration (or `active` without one). */
export function declaredState(id: RouteIdentity, declaration: RouteDeclaration | null): RouteState {
  const base: RouteState = {
    ...id,
    status: 'active',
    reason: '',
    since: 'startup',
    window: null,
    until: null,
    envs: [],
    force_active: false,
    sunset: null,
    use_instead: null,
    deprecated_since: null,
  }
  switch (declaration?.kind) {
    case undefined:
      return base
    case 'maintenance':
      return {
        ...base,
        status: 'maintenance',
        reason: declaration.reason,
        window:
          declaration.start !== null || declaration.end !== null
            ? { start: declaration.start, end: declaration.end }
            : null,
      }
    case 'disabled':
      return { ...base, status: 'disabled', reason: declaration.reason }
    case 'env_only':
      return { ...base, status: 'env_gated', envs: [...declaration.envs] }
    case 'deprecated':
      return {
        ...base,
        status: 'deprecated',
        sunset: declaration.sunset,
        use_instead: declaration.useInstead,
        deprecated_since: declaration.since,
      }
    case 'force_active':
      return { ...base, force_active: true }
  }
}

/** Epoch-ms view of the time fields of a state (`±Infinity` when absent). */
export interface StateTimes {
  windowStart: number
  windowEnd: number
  until: number
}

/** Parses the ISO fields of a state once, so per-request checks compare numbers. */
export function stateTimes(state: RouteState): StateTimes {
  const window = state.window
  return {
    windowStart: window?.start ? Date.parse(window.start) : Number.NEGATIVE_INFINITY,
    windowEnd: window?.end ? Date.parse(window.end) : Number.POSITIVE_INFINITY,
    until: state.until ? Date.parse(state.until) : Number.POSITIVE_INFINITY,
  }
}

/**
 * The status that applies at `now`: a maintenance window is `active` before its start and
 * after its end; a disabled route is `active` from its `until` deadline on.
 */
export function effectiveStatus(state: RouteState, times: StateTimes, now: number): RouteStatus {
  if (state.status === 'maintenance' && state.window !== null) {
    return now >= times.windowStart && now < times.windowEnd ? 'maintenance' : 'active'
  }
  if (state.status === 'disabled' && now >= times.until) return 'active'
  return state.status
}

/** The state with its status replaced by the effective one at `now` (what the API shows). */
export function viewState(state: RouteState, now: number): RouteState {
  const status = effectiveStatus(state, stateTimes(state), now)
  return status === state.status ? state : { ...state, status }
}
