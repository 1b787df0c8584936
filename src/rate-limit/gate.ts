/**
 * The rate-limit gate of the enforcement pipeline: the compiled global, per-service and
 * per-route policies, and the lookup of which of them apply to a route. The route lookup is
 * memoised per route slot (cleared on any policy change), so a request pays one WeakMap read.
 */
import type { GateResult, RateLimitGate, RequestView } from '../core/enforcement.js'
import type { RouteSlot } from '../core/route-slot.js'
import type { LimitEvaluator } from './evaluate.js'
import type { CompiledPolicy } from './policy.js'

const routeKey = (service: string, route: string) => `${service}\u0000${route}`

/** The live compiled policies, and the gate that enforces them. */
export class PolicyGate implements RateLimitGate {
  private globalPolicy: CompiledPolicy | null = null
  private readonly services = new Map<string, CompiledPolicy>()
  private readonly routes = new Map<string, CompiledPolicy>()
  private bySlot = new WeakMap<RouteSlot, readonly CompiledPolicy[]>()
  private count = 0
  private evaluator: LimitEvaluator | null = null

  /** `makeEvaluator` is called at the first check: the counters are chosen at startup. */
  constructor(private readonly makeEvaluator: () => LimitEvaluator) {}

  get active(): boolean {
    return this.count > 0
  }

  check(slot: RouteSlot, request: RequestView, routeOpen: boolean): GateResult {
    const policies = this.policiesFor(slot)
    if (policies.length === 0) return undefined
    const evaluator = this.limiter
    if (!routeOpen) {
      // Step 5 will reject the request: the route's own limit (step 6) is never consulted.
      const last = policies[policies.length - 1]
      if (last?.scope.startsWith('route:') === true) {
        if (policies.length === 1) return undefined
        return evaluator.evaluate(policies.slice(0, -1), slot, request)
      }
    }
    return evaluator.evaluate(policies, slot, request)
  }

  /** Replaces (or removes, with null) the global policy. */
  setGlobal(policy: CompiledPolicy | null): void {
    this.globalPolicy = policy
    this.changed()
  }

  /** Replaces (or removes) one service's policy. */
  setService(service: string, policy: CompiledPolicy | null): void {
    if (policy === null) this.services.delete(service)
    else this.services.set(service, policy)
    this.changed()
  }

  /** Replaces (or removes) the policy in force for one route. */
  setRoute(service: string, route: string, policy: CompiledPolicy | null): void {
    if (policy === null) this.routes.delete(routeKey(service, route))
    else this.routes.set(routeKey(service, route), policy)
    this.changed()
  }

  /** The evaluator, made on first use (the counters are chosen then). */
  get limiter(): LimitEvaluator {
    return (this.evaluator ??= this.makeEvaluator())
  }

  /** The enabled policies that apply to a route, in enforcement order (global, service, route). */
  policiesFor(slot: RouteSlot): readonly CompiledPolicy[] {
    let policies = this.bySlot.get(slot)
    if (policies === undefined) {
      policies = this.collect(slot)
      this.bySlot.set(slot, policies)
    }
    return policies
  }

  /** The policies that apply to a route, in enforcement order (global, service, route). */
  private collect(slot: RouteSlot): readonly CompiledPolicy[] {
    const found: CompiledPolicy[] = []
    for (const policy of [this.globalPolicy, this.services.get(slot.service) ?? null]) {
      if (policy === null || !policy.enabled) continue
      if (policy.exemptRoutes?.matches(slot.method, slot.path) === true) continue
      found.push(policy)
    }
    const route = this.routes.get(routeKey(slot.service, slot.route))
    if (route !== undefined) found.push(route)
    return found
  }

  private changed(): void {
    this.bySlot = new WeakMap()
    this.count = (this.globalPolicy === null ? 0 : 1) + this.services.size + this.routes.size
  }
}
