/**
 * The endpoints of multi-service mode (docs/multi-service.md), used by `fastify-switchyard/sdk` apps:
 *
 * - `POST /api/sdk/register` — an app registers its declared routes under its app id;
 * - `GET /api/sdk/events?app_id=` — the app's event stream: a `snapshot`, then its changes;
 * - `POST /api/sdk/report` — the app's blocked requests and audit entries, batched.
 *
 * All three need operator credentials; an SDK app runs on a service token (docs/security.md),
 * which may call them only with `app_id` = its service. An open stream ends when the token that
 * opened it is logged out or revoked, here at once and on another instance within the
 * session-check interval, or expires (the same watch as the admin event stream).
 *
 * The actor of a reported audit entry is whoever is authenticated (e.g. `token:orders-app`):
 * the actor an app names in the entry is its own user, kept as `on_behalf_of`, never taken as
 * the actor, so an app cannot write entries in anyone else's name.
 *
 * Versions: each answer carries the server's protocol version in the `Switchyard-Protocol`
 * header. A request naming another major version is refused (400 `SDK_PROTOCOL_UNSUPPORTED`)
 * after authentication and before anything changes; any minor, and no header at all (the
 * oldest SDKs), is served. Fields a newer SDK adds to a body are accepted and dropped before
 * anything is stored.
 */
import { Type } from 'typebox'
import { randomUUID } from 'node:crypto'
import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify'
import { ADMIN_ROUTE, type AdminContext, type AdminInstance } from '../context.js'
import { appIdScope } from './scopes.js'
import { actorOf } from '../auth/guard.js'
import { ErrorBody, RouteStateList } from '../schemas.js'
import { serveSessionStream } from './events.js'
import type { RemoteRoutes } from '../../sdk/server/remote-routes.js'
import type { SdkStreams } from '../../sdk/server/streams.js'
import { SdkProtocolError } from '../../sdk/errors.js'
import {
  EventsQuery,
  knownFields,
  parseProtocol,
  PROTOCOL_HEADER,
  PROTOCOL_VERSION,
  protocolCompatible,
  RegisterBody,
  ReportBody,
} from '../../sdk/wire.js'

/** What the SDK endpoints need beyond the admin context. */
export interface SdkEndpoints {
  remote: RemoteRoutes
  streams: SdkStreams
}

/** Registers the SDK endpoints. */
export function sdkRoutes(app: AdminInstance, context: AdminContext, sdk: SdkEndpoints): void {
  const { engine } = context
  const errors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 503: ErrorBody }
  // Each call names its app: a service token may name only its own service (service-scope.ts).
  const config = { ...ADMIN_ROUTE, serviceScope: appIdScope }
  // Every SDK endpoint names the server's version and checks the app's.
  const versioned = { onRequest: announceProtocol, preValidation: checkProtocol }

  app.post(
    '/api/sdk/register',
    {
      config,
      ...versioned,
      schema: {
        summary:
          'Registers an SDK app’s declared routes: a runtime state on the server wins, new routes get their declared state, routes no longer declared are reported as vanished',
        tags: ['sdk'],
        body: RegisterBody,
        response: {
          200: Type.Object({ states: RouteStateList, vanished: Type.Array(Type.String()) }),
          ...errors,
        },
      },
    },
    (request) => {
      const { app_id: service, routes } = knownFields(RegisterBody, request.body)
      return sdk.remote.register(service, routes)
    },
  )

  app.get(
    '/api/sdk/events',
    {
      config,
      ...versioned,
      schema: {
        summary:
          'An SDK app’s event stream: a `snapshot` event, then every change of its service and of the global scope',
        tags: ['sdk'],
        produces: ['text/event-stream'],
        querystring: EventsQuery,
        response: {
          200: Type.String({
            description:
              'An event stream: `snapshot` first, then route_state, global_maintenance, service_maintenance, rl_policy, global_rl_policy, service_rl_policy, flag, segment',
          }),
          400: ErrorBody,
          401: ErrorBody,
          403: ErrorBody,
        },
      },
    },
    (request, reply) => {
      // The stream's head is written on the raw response, past Fastify's reply headers.
      reply.raw.setHeader(PROTOCOL_HEADER, PROTOCOL_VERSION)
      // One frame per write: Nagle's algorithm would hold small frames back for tens of ms.
      request.raw.socket.setNoDelay(true)
      serveSessionStream(
        request,
        reply,
        context.sessions,
        context.streams,
        context.sessionCheckMs,
        (response) => sdk.streams.connect(response, request.query.app_id),
        // Every change is written to every app: plain writes (see writeStreamHead).
        true,
        context.apiTokens,
      )
    },
  )

  app.post(
    '/api/sdk/report',
    {
      config,
      ...versioned,
      schema: {
        summary:
          'An SDK app’s blocked requests and audit entries, batched: they join the blocked-request log and the audit log under the app’s service',
        tags: ['sdk'],
        body: ReportBody,
        response: {
          200: Type.Object({ hits: Type.Integer(), audit: Type.Integer() }),
          ...errors,
        },
      },
    },
    async (request) => {
      const { app_id: service, hits, audit } = knownFields(ReportBody, request.body)
      const { actor } = actorOf(request)
      // Ids are the server's (an app cannot overwrite or collide with other records), and so is
      // the service: an app reports for itself only. Each is announced (`rl_hit`) like a local one.
      for (const hit of hits)
        await engine.rateLimits.recordHit({ ...hit, id: randomUUID(), service })
      for (const entry of audit)
        engine.recordOperation({
          action: entry.action,
          route: entry.route,
          // The app's own service, whatever the entry says: an app reports for itself only.
          service,
          actor,
          platform: 'sdk',
          ...(entry.actor === '' || entry.actor === actor ? {} : { on_behalf_of: entry.actor }),
          reason: entry.reason,
          previous_status: entry.previous_status,
          new_status: entry.new_status,
        })
      return { hits: hits.length, audit: audit.length }
    },
  )
}

/** Names the server's protocol version on every answer of an SDK endpoint, errors included. */
function announceProtocol(
  _request: FastifyRequest,
  reply: FastifyReply,
  done: HookHandlerDoneFunction,
): void {
  reply.header(PROTOCOL_HEADER, PROTOCOL_VERSION)
  done()
}

/**
 * Refuses an SDK of another major protocol version (or a header that is not `major.minor`,
 * or several); no header is the oldest version, which this major serves.
 */
function checkProtocol(
  request: FastifyRequest,
  _reply: FastifyReply,
  done: HookHandlerDoneFunction,
): void {
  const raw = request.headers[PROTOCOL_HEADER]
  const sent = Array.isArray(raw) ? raw.join(', ') : raw
  const version = Array.isArray(raw) ? null : parseProtocol(raw)
  if (version !== null && protocolCompatible(version)) {
    done()
    return
  }
  const named = sent === undefined ? null : sent.slice(0, 40)
  done(
    new SdkProtocolError(
      `This server speaks SDK protocol ${PROTOCOL_VERSION}; the app sent ${JSON.stringify(named)} in Switchyard-Protocol. Run the app and the server on the same major version.`,
      { server_protocol: PROTOCOL_VERSION, client_protocol: named },
    ),
  )
}
