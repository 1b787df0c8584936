/**
 * A route slot: the live, precompiled state of one registered route (one method of one path).
 *
 * The Fastify adapter binds each route's hook to its slot at registration, so a request
 * reaches its state with no lookup at all; the replica recompiles a slot when its state
 * changes. Everything a request needs is precomputed here: the deprecation headers, the
 * times of a window as numbers, whether the current environment is allowed.
 */
import { PASS, type Header, type PassDecision } from './decision.js'
import type { HttpMethod } from './route-key.js'
import {
  declaredState,
  effectiveStatus,
  stateTimes,
  type RouteDeclaration,
  type RouteIdentity,
  type RouteState,
  type RouteStatus,
  type StateTimes,
} from './route-state.js'

/** The live state of one registered route. */
export class RouteSlot {
  readonly route: string
  readonly method: HttpMethod
  readonly path: string
  readonly service: string
  /** The state the decorator declared: the startup default. */
  readonly declared: RouteState
  /** The runtime override from the store, if any. */
  override: RouteState | null = null
  /** `override ?? declared`. */
  state: RouteState
  times: StateTimes
  forceActive: boolean
  /** Whether the engine's environment is one of the route's `envs` (env-gated routes). */
  envAllowed: boolean
  /** The decision of a passing request: {@link PASS}, or one carrying the deprecation headers. */
  passDecision: PassDecision

  constructor(
    id: RouteIdentity,
    readonly declaration: RouteDeclaration | null,
    private readonly env: string,
  ) {
    this.route = id.route
    this.method = id.method
    this.path = id.path
    this.service = id.service
    this.declared = declaredState(id, declaration)
    this.state = this.declared
    this.times = stateTimes(this.state)
    this.forceActive = this.state.force_active
    this.envAllowed = true
    this.passDecision = PASS
    this.compile()
  }

  /** Replaces the runtime override (null = back to the declared state) and recompiles. */
  setOverride(override: RouteState | null): void {
    this.override = override
    this.state = override ?? this.declared
    this.compile()
  }

  /** The status that applies at `now`. */
  statusAt(now: number): RouteStatus {
    return effectiveStatus(this.state, this.times, now)
  }

  private compile(): void {
    const state = this.state
    this.times = stateTimes(state)
    this.forceActive = state.force_active
    this.envAllowed = state.status !== 'env_gated' || state.envs.includes(this.env)
    this.passDecision =
      state.status === 'deprecated' ? { action: 'pass', headers: deprecationHeaders(state) } : PASS
  }
}

/** `Deprecation` (RFC 9745), `Sunset` (RFC 8594) and `Link rel="successor-version"` headers. */
export function deprecationHeaders(state: RouteState): Header[] {
  const headers: Header[] = []
  const since = state.deprecated_since ? Date.parse(state.deprecated_since) : Number.NaN
  headers.push(['deprecation', Number.isNaN(since) ? 'true' : `@${Math.floor(since / 1000)}`])
  if (state.sunset) headers.push(['sunset', state.sunset])
  if (state.use_instead) headers.push(['link', `<${state.use_instead}>; rel="successor-version"`])
  return headers
}
