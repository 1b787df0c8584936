/**
 * Turns an enforcement {@link Decision} into a Fastify reply inside an `onRequest` hook.
 * Fail-open: an error anywhere in enforcement is logged and the request goes through.
 */
import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify'
import { PASS, type Decision } from '../core/decision.js'
import type { Engine } from '../core/engine.js'
import type { RouteSlot } from '../core/route-slot.js'

/** Decides a request through `engine` and applies the decision to the reply. */
export function enforceRequest(
  engine: Engine,
  slot: RouteSlot,
  request: FastifyRequest,
  reply: FastifyReply,
  done: HookHandlerDoneFunction,
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
      (resolved) => applyDecision(resolved, reply, done),
      (error: unknown) => failOpen(request, error, done),
    )
    return
  }
  applyDecision(decision, reply, done)
}

/** Applies a resolved decision: continue (with headers), answer now, or answer not-found. */
export function applyDecision(
  decision: Decision,
  reply: FastifyReply,
  done: HookHandlerDoneFunction,
): void {
  switch (decision.action) {
    case 'pass':
      if (decision.headers !== null)
        for (const [name, value] of decision.headers) reply.header(name, value)
      done()
      return
    case 'block':
      for (const [name, value] of decision.headers) reply.header(name, value)
      reply.code(decision.statusCode).type('application/json; charset=utf-8').send(decision.body)
      return
    case 'not_found':
      reply.callNotFound()
      return
  }
}

function failOpen(request: FastifyRequest, error: unknown, done: HookHandlerDoneFunction): void {
  request.log.error(
    { err: error },
    'switchyard: enforcement failed; letting the request through (fail-open)',
  )
  done()
}
