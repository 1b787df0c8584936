/**
 * The rate-limiting service of an engine (`engine.rateLimits`): the live policies of every
 * scope, the gate the enforcement pipeline calls, the counters and the blocked-request log, and
 * their operations. Framework-free.
 *
 * Its backend (counters, policy store, hit log) is chosen from the options when it is first
 * needed — when the engine starts, or at the first counted request or policy write before
 * that — so options may still be given after the service exists (`configure`), e.g. by the
 * Fastify plugin registered after the admin app.
 */
import { systemClock, type Clock } from '../core/clock.js'
import { ConfigError, ValidationError, toError } from '../core/errors.js'
import type { ActorOptions, Operation } from '../core/operations.js'
import type { RouteRegistry } from '../core/registry.js'
import { formatRouteKey, parseMethod, parseRouteKey, validatePath } from '../core/route-key.js'
import type { RouteSlot } from '../core/route-slot.js'
import { checkServiceName } from '../core/service-name.js'
import { CircuitOpenError } from '../common/circuit-breaker.js'
import { inspectLimits, type RateLimitCheckInput, type RateLimitCheckResult } from './check.js'
import { stderrLogger, type Logger } from '../common/logger.js'
import { ApiKeyValidation, DEFAULT_API_KEY_VALIDATOR_TIMEOUT } from './api-key-validator.js'
import { ClientIpResolver, DEFAULT_IPV6_PREFIX, DEFAULT_TRUSTED_PROXIES } from './client-ip.js'
import type { CounterStore } from './counters/types.js'
import { LimitEvaluator, parseHeaderMode, type RateLimitHeaderMode } from './evaluate.js'
import type { RateLimitChangeEvent } from './events.js'
import type { HitQuery, RateLimitHit } from './exceeded.js'
import { PolicyGate } from './gate.js'
import { mergeRateLimitingOptions, type RateLimitingOptions } from './options.js'
import type { RateLimitPolicy, RoutePolicyOptions, ScopeRateLimitPolicy } from './policy.js'
import type { RateLimitHitStore, RateLimitPolicyStore } from './ports.js'
import { RoutePolicies, type SetRateLimitPolicyInput } from './route-policies.js'
import { ScopeOperations, scopeHandle, type RateLimitScopeHandle } from './scope-operations.js'

export type { SetRateLimitPolicyInput } from './route-policies.js'

/** The backend of rate limiting, fixed once chosen. */
export interface RateLimitBackend {
  readonly policies: RateLimitPolicyStore
  readonly hits: RateLimitHitStore
  /**
   * Makes the counters, once: when a request is first counted or counters are first reset, so
   * an engine that limits nothing opens no counter file, timer or connection.
   */
  makeCounters(): CounterStore
}

/** Options of {@link RateLimitService}. */
export interface RateLimitServiceOptions {
  /** The engine's route registry: policies may only name registered routes. */
  registry: RouteRegistry
  /** Service of routes addressed without one (default `default`). */
  defaultService?: string
  clock?: Clock
  /** The options given so far; more may follow through {@link RateLimitService.configure}. */
  options?: RateLimitingOptions
  /** Chooses the backend from the final options (the engine's feature does this). */
  backend: (options: RateLimitingOptions) => RateLimitBackend
  /** Receives one operation per change (audit log, webhooks). */
  report?: (operation: Operation) => void
  /**
   * Where faults the service recovered from are logged (also lent to counters that have no
   * logger of their own); default stderr.
   */
  logger?: Logger
}

/** Options addressing routes of a service, with the actor. */
export interface RouteAddressOptions extends ActorOptions {
  service?: string
}

/** What {@link RateLimitService.onEvent} delivers: policy changes and blocked requests. */
export type RateLimitStreamEvent = RateLimitChangeEvent | { type: 'rl_hit'; hit: RateLimitHit }

/** Rate limiting of one engine: policies, counters, the blocked-request log and their operations. */
export class RateLimitService {
  /** The enforcement pipeline's rate-limit steps (global, service and route limits). */
  readonly gate: PolicyGate
  /** The global policy's operations. */
  readonly global: RateLimitScopeHandle

  /** The trusted proxies in force (the admin apps resolve login addresses with the same list). */
  get trustedProxies(): readonly string[] {
    return this.ips.proxies.entries
  }
  private readonly registry: RouteRegistry
  private readonly defaultService: string
  private readonly clock: Clock
  private readonly chooseBackend: (options: RateLimitingOptions) => RateLimitBackend
  private readonly reportToEngine: (operation: Operation) => void
  private readonly logger: Logger
  private readonly logError: (message: string, error: Error) => void
  private readonly routes: RoutePolicies
  private readonly scopes: ScopeOperations
  private readonly listeners = new Set<(event: RateLimitStreamEvent) => void>()
  private options: RateLimitingOptions = {}
  private ips!: ClientIpResolver
  private headers!: RateLimitHeaderMode
  private backend: RateLimitBackend | null = null
  private counterStore: CounterStore | null = null

