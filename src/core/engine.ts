/**
 * The engine: the one object an application talks to. It owns the route registry, the live
 * replica, the enforcement pipeline and the store, and exposes the operations of the spec.
 * Each concern lives in its own module; this class wires them together and keeps the public
 * API in one place.
 */
import type { AuditEntry } from './audit-entry.js'
import { AuditLog, DEFAULT_MAX_AUDIT_ENTRIES, type AuditLogQuery } from './audit-log.js'
import { systemClock, type Clock } from './clock.js'
import { readEnvironment } from './config.js'
import type { Decision } from './decision.js'
import { Enforcer, type RequestView } from './enforcement.js'
import { ConfigError, toError, ValidationError } from './errors.js'
import type { MaintenanceConfig } from './maintenance.js'
import { MaintenanceOperations, type EnableMaintenanceOptions } from './maintenance-operations.js'
import type { ActorOptions, Operation, OperationListener } from './operations.js'
import type { Page } from './pagination.js'
import { RouteRegistry } from './registry.js'
import { Replica, ReplicaSync } from './replica.js'
import { parseMethod, validatePath } from './route-key.js'
import {
  checkService,
  RouteOperations,
  type DisableOptions,
  type ListRoutesOptions,
  type MaintenanceOptions,
  type RouteChangeOptions,
  type ScheduleOptions,
} from './route-operations.js'
import type { RouteDeclaration, RouteState } from './route-state.js'
import type { RouteSlot } from './route-slot.js'
import { flagScheduleJob, TransitionScheduler } from './scheduler.js'
import { WebhookDispatcher, type WebhookOptions } from './webhooks.js'
import type { Flag, Segment } from '../flags/model.js'
// Type-only: the provider module (and its optional peer dependency) loads on useOpenFeature().
import type { SwitchyardProvider, UseOpenFeatureOptions } from '../flags/openfeature.js'
import { FlagService, type FlagWriteOptions } from '../flags/service.js'
import { flagStoreFor, type ManagedFlagStore } from '../flags/stores/index.js'
import { rateLimitingFor } from '../rate-limit/feature.js'
import type { RateLimitService } from '../rate-limit/service.js'
import { createStore } from '../stores/index.js'
import type { Store } from '../stores/types.js'

/** Where the engine reports faults it recovers from (a pino logger fits). */
export interface EngineLogger {
  warn(message: string, ...rest: unknown[]): void
  error(message: string, ...rest: unknown[]): void
}

/** Options of {@link createEngine}. */
export interface EngineOptions {
  /** A store, or a backend name; default `CTL_BACKEND`, else `memory`. */
  store?: Store | string
  /** Environment name used by env gating; default `CTL_ENV`, else `dev`. */
  env?: string
  /** This application's service name; default `default`. */
  service?: string
  /** Time source; tests pass a fake clock. */
  clock?: Clock
  logger?: EngineLogger
  /** Delay before the first retry of an unreachable store, in seconds (default 2); doubles per failure. */
  retryInterval?: number
  /** Longest delay between two retries of an unreachable store, in seconds (default 30). */
  maxRetryInterval?: number
  /** Audit entries kept in the store; the oldest are evicted beyond it (default 10000). */
  maxAuditEntries?: number
}

const consoleLogger: EngineLogger = {
  warn: (message, ...rest) => console.warn(`[switchyard] ${message}`, ...rest),
  error: (message, ...rest) => console.error(`[switchyard] ${message}`, ...rest),
}

/** A module that keeps state on the engine's store and follows its lifecycle (see {@link Engine.attach}). */
export interface EngineExtension {
  /** Called once the engine has started; must not reject for an unreachable store (fail-open). */
  start(): Promise<void>
  /** Called when the engine closes, before the store. */
  close(): Promise<void>
}

