/**
 * A span per change made through the admin app: every write request (POST, PUT, PATCH,
 * DELETE: route states, maintenance, flags, rate-limit policies…) is an `admin.change` span
 * named by its route, ending with the response. Reads make none, and neither do the POSTs that
 * every role may make (a flag evaluation, OFREP, logout): they change nothing an operator
 * manages, and an evaluation service would otherwise make a "change" span per evaluation.
 */
import type { Span } from '@opentelemetry/api'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { endSpanWithError, startSpan } from '../common/telemetry/tracing.js'

const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE'])

/** Adds the hooks that trace admin changes to `app` (no work while tracing is off). */
export function traceAdminChanges(app: FastifyInstance): void {
  const spans = new WeakMap<FastifyRequest, Span>()
  app.addHook('onRequest', (request, _reply, done) => {
    if (WRITES.has(request.method) && request.routeOptions.config.role !== 'viewer') {
      const route = request.routeOptions.url ?? request.url.split('?', 1)[0] ?? ''
      const span = startSpan(`admin.change ${request.method} ${route}`, {
        'http.request.method': request.method,
        'http.route': route,
      })
      if (span !== null) spans.set(request, span)
    }
    done()
  })
  app.addHook('onResponse', (request, reply, done) => {
    const span = spans.get(request)
    if (span !== undefined) {
      spans.delete(request)
      span.setAttribute('http.response.status_code', reply.statusCode)
      // A refused change is a failed operation.
      if (reply.statusCode >= 400) endSpanWithError(span, `HTTP ${reply.statusCode}`, false)
      else span.end()
    }
    done()
  })
}
