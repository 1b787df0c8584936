/**
 * Route policies: the live copy of every route's policy and its operations.
 *
 * A route's policy comes from two places: the decorator (the startup default, never stored)
 * and a runtime override (stored, so it applies again after a restart). The override wins;
 * deleting it brings the decorator's policy back. Only registered routes may have one.
 */
import { toError, ValidationError } from '../core/errors.js'
import type { ActorOptions, Operation } from '../core/operations.js'
import type { RouteRegistry } from '../core/registry.js'
import { formatRouteKey, parseMethod, parseRouteKey, validatePath } from '../core/route-key.js'
import type { RouteSlot } from '../core/route-slot.js'
import type { RateLimitChangeEvent } from './events.js'
import type { PolicyGate } from './gate.js'
import type { KeyFunction } from './keys.js'
import {
  buildRoutePolicy,
  compileRoutePolicy,
  type RateLimitPolicy,
  type RoutePolicyOptions,
} from './policy.js'
import type { RateLimitPolicyStore } from './ports.js'
import { auditDiff, diffField } from '../core/audit-diff.js'

/** Input of {@link RoutePolicies.set} (`setRateLimitPolicy`). */
export interface SetRateLimitPolicyInput
  extends Omit<RoutePolicyOptions, 'keyStrategy'>, ActorOptions {
  path: string
  method: string
  service?: string
  keyStrategy?: Exclude<RoutePolicyOptions['keyStrategy'], KeyFunction>
}

/** What the route policies need. */
export interface RoutePolicyDeps {
  registry: RouteRegistry
  gate: PolicyGate
  /** Where overrides persist (resolved when first needed: the store is chosen at startup). */
  store(): RateLimitPolicyStore
  report(operation: Operation): void
  /** Told of every policy applied to the live copy (own writes, other instances', loads). */
  changed(event: RateLimitChangeEvent): void
  /** Receives a stored override that no longer compiles (it is ignored). */
  logError(message: string, error: Error): void
}

interface DeclaredPolicy {
  policy: RateLimitPolicy
  keyFunction: KeyFunction | null
}

const routeId = (service: string, route: string) => `${service}\u0000${route}`

/** Decorator policies and runtime overrides of routes. */
export class RoutePolicies {
  private readonly declared = new Map<string, DeclaredPolicy>()
  private readonly overrides = new Map<string, RateLimitPolicy>()

  constructor(private readonly deps: RoutePolicyDeps) {}

  /** Declares a decorator policy for a registered route (startup default, not stored). */
  declare(slot: RouteSlot, options: RoutePolicyOptions): RateLimitPolicy {
    const policy = buildRoutePolicy(slot.service, slot.method, slot.path, options)
    const keyFunction = typeof options.keyStrategy === 'function' ? options.keyStrategy : null
    const compiled = compileRoutePolicy(policy, keyFunction)
    const id = routeId(slot.service, slot.route)
    this.declared.set(id, { policy, keyFunction })
    if (!this.overrides.has(id)) this.deps.gate.setRoute(slot.service, slot.route, compiled)
    return structuredClone(policy)
  }

  /** Creates or replaces the runtime policy of one registered route of `service` (persisted). */
  async set(service: string, input: SetRateLimitPolicyInput): Promise<RateLimitPolicy> {
    const method = parseMethod(input.method)
    const path = validatePath(input.path)
    const policy = buildRoutePolicy(service, method, path, input)
    const [slot] = this.deps.registry.resolve(service, { method, path })
    const route = formatRouteKey(method, path)
    const id = routeId(service, route)
    if (policy.key_strategy === 'custom')
      throw new ValidationError(
        'Runtime policies are data: a custom key function can only be given to rateLimit().',
        { details: [{ field: 'key_strategy', message: 'expected ip, user, api_key or global' }] },
      )
    const previous = this.overrides.get(id) ?? this.declared.get(id)?.policy
    const store = this.deps.store()
    await store.putRoutePolicy(policy)
    if (store.appliedByFeed === true) return structuredClone(policy)
    this.apply(service, route, policy)
    this.deps.report({
      action: previous === undefined ? 'rl_policy_set' : 'rl_policy_updated',
      route: slot?.route ?? route,
      service,
      actor: input.actor ?? 'system',
      platform: input.platform ?? '',
      reason: '',
      previous_status: previous?.limit ?? null,
      new_status: policy.limit,
      ...(previous === undefined ? {} : diffField(auditDiff(previous, policy))),
    })
    return structuredClone(policy)
  }

