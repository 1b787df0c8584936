/**
 * The rate-limiting service: the live policies of every scope, the gate the enforcement
 * pipeline calls, the counters and the blocked-request log, and the engine operations of the
 * spec's table. The engine owns one and exposes its operations; it is framework-free.
 *
 * Route policies come from two places: the decorator (the startup default, never stored) and
 * runtime overrides (stored, so they apply again after a restart). The override wins; deleting
 * it brings the decorator's policy back (spec rules 6 and 7).
 */
import { systemClock, type Clock } from '../core/clock.js'
import { ValidationError, toError } from '../core/errors.js'
import type { ActorOptions, Operation } from '../core/operations.js'
import type { RouteRegistry } from '../core/registry.js'
import { checkServiceName } from '../core/service-name.js'
import { formatRouteKey, parseMethod, parseRouteKey, validatePath } from '../core/route-key.js'
import type { RouteSlot } from '../core/route-slot.js'
import { ClientIpResolver, DEFAULT_IPV6_PREFIX, DEFAULT_TRUSTED_PROXIES } from './client-ip.js'
import { memoryCounters } from './counters/memory.js'
import type { CounterStore } from './counters/types.js'
import { LimitEvaluator, parseHeaderMode, type RateLimitHeaderMode } from './evaluate.js'
import type { RateLimitChangeEvent } from './events.js'
import type { RateLimitHit } from './exceeded.js'
import { PolicyGate } from './gate.js'
import type { KeyFunction } from './keys.js'
import {
  buildRoutePolicy,
  compileRoutePolicy,
  type RateLimitPolicy,
  type RoutePolicyOptions,
  type ScopePolicyOptions,
  type ScopeRateLimitPolicy,
} from './policy.js'
import {
  MemoryHitStore,
  MemoryPolicyStore,
  type RateLimitHitStore,
  type RateLimitPolicyStore,
} from './ports.js'
import { ScopeOperations } from './scope-operations.js'

/** Options of {@link RateLimitService}. */
export interface RateLimitServiceOptions {
  /** The engine's route registry: policies may only name registered routes. */
  registry: RouteRegistry
  /** Service of routes addressed without one (default `default`). */
  defaultService?: string
  clock?: Clock
  /** Counter backend (default: memory counters). */
  counters?: CounterStore
  /** Where runtime policies persist (default: memory). */
  policies?: RateLimitPolicyStore
  /** The blocked-request log (default: memory, `maxRlHitEntries` records). */
  hits?: RateLimitHitStore
  /** Capacity of the default blocked-request log (default 10 000). */
  maxRlHitEntries?: number
  /**
   * Proxies whose `X-Forwarded-For` / `X-Real-IP` are believed (default loopback + private);
   * the client is the rightmost `X-Forwarded-For` entry that is not one of them. Ignored when
   * the Fastify app sets its own `trustProxy` (then `request.ip` is the client).
   */
  trustedProxies?: readonly string[]
  /** Bits of an IPv6 client address that name one client for the `ip` key (default 64). */
  ipv6Prefix?: number
  /**
   * `all` (default, the spec): `X-RateLimit-*` on every counted response; `blocked`: only on
   * 429s, saving three headers per allowed response.
   */
  headers?: RateLimitHeaderMode
  /** Receives one operation per change (audit log, webhooks). */
  report?: (operation: Operation) => void
  /** Receives faults the service recovered from. */
  logError?: (message: string, error: Error) => void
}

/** Input of {@link RateLimitService.setRateLimitPolicy}. */
export interface SetRateLimitPolicyInput
  extends Omit<RoutePolicyOptions, 'keyStrategy'>, ActorOptions {
  path: string
  method: string
  service?: string
  keyStrategy?: Exclude<RoutePolicyOptions['keyStrategy'], KeyFunction>
}

/** Options addressing routes of a service, with the actor. */
export interface RouteAddressOptions extends ActorOptions {
  service?: string
}

interface DeclaredPolicy {
  policy: RateLimitPolicy
  keyFunction: KeyFunction | null
}

const routeId = (service: string, route: string) => `${service}\u0000${route}`

/** What {@link RateLimitService.onEvent} delivers: policy changes and blocked requests. */
export type RateLimitStreamEvent = RateLimitChangeEvent | { type: 'rl_hit'; hit: RateLimitHit }

