/**
 * The engine: the one object an application talks to. It owns the route registry, the live
 * replica, the enforcement pipeline and the store, and exposes the operations of the spec.
 * Each concern lives in its own module; this class wires them together and keeps the public
 * API in one place.
 */
import { systemClock, type Clock } from './clock.js'
import { readEnvironment } from './config.js'
import type { Decision } from './decision.js'
import { Enforcer, type RequestView } from './enforcement.js'
import { toError, ValidationError } from './errors.js'
import type { MaintenanceConfig } from './maintenance.js'
import { MaintenanceOperations, type EnableMaintenanceOptions } from './maintenance-operations.js'
import type { ActorOptions, Operation, OperationListener } from './operations.js'
import type { Page } from './pagination.js'
import { RouteRegistry } from './registry.js'
import { Replica } from './replica.js'
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
  /** Delay before retrying an unreachable store at startup, in seconds (default 2). */
  retryInterval?: number
}

const consoleLogger: EngineLogger = {
  warn: (message, ...rest) => console.warn(`[switchyard] ${message}`, ...rest),
  error: (message, ...rest) => console.error(`[switchyard] ${message}`, ...rest),
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
  private readonly operationListeners = new Set<OperationListener>()
  private started: Promise<void> | null = null
  private retryTimer: NodeJS.Timeout | null = null
  private unsubscribe: (() => void) | null = null
  private closed = false
  private readonly retryMs: number

  constructor(options: EngineOptions = {}) {
    const fromEnv = readEnvironment()
    this.env = options.env ?? fromEnv.env
    this.service = checkService(options.service) ?? 'default'
    this.clock = options.clock ?? systemClock
    this.logger = options.logger ?? consoleLogger
    this.retryMs = (options.retryInterval ?? 2) * 1000
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
  }

  /**
   * Connects the store and loads the replica. Never rejects: when the store is unreachable the
   * engine logs it, lets requests through on declared states (fail-open) and keeps retrying.
   */
  start(): Promise<void> {
    this.started ??= this.load()
    return this.started
  }

  private async load(): Promise<void> {
    try {
      await this.store.connect()
      const [overrides, global, services] = await Promise.all([
        this.store.routes.list(),
        this.store.maintenance.getGlobal(),
        this.store.maintenance.listServices(),
      ])
      this.replica.load({ overrides, global, services })
      this.unsubscribe ??= this.store.changes.subscribe((event) => this.replica.apply(event))
    } catch (error) {
      if (this.closed) return
      this.logger.error(
        `store "${this.store.kind}" unavailable at startup; serving declared states and retrying in ${this.retryMs / 1000}s`,
        toError(error),
      )
      this.retryTimer = setTimeout(() => {
        this.retryTimer = null
        this.started = this.load()
      }, this.retryMs)
      this.retryTimer.unref()
    }
  }

  /** Stops background work and closes the store. */
  async close(): Promise<void> {
    this.closed = true
    if (this.retryTimer !== null) clearTimeout(this.retryTimer)
    this.unsubscribe?.()
    await this.store.close()
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
