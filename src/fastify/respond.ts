/**
 * Turns an enforcement {@link Decision} into a Fastify reply inside an `onRequest` hook.
 * Fail-open: an error anywhere in enforcement is logged and the request goes through.
 */
import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify'
import { PASS, type Decision } from '../core/decision.js'
import type { Engine } from '../core/engine.js'
import type { RouteSlot } from '../core/route-slot.js'
import { toError } from '../core/errors.js'
import { isRateLimitBlock, type RateLimitBlockDecision } from '../rate-limit/exceeded.js'
import type { RateLimitResponse, RateLimitResponseFactory } from './rate-limit.js'

/**
 * Told of every request that enforcement did not simply pass (blocked, not found, or passed
 * with headers), with its route; the metrics count the blocked ones. It never sees a request
 * that passes plainly, so the common path costs nothing more with it.
 */
export type DecisionObserver = (slot: RouteSlot, decision: Decision) => void

/**
 * Decides a request through `engine` and applies the decision to the reply; a 429 goes through
 * `rateLimited` (the route's or the plugin's custom response factory) when one is given.
 */
export function enforceRequest(
  engine: Engine,
  slot: RouteSlot,
  request: FastifyRequest,
  reply: FastifyReply,
  done: HookHandlerDoneFunction,
  rateLimited: RateLimitResponseFactory | null = null,
  observe: DecisionObserver | null = null,
): void {
  let decision: Decision | Promise<Decision>
  try {
    decision = engine.decide(slot, request)
  } catch (error) {
    failOpen(request, error, done)
    return
  }
  if (decision === PASS) {
    done()
    return
  }
  if (decision instanceof Promise) {
    decision.then(
      (resolved) => {
        if (observe !== null && resolved !== PASS) observeSafely(observe, slot, resolved, request)
        applyDecision(resolved, reply, done, rateLimited)
      },
      (error: unknown) => failOpen(request, error, done),
    )
    return
  }
  if (observe !== null) observeSafely(observe, slot, decision, request)
  applyDecision(decision, reply, done, rateLimited)
}

/** Applies a resolved decision: continue (with headers), answer now, or answer not-found. */
export function applyDecision(
  decision: Decision,
  reply: FastifyReply,
  done: HookHandlerDoneFunction,
  rateLimited: RateLimitResponseFactory | null = null,
): void {
  switch (decision.action) {
    case 'pass':
      if (decision.headers !== null)
        for (const [name, value] of decision.headers) reply.header(name, value)
      done()
      return
    case 'block':
      if (rateLimited !== null && isRateLimitBlock(decision)) {
        sendRateLimited(decision, reply, rateLimited)
        return
      }
      for (const [name, value] of decision.headers) reply.header(name, value)
      reply.code(decision.statusCode).type('application/json; charset=utf-8').send(decision.body)
      return
    case 'not_found':
      reply.callNotFound()
      return
  }
}

/** Runs the observer; whatever it throws is logged and never changes the answer. */
function observeSafely(
  observe: DecisionObserver,
  slot: RouteSlot,
  decision: Decision,
  request: FastifyRequest,
): void {
  try {
    observe(slot, decision)
  } catch (error) {
    request.log.error({ err: error }, 'switchyard: decision observer failed')
  }
}

function failOpen(request: FastifyRequest, error: unknown, done: HookHandlerDoneFunction): void {
  request.log.error(
    { err: error },
    'switchyard: enforcement failed; letting the request through (fail-open)',
  )
  done()
}

/**
 * Sends a 429 through a custom factory (per-route, then plugin-wide, then the built-in body); the rate-limit headers are set first so
 * the factory's own headers may override them. A factory that throws, rejects or returns
 * something unusable is logged and the built-in 429 is sent instead.
 */
function sendRateLimited(
  decision: RateLimitBlockDecision,
  reply: FastifyReply,
  factory: RateLimitResponseFactory,
): void {
  for (const [name, value] of decision.headers) reply.header(name, value)
  const builtIn = () => {
    reply.code(decision.statusCode).type('application/json; charset=utf-8').send(decision.body)
  }
  const send = (response: RateLimitResponse) => {
    if (typeof response !== 'object' || (response as unknown) === null || !('body' in response)) {
      throw new TypeError(
        'a rate-limit response factory must return { statusCode?, body, headers? }',
      )
    }
    for (const [name, value] of Object.entries(response.headers ?? {})) reply.header(name, value)
    reply.code(response.statusCode ?? 429).send(response.body)
  }
  const failed = (error: unknown) => {
    reply.request.log.error(
      { err: toError(error) },
      'switchyard: rate-limit response factory failed',
    )
    builtIn()
  }
  try {
    const result = factory(reply.request, decision.exceeded)
    if (result instanceof Promise) result.then(send).catch(failed)
    else send(result)
  } catch (error) {
    failed(error)
  }
}
