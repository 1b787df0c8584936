/**
 * The confinement of service tokens: an API token with a `service` (what an SDK app runs on)
 * may call only the endpoints that name the service a request touches (`config.serviceScope`),
 * and only when that service is its own. Everything else — the global scope, other services,
 * flags and segments, credentials, endpoints that declare no scope — is a 403 `FORBIDDEN`.
 *
 * Why a `preHandler`: the service is often in the body (`service` of a route-state change,
 * `app_id` of an SDK call), which is parsed and validated only after authentication. Nothing
 * has changed when it refuses: handlers run after it.
 */
import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify'
import { ForbiddenError } from '../../common/roles.js'

/** Route config `serviceScope` of endpoints that concern only the caller (e.g. `/api/auth/me`). */
export const callerScope = (request: FastifyRequest): string | null =>
  request.switchyardAdmin?.service ?? null

/** The `preHandler` hook that refuses a service token outside its service. */
export function serviceScopeHook(
  request: FastifyRequest,
  _reply: FastifyReply,
  done: HookHandlerDoneFunction,
): void {
  const own = request.switchyardAdmin?.service
  if (own === undefined || own === null) {
    done()
    return
  }
  const scope = request.routeOptions.config.serviceScope
  const touched = scope === undefined ? null : scope(request)
  if (touched === own) {
    done()
    return
  }
  done(
    new ForbiddenError(
      touched === null
        ? `A service token of ${own} may act only on its own service; this endpoint is outside it.`
        : `A service token of ${own} may act only on its own service, not on ${touched}.`,
    ),
  )
}
