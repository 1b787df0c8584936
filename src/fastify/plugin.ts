/**
 * The switchyard Fastify plugin.
 *
 * - `onRoute`: registers every route with the engine (decorated or not), reads the decorators'
 *   declarations, removes their hooks and puts one enforcing hook first on the route, bound to
 *   the route's slot, so a request reaches its state without any lookup.
 * - `request.state`: an object (created on first access) where the app's auth hook puts
 *   `userId`, `userRoles` and the tier attribute.
 * - lifecycle: the plugin starts the engine at registration (the replica is loaded) and, since
 *   it started it, closes it with the app (`closeEngine`, default true; an engine the plugin
 *   created is always closed).
 * - OpenAPI: the `@fastify/swagger` document follows the route states (openapi.ts).
 *
 * Register it before the routes: routes added earlier are not seen by `onRoute`.
 */
import type {
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  HookHandlerDoneFunction,
  onRequestHookHandler,
} from 'fastify'
import fp from 'fastify-plugin'
import type { AdminAppOptions } from '../admin/app.js'
import { adminApp } from '../admin/lazy-app.js'
import type { Engine } from '../core/engine.js'
import type { RequestState } from '../core/enforcement.js'
import { ConfigError } from '../core/errors.js'
import { isAdminSurface } from '../common/admin-surface.js'
import { unknownPluginOptionsMessage } from '../common/option-names.js'
import { isHttpMethod, type HttpMethod } from '../core/route-key.js'
import type { RouteDeclaration } from '../core/route-state.js'
import type { RouteSlot } from '../core/route-slot.js'
import { createEngine } from '../create-engine.js'
import type { RateLimitingOptions } from '../rate-limit/options.js'
import type { RateLimitService } from '../rate-limit/service.js'
import { declarationOf } from './declarations.js'
import { HeadTwins, type OnRouteOptions } from './head-routes.js'
import type { RateLimitDeclaration, RateLimitResponseFactory } from './rate-limit.js'
import { RouteTable } from './openapi-document.js'
import { installOpenApiFilter, OpenApiFilter, type OpenApiFilterOptions } from './openapi.js'
import { enforceRequest, type DecisionObserver } from './respond.js'
import { metricsEndpoint } from '../metrics/endpoint.js'
import { resolveTelemetryOption } from '../telemetry/options.js'
import { startRouteTelemetry } from '../telemetry/route-telemetry.js'
import type { Readiness } from '../common/health-checks.js'
import { engineReadiness } from '../health/engine-checks.js'
import { healthRoutes } from '../common/health-routes.js'
import { resolveMetricsOptions, type MetricsOptions } from '../metrics/options.js'
import type { SwitchyardMetrics } from '../metrics/registry.js'
import { sdkAppsGauge } from '../metrics/sdk-apps-gauge.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** The switchyard engine of this app. */
    switchyard: Engine
    /**
     * The readiness checks served at `{admin}/health/ready` (or the `health` option's path);
     * `add()` appends a check of the app's own.
     */
    switchyardReadiness: Readiness
    /** The Prometheus metrics of this app, when the `metrics` option is on; else null. */
    switchyardMetrics: SwitchyardMetrics | null
  }
  interface FastifyRequest {
    /** Caller attributes set by the app's auth hook: `userId`, `userRoles`, tier attribute. */
    state: RequestState
  }
}

