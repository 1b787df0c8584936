/**
 * The engine: the one object an application talks to. It is built from the kernel of route
 * control — the route registry, the live replica of the store, the enforcement pipeline, the
 * route and maintenance operations, the audit log, the webhooks and the scheduler — and from
 * its features (feature flags, rate limiting), each a module with its own store, loader,
 * change events and, for rate limiting, its step of the pipeline (see `feature.ts`).
 *
 * The engine owns their lifecycle: it creates them in its constructor, loads them once the
 * store is reachable (and again after every resync), runs their timed work on its scheduler
 * and closes them before the store. Its parts are wired in `engine-kernel.ts`, its flat
 * operations live in `engine-operations.ts`.
 *
 * Create one with `createEngine()` (`src/create-engine.ts`), which picks the store by backend
 * name and supplies the features: core itself never loads a backend or a feature module.
 */
// Type-only: the provider module (and its optional peer dependency) loads on useOpenFeature().
import type { SwitchyardProvider, UseOpenFeatureOptions } from '../flags/openfeature.js'
import type { FlagService } from '../flags/service.js'
import type { RateLimitService } from '../rate-limit/service.js'
import { LoggerSlot, type Logger, type LoggerLike } from '../common/logger.js'
import type { ChangeListener } from './events.js'
import type {
  ApiTokenStore,
  EvaluationKeyStore,
  StoreBackend,
  TokenStore,
} from '../stores/types.js'
import type { AuditEntry } from './audit-entry.js'
import type { AuditLog, AuditLogQuery } from './audit-log.js'
import { systemClock, type Clock } from './clock.js'
import { readEnvironment } from './config.js'
import type { Decision } from './decision.js'
import type { Enforcer, RequestView } from './enforcement.js'
import { buildKernel, type EngineKernel } from './engine-kernel.js'
import { EngineOperations } from './engine-operations.js'
import { defaultEngineLogger, type EngineOptions, type EngineParts } from './engine-options.js'
import { toError } from './errors.js'
import type { CompiledMaintenance } from './maintenance.js'
import type { MaintenanceScopes } from './maintenance-scopes.js'
import type { Operation, OperationListener } from './operations.js'
import type { Page } from './pagination.js'
import { parseMethod, validatePath } from './route-key.js'
import { checkService, type RouteOperations } from './route-operations.js'
import type { RouteDeclaration, RouteState } from './route-state.js'
import type { RouteSlot } from './route-slot.js'
import type { StoreFailureListener } from './replica.js'
import type { WebhookOptions } from './webhooks.js'
import { totalIgnored, type IgnoredChannel } from '../common/ignored-messages.js'

export type { EngineLogger } from './feature.js'
export type { EngineOptions, EngineParts } from './engine-options.js'

/** The route-control engine. Create it with `createEngine()`. */
export class Engine extends EngineOperations {
  /** Environment name (env gating). */
  readonly env: string
  /** This application's service name. */
  readonly service: string
  /** The store's backend name, as `CTL_BACKEND` spells it (`memory`, `file`, `redis`). */
  readonly backend: string
  readonly clock: Clock
  /**
   * Where the engine, its store and its features log: the `logger` option, else the default
   * (JSON lines on stderr) until {@link Engine.attachLogger} hands it an app's logger.
   */
  readonly logger: Logger
  private readonly loggerSlot: LoggerSlot
  /** The audit log of every change made through this engine. */
  readonly audit: AuditLog
  readonly maintenance: MaintenanceScopes
  readonly rateLimits: RateLimitService
  /**
   * Feature flags and segments (docs/feature-flags.md), kept in the same backend as the rest of
   * the engine's state. `flags.onChange` is the hook for flag and segment changes (local or
   * replicated); `flags.sync` the synchronous client; `flags.stream` the evaluation stream.
   */
  readonly flags: FlagService
  protected readonly routes: RouteOperations
  /** The wired parts (`engine-kernel.ts`). */
  private readonly kernel: EngineKernel
  /** Held apart from the kernel: it runs on every request. */
  private readonly enforcer: Enforcer
  private readonly operationListeners = new Set<OperationListener>()
  private started: Promise<void> | null = null
  private closing: Promise<void> | null = null
  /** True while start() waits for the first load: it then also waits for the features. */
  private starting = false
  private featuresLoading: Promise<void> | null = null

  constructor(options: EngineOptions, parts: EngineParts) {
    super()
    this.env = options.env ?? readEnvironment().env
    this.service = checkService(options.service) ?? 'default'
    this.clock = options.clock ?? systemClock
    this.loggerSlot = new LoggerSlot(options.logger, defaultEngineLogger)
    this.logger = this.loggerSlot
    // A store with no logger of its own logs through the engine's (and so, later, the app's).
    parts.store.attachLogger?.(this.logger)
    this.backend = parts.store.kind
    const kernel = buildKernel(
      {
        env: this.env,
        service: this.service,
        clock: this.clock,
        logger: this.logger,
        report: (operation) => this.report(operation),
        loadFeatures: () => this.loadFeatures(),
      },
      options,
      parts,
    )
    this.audit = kernel.audit
    this.kernel = kernel
    this.enforcer = kernel.enforcer
    this.flags = kernel.flagsFeature.service
    this.rateLimits = kernel.rateLimits
    this.routes = kernel.routes
    this.maintenance = kernel.maintenance
  }