/** The route-control engine. Create it with {@link createEngine}. */
export class Engine {
  /** Environment name (env gating). */
  readonly env: string
  /** This application's service name. */
  readonly service: string
  readonly store: Store
  readonly clock: Clock
  readonly logger: EngineLogger
  /** Every registered route. */
  readonly registry: RouteRegistry
  /** The in-memory copy of shared state that enforcement reads. */
  readonly replica: Replica
  /** The enforcement pipeline. */
  readonly enforcer: Enforcer
  private readonly routes: RouteOperations
  private readonly maintenance: MaintenanceOperations
  /** The audit log of every change made through this engine. */
  readonly audit: AuditLog
  /** Persists and audits automatic transitions (window start/end, `until` deadlines). */
  readonly scheduler: TransitionScheduler
  private readonly webhooks: WebhookDispatcher
  private readonly sync: ReplicaSync
  private readonly extensions: EngineExtension[] = []
  private readonly operationListeners = new Set<OperationListener>()
  private started: Promise<void> | null = null
  /**
   * Feature flags and segments (docs/feature-flags.md), kept in the same backend as the rest of
   * the engine's state. `flags.onChange` is the hook for flag and segment changes (local or
   * replicated); `flags.sync` the synchronous client; `flags.stream` the evaluation stream.
   */
  readonly flags: FlagService
  private readonly flagStore: ManagedFlagStore
  private readonly retryMs: number
  private readonly maxRetryMs: number
  private flagsLoading: Promise<void> | null = null
  private flagsFatal: Error | null = null
  private flagRetry: NodeJS.Timeout | null = null
  private flagFailures = 0
  private openFeature: Promise<SwitchyardProvider> | null = null
  private closed = false

  constructor(options: EngineOptions = {}) {
    const fromEnv = readEnvironment()
    this.env = options.env ?? fromEnv.env
    this.service = checkService(options.service) ?? 'default'
    this.clock = options.clock ?? systemClock
    this.logger = options.logger ?? consoleLogger
    const store = options.store ?? fromEnv.backend
    this.store = typeof store === 'string' ? createStore(store) : store
    this.registry = new RouteRegistry(this.env)
    this.replica = new Replica(this.registry)
    this.enforcer = new Enforcer(this.replica, this.clock)
    const report = (operation: Operation) => this.report(operation)
    this.routes = new RouteOperations({
      registry: this.registry,
      replica: this.replica,
      store: this.store.routes,
      clock: this.clock,
      defaultService: this.service,
      report,
    })
    this.maintenance = new MaintenanceOperations({
      replica: this.replica,
      store: this.store.maintenance,
      report,
    })
    this.audit = new AuditLog({
      store: this.store.audit,
      clock: this.clock,
      maxEntries: options.maxAuditEntries ?? DEFAULT_MAX_AUDIT_ENTRIES,
      logger: this.logger,
    })
    this.webhooks = new WebhookDispatcher(this.logger)
    this.audit.onEntry((entry) => this.webhooks.dispatch(entry))
    const onFlagError = (error: Error, what: string) =>
      this.logger.error(`flags: ${what} failed`, error)
    this.flagStore = flagStoreFor(this.store, { onError: onFlagError })
    this.flags = new FlagService({
      store: this.flagStore,
      clock: this.clock,
      report,
      onError: onFlagError,
    })
    this.scheduler = new TransitionScheduler({
      replica: this.replica,
      routes: this.store.routes,
      claims: this.store.claims,
      clock: this.clock,
      report,
      logger: this.logger,
      jobs: [
        flagScheduleJob({
          flags: this.flags,
          claims: this.store.claims,
          reload: () => this.flags.start(),
        }),
      ],
    })
    // A flag that gained scheduled changes may be due sooner than the planned wake-up.
    this.flags.onChange((event) => {
      if (event.type === 'flag' && (event.flag?.scheduled_changes.length ?? 0) > 0)
        this.scheduler.wake()
    })
    this.flagStore.onResync(() => void this.loadFlags())
    this.retryMs = seconds(options.retryInterval, 2, 'retryInterval')
    this.maxRetryMs = seconds(options.maxRetryInterval, 30, 'maxRetryInterval')
    this.sync = new ReplicaSync({
      replica: this.replica,
      store: this.store,
      logger: this.logger,
      retryMs: this.retryMs,
      maxRetryMs: this.maxRetryMs,
      onLoaded: () => {
        void this.loadFlags()
        this.scheduler.start()
      },
      onEvent: (event) => {
        if (event.type === 'route_state') this.scheduler.wake()
      },
    })
  }