  constructor(options: RateLimitServiceOptions) {
    this.registry = options.registry
    this.defaultService = options.defaultService ?? 'default'
    this.clock = options.clock ?? systemClock
    this.chooseBackend = options.backend
    this.reportToEngine = options.report ?? (() => undefined)
    this.logger = options.logger ?? stderrLogger({ bindings: { module: 'switchyard' } })
    this.logError = (message, error) => this.logger.error({ err: error }, message)
    this.configure(options.options ?? {})
    this.gate = new PolicyGate(() => this.evaluator())
    const report = (operation: Operation) => this.report(operation)
    const changed = (event: RateLimitChangeEvent) => this.emit(event)
    this.routes = new RoutePolicies({
      registry: this.registry,
      gate: this.gate,
      store: () => this.parts().policies,
      report,
      changed,
      logError: this.logError,
    })
    this.scopes = new ScopeOperations({
      gate: this.gate,
      counters: () => this.counters(),
      store: () => this.parts().policies,
      report,
      changed,
    })
    this.global = scopeHandle(this.scopes, { kind: 'global' })
  }

  /**
   * Merges more options over those given so far. Allowed until the backend is chosen (the
   * engine starts, or a request is counted or a policy written before that); afterwards a
   * {@link ConfigError}, since counters and stores cannot be swapped under live traffic.
   * Invalid values are a {@link ConfigError} or {@link ValidationError} at once.
   */
  configure(options: RateLimitingOptions): void {
    if (this.backend !== null)
      throw new ConfigError(
        'Rate-limit options must be given before the engine starts: pass them to createEngine({ rateLimit }) or to the plugin registered before engine.start().',
      )
    const merged = mergeRateLimitingOptions(this.options, options)
    this.ips = new ClientIpResolver(
      merged.trustedProxies ?? DEFAULT_TRUSTED_PROXIES,
      merged.ipv6Prefix ?? DEFAULT_IPV6_PREFIX,
    )
    this.headers = parseHeaderMode(merged.headers)
    const capacity = merged.maxRlHitEntries
    if (capacity !== undefined && (!Number.isSafeInteger(capacity) || capacity < 1))
      throw new ConfigError('maxRlHitEntries must be an integer ≥ 1.')
    this.options = merged
  }

  /**
   * The backend, chosen from the options on first call; from then on {@link configure} is
   * refused. The engine calls it when it starts.
   */
  parts(): RateLimitBackend {
    this.backend ??= this.chooseBackend(this.options)
    return this.backend
  }

  private counters(): CounterStore {
    if (this.counterStore === null) {
      this.counterStore = this.parts().makeCounters()
      this.counterStore.attachLogger?.(this.logger)
    }
    return this.counterStore
  }