  /**
   * Logs through `logger` from now on when the engine was created without a `logger` option
   * and no logger was attached before; returns whether it was taken. The Fastify plugins call
   * it with a child of the app's logger (`module: 'switchyard'`).
   */
  attachLogger(logger: LoggerLike): boolean {
    return this.loggerSlot.attach(logger)
  }

  /**
   * Connects the store and loads the replica, then the features (flags and segments, stored
   * rate-limit policies). When the store is unreachable the engine logs it, lets requests
   * through on declared states (fail-open) and keeps retrying in the background with capped
   * exponential backoff; this never rejects for that. It rejects only for a configuration
   * problem no retry can fix (a corrupt state file or section, a missing driver). From here
   * on, rate-limit options are final.
   */
  start(): Promise<void> {
    this.started ??= (async () => {
      for (const feature of this.kernel.features) feature.start()
      this.starting = true
      try {
        await this.kernel.sync.start()
      } finally {
        this.starting = false
      }
      await this.featuresLoading
    })()
    return this.started
  }

  /**
   * Stops background work (scheduler, retries, webhook retries), the features and the store.
   * Idempotent: later calls return the same promise, so an engine closed by the plugin and by
   * its owner is closed once.
   */
  close(): Promise<void> {
    this.closing ??= this.closeParts()
    return this.closing
  }

  private async closeParts(): Promise<void> {
    this.kernel.scheduler.stop()
    this.kernel.sync.close()
    for (const feature of [...this.kernel.features].reverse()) await feature.close()
    this.kernel.webhooks.close()
    await this.audit.flush()
    await this.kernel.store.close()
  }

  /**
   * Loads every feature after each load of the replica. A configuration error of the load
   * start() waits for rejects start(); later ones are logged.
   */
  private loadFeatures(): void {
    const loading = Promise.all(this.kernel.features.map((feature) => feature.load())).then(
      () => {},
    )
    if (this.starting) {
      this.featuresLoading = loading
      loading.catch(() => undefined) // start() awaits it and receives the error
      return
    }
    loading.catch((error: unknown) => {
      this.logger.error({ err: toError(error) }, 'configuration error')
    })
  }

  /**
   * Registers a switchyard provider for this engine's flags with OpenFeature, so that
   * `OpenFeature.getClient()` evaluates them; resolves with the provider once it is ready.
   * Loads `@openfeature/server-sdk` (an optional peer dependency) only now. Once per engine.
   *
   * @example
   * await engine.useOpenFeature()
   * await OpenFeature.getClient().getBooleanValue('new-checkout', false, { targetingKey: 'u1' })
   */
  useOpenFeature(options?: UseOpenFeatureOptions): Promise<SwitchyardProvider> {
    return this.kernel.flagsFeature.useOpenFeature(options)
  }

  /**
   * Registers one method of one route with its declared state (adapters call this for every
   * route, decorated or not). Idempotent: registering a route again returns its slot.
   */
  registerRoute(
    method: string,
    path: string,
    declaration: RouteDeclaration | null = null,
    options: { service?: string } = {},
  ): RouteSlot {
    const slot = this.kernel.registry.register(
      checkService(options.service) ?? this.service,
      parseMethod(method),
      validatePath(path),
      declaration,
    )
    this.kernel.replica.attach(slot)
    return slot
  }

  /**
   * Forgets one registered route of a service (an SDK app that no longer declares it); resolves
   * whether it was registered. Its stored runtime state is kept for when it comes back.
   */
  unregisterRoute(method: string, path: string, options: { service?: string } = {}): boolean {
    const service = checkService(options.service) ?? this.service
    return this.kernel.registry.remove(service, `${parseMethod(method)}:${validatePath(path)}`)
  }

  /**
   * The runtime overrides of one service's routes as stored (not the effective view the API
   * shows: a future maintenance window stays a window), registered here or not. The SDK
   * stream's snapshot is built from it.
   */
  routeOverrides(service: string): RouteState[] {
    return this.kernel.replica.overrideStates().filter((state) => state.service === service)
  }

  /** Every registered route (one slot per method), of every service, sorted by path. */
  registeredRoutes(): RouteSlot[] {
    return this.kernel.registry.list()
  }

  /**
   * Whether the store is reachable: its state was loaded and no reload is being retried. While
   * it is not, requests are decided on the last known (or declared) states.
   */
  storeAvailable(): boolean {
    return this.kernel.sync.available
  }

