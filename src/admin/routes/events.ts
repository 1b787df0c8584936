/**
 * `GET /api/events`: the server-sent event stream (see common/sse-hub.ts). Authenticated like every
 * other endpoint; a browser's EventSource sends the session cookie.
 */
import { Type } from 'typebox'
import { ValidationError } from '../../core/errors.js'
import { ADMIN_ROUTE, type AdminInstance } from '../context.js'
import type { EventHub } from '../../common/sse-hub.js'
import { ErrorBody } from '../schemas.js'

/** Registers the event-stream endpoint. */
export function eventRoutes(app: AdminInstance, hub: EventHub): void {
  app.get(
    '/api/events',
    {
      config: ADMIN_ROUTE,
      schema: {
        summary:
          'Server-sent events: route, maintenance, audit, flag, segment, rate-limit policy, blocked-request and flag-evaluation events (resume with Last-Event-ID)',
        tags: ['events'],
        produces: ['text/event-stream'],
        response: {
          200: Type.String({
            description:
              'An event stream: per event `id`, `event` (route_state, global_maintenance, service_maintenance, audit, flag, segment, rl_policy, global_rl_policy, service_rl_policy, rl_hit, flag_evaluation) and `data` (JSON)',
          }),
          400: ErrorBody,
          401: ErrorBody,
        },
      },
    },
    (request, reply) => {
      const header = request.headers['last-event-id']
      let lastEventId: number | null = null
      if (typeof header === 'string' && header !== '') {
        if (!/^\d{1,15}$/.test(header)) {
          throw new ValidationError('Last-Event-ID must be an event id (a non-negative integer).', {
            details: [{ field: 'Last-Event-ID', message: 'expected a non-negative integer' }],
          })
        }
        lastEventId = Number(header)
      }
      void reply.hijack()
      const response = reply.raw
      response.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache, no-transform',
        connection: 'keep-alive',
        'x-accel-buffering': 'no',
      })
      const disconnect = hub.connect(response, lastEventId)
      request.raw.once('close', disconnect)
    },
  )
}
