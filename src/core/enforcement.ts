/**
 * Enforcement: the six checks, in this fixed order, as one readable pipeline.
 *
 *   1. global maintenance      2. service maintenance
 *   3. global rate limit       4. service rate limit
 *   5. route lifecycle state   6. route rate limit
 *
 * A rejection at one step ends processing, so later counters never move. Every step returns
 * a {@link Decision} value; nothing here throws for an expected outcome. Rate-limit steps are
 * delegated to a {@link RateLimitGate}, which counts them in one call and may answer
 * asynchronously (a Redis round trip); the pipeline stays synchronous whenever the gate does.
 */
import type { Clock } from './clock.js'
import { NOT_FOUND, PASS, type BlockDecision, type Decision, type Header } from './decision.js'
import { maintenanceBlocks, type CompiledMaintenance } from './maintenance.js'
import type { Replica } from './replica.js'
import type { RouteSlot } from './route-slot.js'
import { toIso } from './time.js'

/** Attributes an auth hook of the app sets on `request.state`. */
export interface RequestState {
  userId?: string | number | null
  userRoles?: readonly string[] | ReadonlySet<string> | null
  [attribute: string]: unknown
}

/** The framework-free view of a request that enforcement reads. */
export interface RequestView {
  readonly method: string
  /** The request URL (path and query); the path is echoed in blocked bodies. */
  readonly url: string
  readonly headers: Readonly<Record<string, string | string[] | undefined>>
  /** The socket peer address. */
  readonly ip: string
  readonly state?: RequestState
}

/** The rate-limit answer: a decision, or undefined when no limit applies. */
export type GateResult = Decision | undefined | Promise<Decision | undefined>

/**
 * The rate-limit steps of the pipeline (3, 4 and 6), filled by the rate-limiting module.
 *
 * One call checks and counts every applicable counter (one Redis round trip at most): global,
 * then service, then — when `routeOpen` — the route limit, counting each that allows and
 * stopping at the first that blocks, so a rejection leaves every later counter untouched.
 */
export interface RateLimitGate {
  /** False when no limit of any scope exists, so the pipeline can skip all three steps. */
  readonly active: boolean
  /**
   * Steps 3, 4 and 6. `routeOpen` is false when step 5 (route state) will reject the request:
   * the route limit is then not consulted, so a route in maintenance consumes no route quota.
   * Answers a 429 block, a pass carrying rate-limit headers, or undefined (nothing applied).
   */
  check(slot: RouteSlot, request: RequestView, routeOpen: boolean): GateResult
}

/** A gate that limits nothing (a pipeline without rate limiting). */
export const NO_RATE_LIMITS: RateLimitGate = {
  active: false,
  check: () => undefined,
}

/** Runs the pipeline against the replica. */
export class Enforcer {
  /**
   * `rateLimits`: steps 3, 4 and 6, given by the rate-limit feature when the engine is built
   * ({@link NO_RATE_LIMITS} for a pipeline without rate limiting).
   */
  constructor(
    private readonly replica: Replica,
    private readonly clock: Clock,
    private readonly rateLimits: RateLimitGate = NO_RATE_LIMITS,
  ) {}

  /** Decides one request to the route of `slot`. */
  decide(slot: RouteSlot, request: RequestView): Decision | Promise<Decision> {
    const maintenance =
      this.maintenanceStep(this.replica.global, 'global', slot, request) ??
      this.maintenanceStep(this.replica.serviceMaintenance(slot.service), 'service', slot, request)
    if (maintenance !== undefined) return maintenance
    // force_active: "bypasses all checks" once maintenance (with include_force_active) passed.
    if (slot.forceActive) return slot.passDecision
    if (!this.rateLimits.active) return this.routeStateStep(slot, request)
    return this.limitedSteps(slot, request)
  }