/** Options of the {@link switchyard} plugin. */
export interface SwitchyardPluginOptions {
  /** The engine to use; by default one is created from the environment and closed with the app. */
  engine?: Engine
  /**
   * Close the engine given in `engine` when the app closes (its scheduler, retries, store and
   * connections end with `app.close()`). Default true: the plugin starts the engine it is given,
   * so it stops it too. `false` leaves it running, for an engine shared with another app or
   * closed by its owner (then `engine.close()` is the owner's job, or the process does not
   * exit). An engine the plugin created itself is always closed.
   */
  closeEngine?: boolean
  /**
   * Rate-limit counters, stores and settings, merged over the engine's own `rateLimit`
   * options; like them, they must be given before the engine starts (a `ConfigError` after).
   */
  rateLimit?: RateLimitingOptions
  /** App-wide custom responses; `rate_limited` replaces the built-in 429 (after a route's own). */
  responses?: { rate_limited?: RateLimitResponseFactory | null }
  /**
   * Mounts the admin app (REST API, auth, event stream) with these options; its routes are not
   * route-controlled, so maintenance can always be turned off through it.
   */
  admin?: Omit<AdminAppOptions, 'engine' | 'metrics' | 'readiness' | 'sdkStreamCounts'>
  /**
   * Health routes (`{path}/health/live`, `{path}/health/ready`) for an app without the admin
   * app, at `path` (default `/switchyard`). With `admin` they are always served under the
   * admin's mount path; `false` is the default without it.
   */
  health?: boolean | { path?: string }
  /**
   * Prometheus metrics of route control and, with `taskManager`, of the tasks (docs/operations.md),
   * from the optional `prom-client` package, loaded only when this is on. Default off. Served
   * inside the admin app to `viewer`s (`{admin}/metrics`), or at `path` to anyone with
   * `public: true`.
   */
  metrics?: boolean | MetricsOptions
  /**
   * OpenTelemetry metrics and spans (docs/operations.md): on by default when
   * `@opentelemetry/api` can be imported (no-ops until the app registers an OpenTelemetry SDK);
   * `false` turns them off.
   */
  telemetry?: boolean
  /**
   * The API description follows the route states (docs/openapi.md): when `@fastify/swagger` is
   * registered, `app.swagger()` and the swagger-ui routes serve the filtered document. Default
   * on; `false` serves the document unfiltered.
   */
  openapi?: boolean | OpenApiFilterOptions
  /**
   * The hook that runs the enforcement chain (route state, maintenance, rate limits — all of it,
   * in the same order): `onRequest` (default), before any of the route's own hooks, so a
   * blocked request costs nothing more; or `preHandler`, after the route's `onRequest`,
   * `preParsing`, `preValidation` hooks, body parsing and validation, so a user-keyed limit sees
   * the user an auth hook of the route set (the price: a blocked request was parsed first).
   */
  enforceAt?: 'onRequest' | 'preHandler'
}

const kState = Symbol('switchyard.requestState')
type WithState = FastifyRequest & { [kState]?: RequestState }

/** Every option of the plugin (the compiler keeps the list complete). */
const PLUGIN_OPTION_NAMES: Record<keyof SwitchyardPluginOptions, true> = {
  engine: true,
  closeEngine: true,
  rateLimit: true,
  responses: true,
  admin: true,
  openapi: true,
  enforceAt: true,
  metrics: true,
  telemetry: true,
  health: true,
}