  /**
   * Connects the store and loads the replica. When the store is unreachable the engine logs
   * it, lets requests through on declared states (fail-open) and keeps retrying in the
   * background with capped exponential backoff; this never rejects for that. It rejects only
   * for a configuration problem no retry can fix (a corrupt state file, a missing driver).
   * Flags and segments are loaded as soon as the store is reachable (with the store on the
   * first attempt, before this resolves); until then every flag evaluates to its default.
   */
  start(): Promise<void> {
    this.started ??= (async () => {
      await this.sync.start()
      await this.flagsLoading
      if (this.flagsFatal !== null) throw this.flagsFatal
      for (const extension of this.extensions) await extension.start()
    })()
    return this.started
  }

  /**
   * Attaches a module that keeps its own state on this engine's store (rate limiting): it is
   * started once the engine has started (at once if it already has) and closed before the
   * store. Returns a promise of its start when the engine is already running.
   */
  attach(extension: EngineExtension): Promise<void> {
    this.extensions.push(extension)
    return this.started === null ? Promise.resolve() : this.started.then(() => extension.start())
  }

  /**
   * Rate limiting of this engine: the spec's rate-limit operations (`setRateLimitPolicy`,
   * `deleteRateLimitPolicy`, `resetRateLimit`, `getRateLimitHits`, `listRateLimitPolicies`, and
   * the global and service families), with policies kept on this engine's store.
   */
  get rateLimits(): RateLimitService {
    return rateLimitingFor(this)
  }

  /**
   * Records a state change made by a module that extends the engine (rate-limit policies): it
   * reaches the operation listeners, the audit log and the webhooks like the engine's own.
   */
  recordOperation(operation: Operation): void {
    this.report(operation)
  }

  /** Stops background work (scheduler, retries, webhook retries) and closes the store. */
  async close(): Promise<void> {
    this.closed = true
    for (const extension of [...this.extensions].reverse()) await extension.close()
    this.scheduler.stop()
    this.sync.close()
    if (this.flagRetry !== null) clearTimeout(this.flagRetry)
    this.flagRetry = null
    this.flags.close()
    this.webhooks.close()
    await this.audit.flush()
    await this.flagStore.close()
    await this.store.close()
  }

  /**
   * Connects the flag store and (re)loads every flag and segment: after each successful load
   * of the route replica and after the flag feed reports lost events. While it fails, the
   * flags last loaded stay in force and it retries with the store's backoff; never rejects.
   */
  private loadFlags(): Promise<void> {
    if (this.flagRetry !== null) clearTimeout(this.flagRetry)
    this.flagRetry = null
    this.flagsLoading = (async () => {
      try {
        await this.flagStore.connect()
        if (this.closed) return
        await this.flags.start()
        if (this.flagFailures > 0) this.logger.warn('flags available again; reloaded')
        this.flagFailures = 0
      } catch (error) {
        if (this.closed) return
        if (error instanceof ConfigError) {
          this.flagsFatal = error
          this.logger.error('flag store configuration error', error)
          return
        }
        const delay = Math.min(this.retryMs * 2 ** this.flagFailures, this.maxRetryMs)
        this.flagFailures += 1
        this.logger.error(
          `flags could not be loaded; serving the last known flags and retrying in ${delay / 1000}s`,
          toError(error),
        )
        this.flagRetry = setTimeout(() => void this.loadFlags(), delay)
        this.flagRetry.unref()
      }
    })()
    return this.flagsLoading
  }

  // ---- feature flags ------------------------------------------------------------------

  /**
   * Registers a switchyard provider for this engine's flags with OpenFeature, so that
   * `OpenFeature.getClient()` evaluates them; resolves with the provider once it is ready.
   * Loads `@openfeature/server-sdk` (an optional peer dependency) only now. Once per engine:
   * later calls return the first registration.
   *
   * @example
   * await engine.useOpenFeature()
   * await OpenFeature.getClient().getBooleanValue('new-checkout', false, { targetingKey: 'u1' })
   */
  useOpenFeature(options?: UseOpenFeatureOptions): Promise<SwitchyardProvider> {
    if (this.openFeature === null) {
      const registration = import('../flags/openfeature.js').then(
        (module) => module.useOpenFeature(this.flags, options),
        (error: unknown) => {
          throw new ConfigError(
            'engine.useOpenFeature() needs the "@openfeature/server-sdk" package: install it (npm install @openfeature/server-sdk).',
            {},
            { cause: error },
          )
        },
      )
      this.openFeature = registration
      // A failed registration (missing package) may be tried again.
      registration.catch(() => {
        if (this.openFeature === registration) this.openFeature = null
      })
    }
    return this.openFeature
  }