/** Rate limiting of one engine: policies, counters, the blocked-request log and their operations. */
export class RateLimitService {
  /** The gate to install as `engine.enforcer.rateLimits`. */
  readonly gate: PolicyGate
  /** The trusted proxies in force (the admin apps resolve login addresses with the same list). */
  readonly trustedProxies: readonly string[]
  readonly counters: CounterStore
  private readonly registry: RouteRegistry
  private readonly defaultService: string
  private readonly policies: RateLimitPolicyStore
  private readonly hits: RateLimitHitStore
  private readonly report: (operation: Operation) => void
  private readonly logError: (message: string, error: Error) => void
  private readonly declared = new Map<string, DeclaredPolicy>()
  private readonly overrides = new Map<string, RateLimitPolicy>()
  private readonly scopes: ScopeOperations
  private readonly listeners = new Set<(event: RateLimitStreamEvent) => void>()

  constructor(options: RateLimitServiceOptions) {
    this.registry = options.registry
    this.defaultService = options.defaultService ?? 'default'
    this.counters = options.counters ?? memoryCounters()
    this.policies = options.policies ?? new MemoryPolicyStore()
    this.hits = options.hits ?? new MemoryHitStore(options.maxRlHitEntries ?? 10_000)
    this.report = options.report ?? (() => undefined)
    this.logError = options.logError ?? ((message, error) => console.error(message, error))
    const ips = new ClientIpResolver(
      options.trustedProxies ?? DEFAULT_TRUSTED_PROXIES,
      options.ipv6Prefix ?? DEFAULT_IPV6_PREFIX,
    )
    this.trustedProxies = ips.proxies.entries
    const headers = parseHeaderMode(options.headers)
    const evaluator = new LimitEvaluator(
      this.counters,
      ips,
      options.clock ?? systemClock,
      {
        blocked: (record) => {
          this.emit({ type: 'rl_hit', hit: record })
          this.hits.add(record).catch((error: unknown) => {
            this.logError('switchyard: could not record a blocked request', toError(error))
          })
        },
        fault: (error) => {
          this.logError('switchyard: rate-limit counters unavailable; request let through', error)
        },
      },
      headers,
    )
    this.gate = new PolicyGate(evaluator)
    this.scopes = new ScopeOperations({
      gate: this.gate,
      counters: this.counters,
      store: this.policies,
      report: (operation) => this.report(operation),
      changed: (event) => this.emit(event),
    })
  }

  /**
   * Subscribes to policy changes as they reach the live copy (this instance's writes, other
   * instances', reloads) and to blocked requests (`rl_hit`); returns the unsubscriber. The
   * admin event stream is built on it.
   */
  onEvent(listener: (event: RateLimitStreamEvent) => void): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  private emit(event: RateLimitStreamEvent): void {
    for (const listener of this.listeners) {
      try {
        listener(event)
      } catch (error) {
        this.logError('switchyard: rate-limit event listener failed', toError(error))
      }
    }
  }

  /** Loads stored policies (route overrides, global, services). Call at startup. */
  async load(): Promise<void> {
    const [routes] = await Promise.all([this.policies.listRoutePolicies(), this.scopes.load()])
    for (const id of [...this.overrides.keys()]) {
      const [service = '', route = ''] = id.split('\u0000')
      if (!routes.some((p) => p.service === service && formatRouteKey(p.method, p.path) === route))
        this.applyRoute(service, route, null)
    }
    for (const policy of routes)
      this.applyRoute(policy.service, formatRouteKey(policy.method, policy.path), policy)
  }

  /** Applies a change made by another instance (the store's change feed). */
  apply(event: RateLimitChangeEvent): void {
    switch (event.type) {
      case 'rl_policy':
        this.applyRoute(event.service, event.route, event.policy)
        return
      case 'global_rl_policy':
        this.scopes.apply({ kind: 'global' }, event.policy)
        return
      case 'service_rl_policy':
        this.scopes.apply({ kind: 'service', service: event.service }, event.policy)
    }
  }

  /**
   * Declares a decorator policy for a registered route (startup default, not stored).
   * Throws {@link ValidationError} on bad options.
   */
  declare(slot: RouteSlot, options: RoutePolicyOptions): RateLimitPolicy {
    const policy = buildRoutePolicy(slot.service, slot.method, slot.path, options)
    const keyFunction = typeof options.keyStrategy === 'function' ? options.keyStrategy : null
    const compiled = compileRoutePolicy(policy, keyFunction)
    const id = routeId(slot.service, slot.route)
    this.declared.set(id, { policy, keyFunction })
    if (!this.overrides.has(id)) this.gate.setRoute(slot.service, slot.route, compiled)
    return structuredClone(policy)
  }