  /**
   * Change messages from other instances ignored so far, by channel: of a type this version
   * does not know (a newer instance's, during a rolling upgrade) or malformed. Zero for
   * channels this engine's backend does not have.
   */
  ignoredMessages(): Record<IgnoredChannel, number> {
    return {
      route_state: totalIgnored(this.kernel.store.ignoredMessages?.()),
      flags: this.kernel.flagsFeature.ignoredMessages(),
      rate_limit: this.kernel.rateLimitsFeature.ignoredMessages(),
    }
  }

  /**
   * Adds a listener told of every failed load of the store's state (`load` at startup,
   * `resync` afterwards; each retry counts); returns the remover.
   */
  onStoreFailure(listener: StoreFailureListener): () => void {
    return this.kernel.sync.onFailure(listener)
  }

  /** Runs the enforcement pipeline for one request to the route of `slot`. */
  decide(slot: RouteSlot, request: RequestView): Decision | Promise<Decision> {
    return this.enforcer.decide(slot, request)
  }

  /**
   * Names of every service with registered routes (its own, or an SDK app's), a stored
   * maintenance configuration or a rate-limit policy (service-wide or of one of its routes).
   */
  listServices(): string[] {
    return [
      ...new Set([
        ...this.kernel.registry.serviceNames(),
        ...this.kernel.replica.services.keys(),
        ...this.rateLimits.listServiceRateLimits().keys(),
        ...this.rateLimits.listRateLimitPolicies().map((policy) => policy.service),
      ]),
    ].sort()
  }

  /** Subscribes to every state change made through this engine; returns the unsubscriber. */
  onOperation(listener: OperationListener): () => void {
    this.operationListeners.add(listener)
    return () => this.operationListeners.delete(listener)
  }

  /**
   * Subscribes to the store's change feed — route states, maintenance and audit entries, from
   * this instance and (with a shared store) every other — and returns the unsubscriber. The
   * admin event stream is built on it.
   */
  onChange(listener: ChangeListener): () => void {
    return this.kernel.store.changes.subscribe(listener)
  }

  /** Admin session tokens, kept in the store so that a logout holds on every instance. */
  sessionTokens(): TokenStore {
    return this.kernel.store.tokens
  }

  /**
   * The store's backend, for ports that adapters keep beside the engine's own records on the
   * same backend (the SDK apps' route registrations of multi-service mode).
   */
  storeBackend(): StoreBackend {
    return this.kernel.store.backend
  }

  /** OFREP evaluation keys (stored hashed), kept in the store so a revocation holds everywhere. */
  evaluationKeys(): EvaluationKeyStore {
    return this.kernel.store.evaluationKeys
  }

  /** API tokens of the admin API (stored hashed), kept in the store so a revocation holds everywhere. */
  apiTokens(): ApiTokenStore {
    return this.kernel.store.apiTokens
  }

  /**
   * The maintenance configuration requests are judged by now, compiled: the global one, or
   * one service's. Each is replaced on every change and never mutated, so an adapter may cache
   * what it derives from one by identity (the OpenAPI filter does).
   */
  activeMaintenance(service?: string): CompiledMaintenance {
    return service === undefined
      ? this.kernel.replica.global
      : this.kernel.replica.serviceMaintenance(service)
  }

  /**
   * Records a change made by an adapter rather than by the engine's own operations (the admin
   * app's evaluation keys): it reaches the operation listeners, the audit log and the webhooks
   * like every other change.
   */
  recordOperation(operation: Operation): void {
    this.report(operation)
  }

  /**
   * Applies every automatic transition (window starts and ends, `until` deadlines) and
   * scheduled flag change due now; resolves the number this instance applied. The scheduler
   * does this by itself; tests with a fake clock call it after moving the clock.
   */
  runDue(): Promise<number> {
    return this.kernel.scheduler.tick()
  }

  /** When the next automatic transition or scheduled flag change is due (epoch ms), or null. */
  nextDue(): number | null {
    return this.kernel.scheduler.nextDue()
  }

  private report(operation: Operation): void {
    for (const listener of this.operationListeners) {
      try {
        listener(operation)
      } catch (error) {
        this.logger.error({ err: toError(error) }, 'operation listener failed')
      }
    }
    this.audit.record(operation)
  }

  // ---- audit and webhooks -------------------------------------------------------------

  /** One page of the audit log, newest first, optionally filtered by route and service. */
  getAuditLog(query?: AuditLogQuery): Promise<Page<AuditEntry>> {
    return this.audit.list(query)
  }

  /**
   * Sends every audit entry this instance writes to `url` as an HTTP POST (see
   * docs/audit-and-webhooks.md); returns the function that removes the webhook.
   *
   * @example
   * engine.addWebhook('https://hooks.example.com/x', { secret: 's3cret', formatter: chatFormatter })
   */
  addWebhook(url: string, options?: WebhookOptions): () => void {
    return this.kernel.webhooks.add(url, options)
  }

  /** Resolves when every webhook delivery started so far has finished (tests, shutdown). */
  webhooksIdle(): Promise<void> {
    return this.kernel.webhooks.idle()
  }
}