  /** Creates or replaces a flag (spec `save_flag`); see {@link FlagService.saveFlag}. */
  saveFlag(flag: unknown, options?: FlagWriteOptions): Promise<Flag> {
    return this.flags.saveFlag(flag, options)
  }

  /** The flag, or null (spec `get_flag`). */
  getFlag(key: string): Promise<Flag | null> {
    return this.flags.getFlag(key)
  }

  /** Every flag, sorted by key (spec `list_flags`). */
  listFlags(): Promise<Flag[]> {
    return this.flags.listFlags()
  }

  /** Deletes a flag (spec `delete_flag`); refused while another flag requires it. */
  deleteFlag(key: string, options?: FlagWriteOptions): Promise<void> {
    return this.flags.deleteFlag(key, options)
  }

  /** Creates or replaces a segment (spec `save_segment`). */
  saveSegment(segment: unknown, options?: FlagWriteOptions): Promise<Segment> {
    return this.flags.saveSegment(segment, options)
  }

  /** The segment, or null (spec `get_segment`). */
  getSegment(key: string): Promise<Segment | null> {
    return this.flags.getSegment(key)
  }

  /** Every segment, sorted by key (spec `list_segments`). */
  listSegments(): Promise<Segment[]> {
    return this.flags.listSegments()
  }

  /** Deletes a segment (spec `delete_segment`); refused while a flag's rules use it. */
  deleteSegment(key: string, options?: FlagWriteOptions): Promise<void> {
    return this.flags.deleteSegment(key, options)
  }

  /**
   * Registers one method of one route with its declared state (adapters call this for every
   * route, decorated or not). Idempotent.
   */
  registerRoute(
    method: string,
    path: string,
    declaration: RouteDeclaration | null = null,
    options: { service?: string } = {},
  ): RouteSlot {
    const slot = this.registry.register(
      checkService(options.service) ?? this.service,
      parseMethod(method),
      validatePath(path),
      declaration,
    )
    this.replica.attach(slot)
    return slot
  }

  /** Runs the enforcement pipeline for one request to the route of `slot`. */
  decide(slot: RouteSlot, request: RequestView): Decision | Promise<Decision> {
    return this.enforcer.decide(slot, request)
  }

  /** Subscribes to every state change made through this engine; returns the unsubscriber. */
  onOperation(listener: OperationListener): () => void {
    this.operationListeners.add(listener)
    return () => this.operationListeners.delete(listener)
  }