  // ---- route policies ------------------------------------------------------------------

  /** Creates or replaces the runtime policy of one registered route (persisted). */
  async setRateLimitPolicy(input: SetRateLimitPolicyInput): Promise<RateLimitPolicy> {
    if (typeof (input as unknown) !== 'object' || (input as unknown) === null)
      throw new ValidationError('A rate-limit policy is required.')
    const service = this.serviceOf(input.service)
    const method = parseMethod(input.method)
    const path = validatePath(input.path)
    const policy = buildRoutePolicy(service, method, path, input)
    const [slot] = this.registry.resolve(service, { method, path })
    const route = formatRouteKey(method, path)
    const id = routeId(service, route)
    const declared = this.declared.get(id)
    if (policy.key_strategy === 'custom')
      throw new ValidationError(
        'Runtime policies are data: a custom key function can only be given to rateLimit().',
        { details: [{ field: 'key_strategy', message: 'expected ip, user, api_key or global' }] },
      )
    const previous = this.overrides.get(id) ?? declared?.policy
    await this.policies.putRoutePolicy(policy)
    this.applyRoute(service, route, policy)
    this.report({
      action: previous === undefined ? 'rl_policy_set' : 'rl_policy_updated',
      route: slot?.route ?? route,
      service,
      actor: input.actor ?? 'system',
      platform: input.platform ?? '',
      reason: '',
      previous_status: previous?.limit ?? null,
      new_status: policy.limit,
    })
    return structuredClone(policy)
  }