  private evaluator(): LimitEvaluator {
    const { hits } = this.parts()
    return new LimitEvaluator(
      this.counters(),
      this.ips,
      this.clock,
      {
        blocked: (record) => {
          this.emit({ type: 'rl_hit', hit: record })
          hits.add(record).catch((error: unknown) => {
            this.logError('could not record a blocked request', toError(error))
          })
        },
        fault: (error) => {
          // While the counters' circuit is open every request fails open the same way; the
          // counters reported the opening once.
          if (error instanceof CircuitOpenError) return
          this.logError('rate-limit counters unavailable; request let through', error)
        },
      },
      this.headers,
      this.options.apiKeyValidator === undefined
        ? null
        : new ApiKeyValidation(
            this.options.apiKeyValidator,
            this.options.apiKeyValidatorTimeout ?? DEFAULT_API_KEY_VALIDATOR_TIMEOUT,
            this.clock,
            (message, error) => this.logger.warn({ err: error }, message),
          ),
    )
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

  /**
   * Records a blocked request that happened in another process (an SDK app's report): stored in
   * the blocked-request log and announced as `rl_hit`, like one blocked here.
   */
  async recordHit(record: RateLimitHit): Promise<void> {
    await this.parts().hits.add(record)
    this.emit({ type: 'rl_hit', hit: record })
  }

  private emit(event: RateLimitStreamEvent): void {
    for (const listener of this.listeners) {
      try {
        listener(event)
      } catch (error) {
        this.logError('rate-limit event listener failed', toError(error))
      }
    }
  }

  private report(operation: Operation): void {
    this.reportToEngine(operation)
    this.options.report?.(operation)
  }

  /** Loads stored policies (route overrides, global, services). */
  async load(): Promise<void> {
    await Promise.all([this.routes.load(), this.scopes.load()])
  }

  /** Applies a change made by another instance (the store's change feed). */
  apply(event: RateLimitChangeEvent): void {
    switch (event.type) {
      case 'rl_policy':
        this.routes.apply(event.service, event.route, event.policy)
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
    return this.routes.declare(slot, options)
  }

  /** One service's policy operations; throws {@link ValidationError} for a missing name. */
  service(name: string): RateLimitScopeHandle {
    return scopeHandle(this.scopes, this.serviceScope(name))
  }

  /** Every per-service policy, by service. */
  listServiceRateLimits(): Map<string, ScopeRateLimitPolicy> {
    return this.scopes.listServices()
  }

  // ---- checks ------------------------------------------------------------------------------

  /**
   * What the limits of a route would answer the caller of `request` now, counting nothing:
   * the deciding limit (the first that blocks, else the one with the fewest requests left),
   * `remaining` being the requests the caller may still make. Null when no limit applies to
   * that caller. Unknown route: {@link RouteNotFoundError}; bad input: {@link ValidationError}.
   *
   * @example
   * const quota = await engine.rateLimits.check({ route: 'POST:/search', request })
   */
  check(input: RateLimitCheckInput): Promise<RateLimitCheckResult | null> {
    return rejecting(() => this.inspect(input, false))
  }

  /**
   * Counts one request of the caller of `request` against the limits of a route, as
   * enforcement would (each allowed limit counts, the first that blocks stops), and answers
   * like {@link check} with the state after it. Nothing is logged as blocked: the
   * blocked-request log holds the requests switchyard refused.
   */
  consume(input: RateLimitCheckInput): Promise<RateLimitCheckResult | null> {
    return rejecting(() => this.inspect(input, true))
  }

  private inspect(
    input: RateLimitCheckInput,
    counting: boolean,
  ): Promise<RateLimitCheckResult | null> {
    if (typeof (input as unknown) !== 'object' || (input as unknown) === null)
      throw new ValidationError('Expected { route, request }.')
    const key = parseRouteKey(input.route)
    if (key.method === null)
      throw new ValidationError(
        `Name one method of the route: "GET:${key.path}", not ${JSON.stringify(key.path)}.`,
        { details: [{ field: 'route', message: 'expected METHOD:/path' }] },
      )
    // Untyped (JavaScript) callers may pass anything.
    const request = input.request as unknown
    if (
      typeof request !== 'object' ||
      request === null ||
      typeof (request as { headers?: unknown }).headers !== 'object' ||
      (request as { headers?: unknown }).headers === null ||
      typeof (request as { ip?: unknown }).ip !== 'string'
    )
      throw new ValidationError(
        'request must be the incoming request (an object with headers and ip; a Fastify request fits).',
        { details: [{ field: 'request', message: 'expected a request with headers and ip' }] },
      )
    const slot = this.registry.resolve(this.serviceOf(input.service), key)[0] as RouteSlot
    const policies = this.gate.policiesFor(slot)
    if (policies.length === 0) return Promise.resolve(null)
    return inspectLimits({
      evaluator: this.gate.limiter,
      counters: this.counters(),
      policies,
      slot,
      request: input.request,
      now: this.clock.now(),
      counting,
    })
  }

  // ---- route policies ------------------------------------------------------------------

  /** Creates or replaces the runtime policy of one registered route (persisted). */
  setRateLimitPolicy(input: SetRateLimitPolicyInput): Promise<RateLimitPolicy> {
    return rejecting(() => {
      if (typeof (input as unknown) !== 'object' || (input as unknown) === null)
        throw new ValidationError('A rate-limit policy is required.')
      return this.routes.set(this.serviceOf(input.service), input)
    })
  }

  /**
   * Removes the persisted override(s) of a route key (`METHOD:/path`, or a bare path for every
   * method). A decorator policy stays in force. Resolves the number of overrides removed.
   */
  deleteRateLimitPolicy(route: string, options: RouteAddressOptions = {}): Promise<number> {
    return rejecting(() => this.routes.delete(this.serviceOf(options.service), route, options))
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
    const counters = this.counters()
    for (const slot of slots) await counters.reset(`route:${service}:${slot.route}`)
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

  /** Blocked-request records, newest first; optionally of one route path and/or service, at most `limit`. */
  getRateLimitHits(options: HitQuery = {}): Promise<RateLimitHit[]> {
    return rejecting(() => {
      if (
        options.limit !== undefined &&
        (!Number.isSafeInteger(options.limit) || options.limit < 1)
      )
        throw new ValidationError('Invalid limit: expected an integer ≥ 1.', {
          details: [{ field: 'limit', message: 'expected an integer ≥ 1' }],
        })
      if (options.path !== undefined) validatePath(options.path)
      if (options.service !== undefined) checkServiceName(options.service)
      return this.parts().hits.list(options)
    })
  }

  /** Every route policy in force (override or decorator), optionally of one service. */
  listRateLimitPolicies(options: { service?: string } = {}): RateLimitPolicy[] {
    return this.routes.list(options.service)
  }

  /**
   * The runtime route policies alone (what `setRateLimitPolicy` stored, not the decorators'),
   * optionally of one service: what a configuration export carries.
   */
  listRateLimitOverrides(options: { service?: string } = {}): RateLimitPolicy[] {
    return this.routes.listOverrides(options.service)
  }

  /** Releases the counters' timers and connections (when counters were made). */
  async close(): Promise<void> {
    await this.counterStore?.close()
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
export function rejecting<T>(operation: () => Promise<T>): Promise<T> {
  try {
    return operation()
  } catch (error) {
    return Promise.reject(toError(error))
  }
}