async function switchyardPlugin(
  app: FastifyInstance,
  options: SwitchyardPluginOptions,
): Promise<void> {
  const unknown = unknownPluginOptionsMessage('switchyard plugin', options, PLUGIN_OPTION_NAMES)
  if (unknown !== null) throw new ConfigError(unknown)
  const closeEngine: unknown = options.closeEngine ?? true
  // Untyped (JavaScript) callers may pass anything.
  if (typeof closeEngine !== 'boolean')
    throw new ConfigError(`closeEngine must be true or false, not ${JSON.stringify(closeEngine)}.`)
  const engine = options.engine ?? createEngine()
  const closedWithApp = options.engine === undefined || closeEngine
  // An engine without a logger of its own logs through the app's from now on.
  engine.attachLogger(app.log.child({ module: 'switchyard' }))
  const limits = engine.rateLimits
  if (options.rateLimit !== undefined) limits.configure(options.rateLimit)
  const enforceAt = options.enforceAt ?? 'onRequest'
  // Untyped (JavaScript) callers may pass anything.
  if (!['onRequest', 'preHandler'].includes(enforceAt))
    throw new ConfigError(
      `Invalid enforceAt ${JSON.stringify(enforceAt)}: expected "onRequest" or "preHandler".`,
    )
  const rateLimited = options.responses?.rate_limited ?? null
  if (rateLimited !== null && typeof rateLimited !== 'function')
    throw new ConfigError('responses.rate_limited must be a function (request, error) => response.')
  const metricsOptions = resolveMetricsOptions(options.metrics, options.admin !== undefined)
  app.decorate('switchyard', engine)
  const readiness = engineReadiness(engine)
  app.decorate('switchyardReadiness', readiness)
  // Unready from the first step of closing, so a load balancer drains the app before it stops.
  app.addHook('preClose', (done) => {
    readiness.markClosing()
    done()
  })
  const healthPath = resolveHealthPath(options.health, options.admin !== undefined)
  const metrics =
    metricsOptions === null
      ? null
      : await (
          await import('../metrics/registry.js')
        ).createMetrics({ engine, taskManager: metricsOptions.taskManager })
  if (metrics !== null) app.addHook('onClose', () => metrics.close())
  const telemetry = await startRouteTelemetry(engine, resolveTelemetryOption(options.telemetry))
  if (telemetry !== null) app.addHook('onClose', () => telemetry.close())
  const observe = bothObservers(metrics?.routes.observe ?? null, telemetry?.observe ?? null)
  app.decorate('switchyardMetrics', metrics)
  if (!app.hasRequestDecorator('state')) {
    app.decorateRequest('state', {
      getter(this: WithState): RequestState {
        return (this[kState] ??= {})
      },
      setter(this: WithState, value: RequestState) {
        this[kState] = value
      },
    })
  }
  // Fastify's config has the app-wide `exposeHeadRoutes` (default true) but does not type it.
  const config = app.initialConfig as { exposeHeadRoutes?: boolean }
  const headTwins = new HeadTwins(config.exposeHeadRoutes ?? true)
  const openapi: unknown = options.openapi ?? true
  if (typeof openapi !== 'boolean' && (typeof openapi !== 'object' || openapi === null))
    throw new ConfigError('openapi must be true, false or { decorator }.')
  let documented: RouteTable | null = null
  if (openapi !== false) {
    documented = new RouteTable()
    installOpenApiFilter(
      app,
      new OpenApiFilter(engine, documented),
      openapi === true ? {} : openapi,
    )
  }
  app.addHook('onRoute', function (this: FastifyInstance, route) {
    // The admin surfaces stay reachable whatever the state of the app's routes, and stay out of
    // the app's API description (the admin app serves its own at {admin}/api/openapi.json).
    if (route.config?.switchyardAdmin === true || isAdminSurface(this)) {
      for (const method of toArray(route.method)) documented?.add(route.url, method, null)
      return
    }
    attachRoute(engine, limits, rateLimited, route, headTwins, documented, enforceAt, observe)
  })
  const endpoint =
    metrics === null || metricsOptions === null
      ? undefined
      : metricsEndpoint(metrics, metricsOptions.path)
  if (endpoint !== undefined && metricsOptions?.public === true) {
    // Marked like the admin's routes: not route-controlled (maintenance must not hide the
    // metrics that show it) and left out of the app's API description.
    app.get(endpoint.path, { config: { switchyardAdmin: true } }, endpoint.handler)
  }
  if (options.admin !== undefined) {
    const inAdmin = metricsOptions?.public === false ? endpoint : undefined
    await app.register(adminApp, {
      ...options.admin,
      engine,
      metrics: inAdmin,
      readiness,
      ...(metrics === null
        ? {}
        : { sdkStreamCounts: (read) => metrics.addGauge(sdkAppsGauge(engine, read)) }),
    })
  }
  if (healthPath !== null) healthRoutes(app, healthPath, readiness)
  if (closedWithApp)
    app.addHook('onClose', async () => {
      await engine.close()
    })
  await engine.start()
}

