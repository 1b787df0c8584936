/**
 * The switchyard Fastify plugin.
 *
 * - `onRoute`: registers every route with the engine (decorated or not), reads the decorators'
 *   declarations, removes their hooks and puts one enforcing hook first on the route, bound to
 *   the route's slot, so a request reaches its state without any lookup.
 * - `request.state`: an object (created on first access) where the app's auth hook puts
 *   `userId`, `userRoles` and the tier attribute.
 * - lifecycle: the engine's replica is loaded at registration; an engine the plugin created is
 *   closed with the app.
 *
 * Register it before the routes: routes added earlier are not seen by `onRoute`.
 */
import type {
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  HookHandlerDoneFunction,
  onRequestHookHandler,
  RouteOptions,
} from 'fastify'
import fp from 'fastify-plugin'
import { adminApp, type AdminAppOptions } from '../admin/index.js'
import type { Engine } from '../core/engine.js'
import type { RequestState } from '../core/enforcement.js'
import { ConfigError } from '../core/errors.js'
import { isHttpMethod, type HttpMethod } from '../core/route-key.js'
import type { RouteDeclaration } from '../core/route-state.js'
import type { RouteSlot } from '../core/route-slot.js'
import { createEngine } from '../create-engine.js'
import type { RateLimitingOptions } from '../rate-limit/options.js'
import type { RateLimitService } from '../rate-limit/service.js'
import { declarationOf } from './declarations.js'
import type { RateLimitDeclaration, RateLimitResponseFactory } from './rate-limit.js'
import { enforceRequest } from './respond.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** The switchyard engine of this app. */
    switchyard: Engine
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
  admin?: Omit<AdminAppOptions, 'engine'>
}

const kState = Symbol('switchyard.requestState')
type WithState = FastifyRequest & { [kState]?: RequestState }

async function switchyardPlugin(
  app: FastifyInstance,
  options: SwitchyardPluginOptions,
): Promise<void> {
  const engine = options.engine ?? createEngine()
  const owned = options.engine === undefined
  const limits = engine.rateLimits
  if (options.rateLimit !== undefined) limits.configure(options.rateLimit)
  const rateLimited = options.responses?.rate_limited ?? null
  if (rateLimited !== null && typeof rateLimited !== 'function')
    throw new ConfigError('responses.rate_limited must be a function (request, error) => response.')
  app.decorate('switchyard', engine)
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
  const getSlots = new Map<string, RouteSlot>()
  app.addHook('onRoute', (route) => {
    // The admin API stays reachable whatever the state of the app's routes.
    if (route.config?.switchyardAdmin === true) return
    attachRoute(engine, limits, rateLimited, route, getSlots)
  })
  if (options.admin !== undefined) await app.register(adminApp, { ...options.admin, engine })
  if (owned)
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
  route: RouteOptions,
  getSlots: Map<string, RouteSlot>,
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
  for (const method of methods) {
    if (!isHttpMethod(method)) continue
    // Fastify adds a HEAD route for every GET route; it follows the GET route's state.
    const twin = method === 'HEAD' ? getSlots.get(route.url) : undefined
    const slot = twin ?? engine.registerRoute(method, route.url, declaration)
    if (twin === undefined && rateLimit !== undefined) limits.declare(slot, rateLimit.policy)
    if (method === 'GET') getSlots.set(route.url, slot)
    slots.set(method, slot)
  }
  if (slots.size === 0) return
  const response = rateLimit?.response ?? rateLimited
  route.onRequest = [routeHook(engine, slots as Map<HttpMethod, RouteSlot>, response), ...kept]
}

function routeHook(
  engine: Engine,
  slots: Map<HttpMethod, RouteSlot>,
  response: RateLimitResponseFactory | null,
): onRequestHookHandler {
  if (slots.size === 1) {
    const slot = slots.values().next().value as RouteSlot
    return function switchyardEnforce(
      request: FastifyRequest,
      reply: FastifyReply,
      done: HookHandlerDoneFunction,
    ) {
      enforceRequest(engine, slot, request, reply, done, response)
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
    enforceRequest(engine, slot, request, reply, done, response)
  }
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