  /**
   * Steps 3–6. Step 5 reads only in-memory state, so it is decided first (without effects) and
   * the gate counts steps 3, 4 and (only when step 5 lets the request through) 6 in one call;
   * the answer is asynchronous only when the gate's is.
   */
  private limitedSteps(slot: RouteSlot, request: RequestView): Decision | Promise<Decision> {
    const state = this.routeStateStep(slot, request)
    const limited = this.rateLimits.check(slot, request, state.action === 'pass')
    if (limited instanceof Promise) return limited.then((result) => combine(result, state))
    return combine(limited, state)
  }

  /** Steps 1 and 2: global or service maintenance. */
  private maintenanceStep(
    maintenance: CompiledMaintenance,
    scope: 'global' | 'service',
    slot: RouteSlot,
    request: RequestView,
  ): BlockDecision | undefined {
    if (!maintenance.active) return undefined // the common case, without reading the clock
    const now = this.clock.now()
    if (!maintenanceBlocks(maintenance, slot.method, slot.path, slot.forceActive, now))
      return undefined
    const message =
      scope === 'global'
        ? 'The service is down for maintenance.'
        : `The ${slot.service} service is down for maintenance.`
    const end = maintenance.endsAt
    const timed = Number.isFinite(end)
    return block(
      503,
      'MAINTENANCE_MODE',
      message,
      {
        reason: maintenance.config.reason,
        path: requestPath(request),
        scope,
        ...(timed ? { retry_after: toIso(end) } : {}),
      },
      timed ? [['retry-after', retryAfterSeconds(end, now)]] : [],
    )
  }

  /** Step 5: the route's own lifecycle state. */
  private routeStateStep(slot: RouteSlot, request: RequestView): Decision {
    const state = slot.state
    switch (state.status) {
      case 'active':
      case 'deprecated':
        return slot.passDecision
      case 'env_gated':
        return slot.envAllowed ? PASS : NOT_FOUND
      case 'maintenance':
      case 'disabled': {
        const now = this.clock.now()
        const status = slot.statusAt(now)
        if (status === 'active') return PASS
        if (status === 'maintenance') {
          const end = slot.times.windowEnd
          const timed = Number.isFinite(end)
          return block(
            503,
            'MAINTENANCE_MODE',
            'This route is temporarily unavailable for maintenance.',
            {
              reason: state.reason,
              path: requestPath(request),
              ...(timed ? { retry_after: toIso(end) } : {}),
            },
            timed ? [['retry-after', retryAfterSeconds(end, now)]] : [],
          )
        }
        const until = slot.times.until
        const timed = Number.isFinite(until)
        return block(
          503,
          'ROUTE_DISABLED',
          'This route is disabled.',
          { reason: state.reason, path: requestPath(request) },
          timed ? [['retry-after', retryAfterSeconds(until, now)]] : [],
        )
      }
    }
  }
}

/**
 * Merges the rate-limit answer with step 5's: a 429 wins (its steps come first or the route
 * was open); otherwise the route-state decision stands, carrying the rate-limit headers of the
 * limits that counted the request (but never on the app's own not-found response).
 */
function combine(limited: Decision | undefined, state: Decision): Decision {
  if (limited === undefined) return state
  if (limited.action !== 'pass') return limited
  if (limited.headers === null) return state
  switch (state.action) {
    case 'pass':
      if (state.headers === null) return limited
      return { action: 'pass', headers: [...state.headers, ...limited.headers] }
    case 'block':
      return { ...state, headers: [...limited.headers, ...state.headers] }
    case 'not_found':
      return state
  }
}

function block(
  statusCode: number,
  code: string,
  message: string,
  members: Record<string, unknown>,
  headers: Header[] = [],
): BlockDecision {
  return { action: 'block', statusCode, body: { error: { code, message, ...members } }, headers }
}

/** Whole seconds until `deadline`, rounded up, never negative. */
function retryAfterSeconds(deadline: number, now: number): string {
  return String(Math.max(0, Math.ceil((deadline - now) / 1000)))
}

/** The path of the request URL, without its query string. */
function requestPath(request: RequestView): string {
  const query = request.url.indexOf('?')
  return query === -1 ? request.url : request.url.slice(0, query)
}
