/**
 * The dependency form: a decorator hook used without the plugin enforces on its own.
 *
 * Such hooks share one process-wide standalone engine (memory store, `CTL_ENV`), created on
 * first use; `setStandaloneEngine()` binds them to an engine of the app's choosing instead, so
 * runtime changes and counters are shared with it. The route is registered with the engine on
 * its first request, when Fastify tells the hook which route it belongs to.
 *
 * A request is enforced once however many switchyard hooks its route carries: the first hook
 * runs the whole pipeline, the others only contribute their declarations. (Without the plugin,
 * the first request of a route is decided before later hooks have declared anything, so a
 * route combining decorators should use the plugin.)
 */
import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify'
import type { Engine } from '../core/engine.js'
import { createEngine } from '../create-engine.js'
import type { RouteSlot } from '../core/route-slot.js'
import type { HookDeclaration } from './declarations.js'
import { enforceRequest } from './respond.js'

const kEnforced = Symbol('switchyard.enforced')
type MaybeEnforced = FastifyRequest & { [kEnforced]?: true }

let standalone: Engine | null = null

/** The engine used by decorator hooks running without the plugin. */
export function standaloneEngine(): Engine {
  if (standalone === null) {
    standalone = createEngine()
    void standalone.start()
  }
  return standalone
}

/** Binds decorator hooks running without the plugin to `engine` (call before the first request). */
export function setStandaloneEngine(engine: Engine): void {
  standalone = engine
  void engine.start()
}

/** Builds the enforcing body of a decorator hook for the dependency form. */
export function standaloneHook(
  declaration: HookDeclaration,
): (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => void {
  const slots = new WeakMap<Engine, Map<string, RouteSlot>>()
  const response = declaration.rateLimit?.response ?? null
  return (request, reply, done) => {
    const engine = standaloneEngine()
    let byKey = slots.get(engine)
    if (byKey === undefined) {
      byKey = new Map()
      slots.set(engine, byKey)
    }
    const path = request.routeOptions.url ?? request.url
    const key = `${request.method}:${path}`
    let slot = byKey.get(key)
    if (slot === undefined) {
      // The first app whose route reaches the engine lends it its logger (unless it has one).
      engine.attachLogger(request.server.log.child({ module: 'switchyard' }))
      slot = engine.registerRoute(request.method, path, declaration.lifecycle ?? null)
      if (declaration.rateLimit !== undefined)
        engine.rateLimits.declare(slot, declaration.rateLimit.policy)
      byKey.set(key, slot)
    }
    const seen = request as MaybeEnforced
    if (seen[kEnforced] === true) {
      done()
      return
    }
    seen[kEnforced] = true
    enforceRequest(engine, slot, request, reply, done, response)
  }
}