  /**
   * Removes the persisted override(s) of a route key (`METHOD:/path`, or a bare path for every
   * method). A decorator policy stays in force. Resolves the number of overrides removed.
   */
  async deleteRateLimitPolicy(route: string, options: RouteAddressOptions = {}): Promise<number> {
    const service = this.serviceOf(options.service)
    const key = parseRouteKey(route)
    const routes = [...this.overrides.values()]
      .filter((p) => p.service === service && p.path === key.path)
      .filter((p) => key.method === null || p.method === key.method)
      .map((p) => formatRouteKey(p.method, p.path))
    if (routes.length === 0) this.registry.resolve(service, key)
    for (const each of routes) {
      const previous = this.overrides.get(routeId(service, each))
      await this.policies.deleteRoutePolicy(service, each)
      this.applyRoute(service, each, null)
      const fallback = this.declared.get(routeId(service, each))?.policy
      this.report({
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

  /** Clears the counters of a registered route (every method for a bare path). */
  async resetRateLimit(
    path: string,
    options: RouteAddressOptions & { method?: string } = {},
  ): Promise<void> {
    const service = this.serviceOf(options.service)
    const key = {
      method: options.method === undefined ? null : parseMethod(options.method),
      path: validatePath(path),
    }
    const slots = this.registry.resolve(service, key)
    for (const slot of slots) await this.counters.reset(`route:${service}:${slot.route}`)
    this.report({
      action: 'rl_reset',
      route: key.method === null ? key.path : formatRouteKey(key.method, key.path),
      service,
      actor: options.actor ?? 'system',
      platform: options.platform ?? '',
      reason: '',
      previous_status: null,
      new_status: null,
    })
  }

  /** Blocked-request records, newest first; optionally of one route path, at most `limit`. */
  getRateLimitHits(options: { limit?: number; path?: string } = {}): Promise<RateLimitHit[]> {
    return rejecting(() => {
      if (
        options.limit !== undefined &&
        (!Number.isSafeInteger(options.limit) || options.limit < 1)
      )
        throw new ValidationError('Invalid limit: expected an integer ≥ 1.', {
          details: [{ field: 'limit', message: 'expected an integer ≥ 1' }],
        })
      if (options.path !== undefined) validatePath(options.path)
      return this.hits.list(options)
    })
  }

  /** Every route policy in force (override or decorator), optionally of one service. */
  listRateLimitPolicies(options: { service?: string } = {}): RateLimitPolicy[] {
    const ids = new Set([...this.declared.keys(), ...this.overrides.keys()])
    const found: RateLimitPolicy[] = []
    for (const id of ids) {
      const policy = this.overrides.get(id) ?? this.declared.get(id)?.policy
      if (
        policy !== undefined &&
        (options.service === undefined || policy.service === options.service)
      )
        found.push(structuredClone(policy))
    }
    return found.sort((a, b) =>
      a.path === b.path ? a.method.localeCompare(b.method) : a.path.localeCompare(b.path),
    )
  }

  // ---- global and service policies -----------------------------------------------------

  /** Creates or replaces the global policy. */
  setGlobalRateLimit(options: ScopePolicyOptions & ActorOptions): Promise<ScopeRateLimitPolicy> {
    return this.scopes.set({ kind: 'global' }, options)
  }
  /** The global policy, or null. */
  getGlobalRateLimit(): ScopeRateLimitPolicy | null {
    return this.scopes.get({ kind: 'global' })
  }
  /** Removes the global policy. */
  deleteGlobalRateLimit(options?: ActorOptions): Promise<boolean> {
    return this.scopes.delete({ kind: 'global' }, options)
  }
  /** Clears the global policy's counters. */
  resetGlobalRateLimit(options?: ActorOptions): Promise<void> {
    return this.scopes.reset({ kind: 'global' }, options)
  }
  /** Resumes a paused global policy. */
  enableGlobalRateLimit(options?: ActorOptions): Promise<ScopeRateLimitPolicy | null> {
    return this.scopes.setEnabled({ kind: 'global' }, true, options)
  }
  /** Pauses the global policy (kept, not enforced). */
  disableGlobalRateLimit(options?: ActorOptions): Promise<ScopeRateLimitPolicy | null> {
    return this.scopes.setEnabled({ kind: 'global' }, false, options)
  }
  /** Creates or replaces one service's policy. */
  setServiceRateLimit(
    service: string,
    options: ScopePolicyOptions & ActorOptions,
  ): Promise<ScopeRateLimitPolicy> {
    return rejecting(() => this.scopes.set(this.serviceScope(service), options))
  }
  /** One service's policy, or null. */
  getServiceRateLimit(service: string): ScopeRateLimitPolicy | null {
    return this.scopes.get(this.serviceScope(service))
  }
  /** Every per-service policy, by service. */
  listServiceRateLimits(): Map<string, ScopeRateLimitPolicy> {
    return this.scopes.listServices()
  }
  /** Removes one service's policy. */
  deleteServiceRateLimit(service: string, options?: ActorOptions): Promise<boolean> {
    return rejecting(() => this.scopes.delete(this.serviceScope(service), options))
  }
  /** Clears one service's counters. */
  resetServiceRateLimit(service: string, options?: ActorOptions): Promise<void> {
    return rejecting(() => this.scopes.reset(this.serviceScope(service), options))
  }
  /** Resumes one service's paused policy. */
  enableServiceRateLimit(
    service: string,
    options?: ActorOptions,
  ): Promise<ScopeRateLimitPolicy | null> {
    return rejecting(() => this.scopes.setEnabled(this.serviceScope(service), true, options))
  }
  /** Pauses one service's policy. */
  disableServiceRateLimit(
    service: string,
    options?: ActorOptions,
  ): Promise<ScopeRateLimitPolicy | null> {
    return rejecting(() => this.scopes.setEnabled(this.serviceScope(service), false, options))
  }

  /** Releases the counters' timers and connections. */
  close(): Promise<void> {
    return this.counters.close()
  }

  private applyRoute(service: string, route: string, policy: RateLimitPolicy | null): void {
    this.emit({ type: 'rl_policy', service, route, policy })
    const id = routeId(service, route)
    const declared = this.declared.get(id)
    if (policy === null) this.overrides.delete(id)
    else this.overrides.set(id, policy)
    const inForce = policy ?? declared?.policy ?? null
    try {
      this.gate.setRoute(
        service,
        route,
        inForce === null ? null : compileRoutePolicy(inForce, declared?.keyFunction ?? null),
      )
    } catch (error) {
      // A stored override that no longer compiles (e.g. custom key without its function) is
      // ignored rather than taking enforcement down; the declared policy applies.
      this.logError(`switchyard: ignoring rate-limit policy of ${route}`, toError(error))
      this.gate.setRoute(
        service,
        route,
        declared === undefined ? null : compileRoutePolicy(declared.policy, declared.keyFunction),
      )
    }
  }

  private serviceOf(service: string | undefined): string {
    if (service === undefined) return this.defaultService
    return this.serviceScope(service).service
  }

  private serviceScope(service: string): { kind: 'service'; service: string } {
    return { kind: 'service', service: checkServiceName(service) }
  }
}

/** Runs `operation`, turning a synchronous throw (validation) into a rejection. */
function rejecting<T>(operation: () => Promise<T>): Promise<T> {
  try {
    return operation()
  } catch (error) {
    return Promise.reject(toError(error))
  }
}