  private report(operation: Operation): void {
    for (const listener of this.operationListeners) {
      try {
        listener(operation)
      } catch (error) {
        this.logger.error('operation listener failed', toError(error))
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
   * Sends every audit entry this instance writes to `url` as an HTTP POST (CONTRACT.md §3);
   * returns the function that removes the webhook.
   *
   * @example
   * engine.addWebhook('https://hooks.example.com/x', { secret: 's3cret', formatter: chatFormatter })
   */
  addWebhook(url: string, options?: WebhookOptions): () => void {
    return this.webhooks.add(url, options)
  }

  /** Resolves when every webhook delivery started so far has finished (tests, shutdown). */
  webhooksIdle(): Promise<void> {
    return this.webhooks.idle()
  }

  // ---- route states -------------------------------------------------------------------

  /** Makes a route ACTIVE. */
  enable(route: string, options?: RouteChangeOptions): Promise<RouteState[]> {
    return this.routes.enable(route, options)
  }

  /** Disables a route, optionally `until` a deadline. */
  disable(route: string, options?: DisableOptions): Promise<RouteState[]> {
    return this.routes.disable(route, options)
  }

  /** Puts a route in maintenance, optionally within a `start`–`end` window. */
  setMaintenance(route: string, options?: MaintenanceOptions): Promise<RouteState[]> {
    return this.routes.setMaintenance(route, options)
  }

  /** Schedules a future maintenance window; the route stays ACTIVE until it starts. */
  schedule(route: string, options: ScheduleOptions): Promise<RouteState[]> {
    return this.routes.schedule(route, options)
  }

  /** Cancels a scheduled (or running) maintenance window. */
  cancelSchedule(route: string, options?: RouteChangeOptions): Promise<RouteState[]> {
    return this.routes.cancelSchedule(route, options)
  }

  /** The current states of a route key (one per method). */
  getState(route: string, options?: { service?: string }): RouteState[] {
    return this.routes.getState(route, options)
  }

  /** One page of registered routes. */
  listRoutes(options?: ListRoutesOptions): Page<RouteState> {
    return this.routes.listRoutes(options)
  }

  /** Names of every service with registered routes or a stored maintenance configuration. */
  listServices(): string[] {
    return [...new Set([...this.registry.serviceNames(), ...this.replica.services.keys()])].sort()
  }

  // ---- maintenance --------------------------------------------------------------------

  /** The global maintenance configuration. */
  getGlobalMaintenance(): MaintenanceConfig {
    return this.maintenance.get({ kind: 'global' })
  }

  /** Turns global maintenance on. */
  enableGlobalMaintenance(options?: EnableMaintenanceOptions): Promise<MaintenanceConfig> {
    return this.maintenance.enable({ kind: 'global' }, options)
  }

  /** Turns global maintenance off; every route resumes its own state. */
  disableGlobalMaintenance(options?: ActorOptions): Promise<MaintenanceConfig> {
    return this.maintenance.disable({ kind: 'global' }, options)
  }

  /** Adds a global exemption (`/path` or `METHOD:/path`) without toggling maintenance. */
  addGlobalExemption(path: string, options?: ActorOptions): Promise<MaintenanceConfig> {
    return this.maintenance.addExemption({ kind: 'global' }, path, options)
  }

  /** Removes a global exemption without toggling maintenance. */
  removeGlobalExemption(path: string, options?: ActorOptions): Promise<MaintenanceConfig> {
    return this.maintenance.removeExemption({ kind: 'global' }, path, options)
  }

  /** One service's maintenance configuration. */
  getServiceMaintenance(service: string): MaintenanceConfig {
    return this.maintenance.get({ kind: 'service', service: requireService(service) })
  }

  /** Turns maintenance on for one service; routes of other services are untouched. */
  enableServiceMaintenance(
    service: string,
    options?: EnableMaintenanceOptions,
  ): Promise<MaintenanceConfig> {
    return this.maintenance.enable({ kind: 'service', service: requireService(service) }, options)
  }

  /** Turns one service's maintenance off. */
  disableServiceMaintenance(service: string, options?: ActorOptions): Promise<MaintenanceConfig> {
    return this.maintenance.disable({ kind: 'service', service: requireService(service) }, options)
  }

  /** Adds an exemption to one service's maintenance. */
  addServiceExemption(
    service: string,
    path: string,
    options?: ActorOptions,
  ): Promise<MaintenanceConfig> {
    return this.maintenance.addExemption(
      { kind: 'service', service: requireService(service) },
      path,
      options,
    )
  }

  /** Removes an exemption from one service's maintenance. */
  removeServiceExemption(
    service: string,
    path: string,
    options?: ActorOptions,
  ): Promise<MaintenanceConfig> {
    return this.maintenance.removeExemption(
      { kind: 'service', service: requireService(service) },
      path,
      options,
    )
  }
}

function seconds(value: number | undefined, fallback: number, field: string): number {
  if (value === undefined) return fallback * 1000
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    throw new ValidationError(`${field} must be a non-negative number of seconds.`, {
      details: [{ field, message: 'expected a non-negative number of seconds' }],
    })
  }
  return value * 1000
}

function requireService(service: string): string {
  const checked = checkService(service)
  if (checked === undefined)
    throw new ValidationError('A service name is required.', {
      details: [{ field: 'service', message: 'required' }],
    })
  return checked
}

/**
 * Creates an engine. Backend and environment come from `CTL_BACKEND` / `CTL_ENV` unless given.
 *
 * @example
 * const engine = createEngine({ service: 'payments' })
 */
export function createEngine(options: EngineOptions = {}): Engine {
  return new Engine(options)
}