  /**
   * Removes the persisted override(s) of a route key of `service` (`METHOD:/path`, or a bare
   * path for every method). A decorator policy stays in force. Resolves the number removed.
   */
  async delete(service: string, route: string, options: ActorOptions): Promise<number> {
    const key = parseRouteKey(route)
    const routes = [...this.overrides.values()]
      .filter((p) => p.service === service && p.path === key.path)
      .filter((p) => key.method === null || p.method === key.method)
      .map((p) => formatRouteKey(p.method, p.path))
    if (routes.length === 0) this.deps.registry.resolve(service, key)
    for (const each of routes) {
      const previous = this.overrides.get(routeId(service, each))
      const store = this.deps.store()
      await store.deleteRoutePolicy(service, each)
      if (store.appliedByFeed === true) continue
      this.apply(service, each, null)
      const fallback = this.declared.get(routeId(service, each))?.policy
      this.deps.report({
        action: 'rl_policy_deleted',
        route: each,
        service,
        actor: options.actor ?? 'system',
        platform: options.platform ?? '',
        reason: '',
        previous_status: previous?.limit ?? null,
        new_status: fallback?.limit ?? null,
      })
    }
    return routes.length
  }

  /** Every route policy in force (override or decorator), optionally of one service. */
  list(service?: string): RateLimitPolicy[] {
    const ids = new Set([...this.declared.keys(), ...this.overrides.keys()])
    const found: RateLimitPolicy[] = []
    for (const id of ids) {
      const policy = this.overrides.get(id) ?? this.declared.get(id)?.policy
      if (policy !== undefined && (service === undefined || policy.service === service))
        found.push(structuredClone(policy))
    }
    return found.sort((a, b) =>
      a.path === b.path ? a.method.localeCompare(b.method) : a.path.localeCompare(b.path),
    )
  }

  /** The runtime overrides alone (no decorator policy), optionally of one service. */
  listOverrides(service?: string): RateLimitPolicy[] {
    return [...this.overrides.values()]
      .filter((policy) => service === undefined || policy.service === service)
      .map((policy) => structuredClone(policy))
  }

  /** Replaces every override with the stored ones. */
  async load(): Promise<void> {
    const routes = await this.deps.store().listRoutePolicies()
    for (const id of [...this.overrides.keys()]) {
      const [service = '', route = ''] = id.split('\u0000')
      if (!routes.some((p) => p.service === service && formatRouteKey(p.method, p.path) === route))
        this.apply(service, route, null)
    }
    for (const policy of routes)
      this.apply(policy.service, formatRouteKey(policy.method, policy.path), policy)
  }

  /** Applies an override (or its removal, with null) to the live copy and the gate. */
  apply(service: string, route: string, policy: RateLimitPolicy | null): void {
    const id = routeId(service, route)
    const declared = this.declared.get(id)
    if (policy === null) this.overrides.delete(id)
    else this.overrides.set(id, policy)
    const inForce = policy ?? declared?.policy ?? null
    try {
      this.deps.gate.setRoute(
        service,
        route,
        inForce === null ? null : compileRoutePolicy(inForce, declared?.keyFunction ?? null),
      )
    } catch (error) {
      // A stored override that no longer compiles (e.g. custom key without its function) is
      // ignored rather than taking enforcement down; the declared policy applies.
      this.deps.logError(`ignoring rate-limit policy of ${route}`, toError(error))
      this.deps.gate.setRoute(
        service,
        route,
        declared === undefined ? null : compileRoutePolicy(declared.policy, declared.keyFunction),
      )
    }
    // After the gate: a listener (an SDK app's propagation probe, a test) sees it enforced.
    this.deps.changed({ type: 'rl_policy', service, route, policy })
  }
}