/** Registers a route with the engine and installs its enforcing hook. */
function attachRoute(
  engine: Engine,
  limits: RateLimitService,
  rateLimited: RateLimitResponseFactory | null,
  route: OnRouteOptions,
  headTwins: HeadTwins,
  documented: RouteTable | null,
  enforceAt: 'onRequest' | 'preHandler',
  observe: DecisionObserver | null,
): void {
  const hooks = toArray(route.onRequest)
  const declarations: RouteDeclaration[] = []
  const rateLimits: RateLimitDeclaration[] = []
  const kept: typeof hooks = []
  for (const hook of hooks) {
    const declaration = declarationOf(hook)
    if (declaration === undefined) kept.push(hook)
    else if (declaration.lifecycle !== undefined) declarations.push(declaration.lifecycle)
    else if (declaration.rateLimit !== undefined) rateLimits.push(declaration.rateLimit)
  }
  if (rateLimits.length > 1) {
    throw new ConfigError(
      `Route ${String(route.method)} ${route.url} has ${rateLimits.length} rateLimit decorators; a route takes at most one.`,
    )
  }
  const rateLimit = rateLimits[0]
  if (declarations.length > 1) {
    throw new ConfigError(
      `Route ${String(route.method)} ${route.url} has ${declarations.length} lifecycle decorators; a route takes at most one.`,
    )
  }
  const declaration = declarations[0] ?? null
  const methods = toArray(route.method).map((method) => method.toUpperCase())
  const slots = new Map<string, RouteSlot>()
  // Fastify's automatic HEAD route of a GET route follows the GET route's state.
  const twin = headTwins.twinOf(route)
  for (const method of methods) {
    if (!isHttpMethod(method)) continue
    const slot = twin ?? engine.registerRoute(method, route.url, declaration)
    if (twin === undefined && rateLimit !== undefined) limits.declare(slot, rateLimit.policy)
    if (method === 'GET' && !methods.includes('HEAD')) headTwins.expect(route, slot)
    slots.set(method, slot)
    documented?.add(route.url, method, slot)
  }
  if (slots.size === 0) return
  const response = rateLimit?.response ?? rateLimited
  const enforce = routeHook(engine, slots as Map<HttpMethod, RouteSlot>, response, observe)
  if (enforceAt === 'onRequest') {
    route.onRequest = [enforce, ...kept]
    return
  }
  // First of the preHandler hooks: after the route's own onRequest hooks and validation.
  route.onRequest = kept
  route.preHandler = [enforce, ...toArray(route.preHandler)]
}

function routeHook(
  engine: Engine,
  slots: Map<HttpMethod, RouteSlot>,
  response: RateLimitResponseFactory | null,
  observe: DecisionObserver | null,
): onRequestHookHandler {
  if (slots.size === 1) {
    const slot = slots.values().next().value as RouteSlot
    return function switchyardEnforce(
      request: FastifyRequest,
      reply: FastifyReply,
      done: HookHandlerDoneFunction,
    ) {
      enforceRequest(engine, slot, request, reply, done, response, observe)
    }
  }
  return function switchyardEnforce(
    request: FastifyRequest,
    reply: FastifyReply,
    done: HookHandlerDoneFunction,
  ) {
    const slot = slots.get(request.method as HttpMethod)
    if (slot === undefined) {
      done()
      return
    }
    enforceRequest(engine, slot, request, reply, done, response, observe)
  }
}

/** Where the plugin itself serves the health routes (null: nowhere, or inside the admin app). */
function resolveHealthPath(value: unknown, hasAdmin: boolean): string | null {
  if (value === undefined || value === false) return null
  if (value !== true && (typeof value !== 'object' || value === null || Array.isArray(value)))
    throw new ConfigError('health must be true, false or { path }.')
  if (hasAdmin) {
    if (value === true) return null
    throw new ConfigError(
      'health: with `admin` the health routes are served under the admin mount path; drop the `health` option or its path.',
    )
  }
  const path: unknown =
    value === true ? '/switchyard' : ((value as { path?: unknown }).path ?? '/switchyard')
  if (typeof path !== 'string' || !/^\/[A-Za-z0-9._~\-/]*$/.test(path) || path.includes('//'))
    throw new ConfigError(
      `Invalid health path ${JSON.stringify(path)}: expected e.g. "/switchyard".`,
    )
  return path.replace(/\/+$/, '')
}

function toArray<T>(value: T | T[] | undefined): T[] {
  if (value === undefined) return []
  return Array.isArray(value) ? value : [value]
}

/**
 * The switchyard plugin: route lifecycle enforced on every route of the app.
 *
 * @example
 * await app.register(switchyard, { engine: createEngine() })
 */
export const switchyard = fp(switchyardPlugin, { fastify: '5.x', name: 'switchyard' })

/** One decision observer out of the Prometheus and the OpenTelemetry ones (either may be off). */
function bothObservers(
  first: DecisionObserver | null,
  second: DecisionObserver | null,
): DecisionObserver | null {
  if (first === null || second === null) return first ?? second
  return (slot, decision) => {
    first(slot, decision)
    second(slot, decision)
  }
}
