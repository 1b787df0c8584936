/**
 * `GET /api/events`: the server-sent event stream (see common/sse-hub.ts). Authenticated like every
 * other endpoint; a browser's EventSource sends the session cookie.
 *
 * Why the stream checks its session again: it may stay open for days, far longer than the token
 * that opened it. It ends at once when that token is logged out on this instance, when the token
 * expires, and within `sessionCheckInterval` when it is revoked elsewhere (another instance
 * sharing the store) — the token is looked up again at that interval. The same holds for an API token: its streams
 * end at once when it is revoked on this instance or expires, and within the interval when it
 * is revoked on another.
 */
import type { ServerResponse } from 'node:http'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { endHeadRequest, writeStreamHead } from '../../common/sse-stream.js'
import { ValidationError } from '../../core/errors.js'
import { ADMIN_ROUTE, type AdminInstance } from '../context.js'
import type { EventHub } from '../../common/sse-hub.js'
import type { SessionManager } from '../auth/sessions.js'
import type { ApiTokens } from '../auth/api-tokens.js'
import { ErrorBody } from '../schemas.js'

/** Registers the event-stream endpoint. */
export function eventRoutes(
  app: AdminInstance,
  hub: EventHub,
  sessions: SessionManager | null,
  streams: SessionStreams,
  checkIntervalMs: number,
  apiTokens: ApiTokens | null = null,
): void {
  app.get(
    '/api/events',
    {
      config: ADMIN_ROUTE,
      schema: {
        summary:
          'Server-sent events: route, maintenance, audit, flag, segment, rate-limit policy, blocked-request, flag-evaluation and (with the task admin in one console) task-audit events (resume with Last-Event-ID)',
        tags: ['events'],
        produces: ['text/event-stream'],
        response: {
          200: Type.String({
            description:
              'An event stream: per event `id`, `event` (route_state, global_maintenance, service_maintenance, audit, flag, segment, rl_policy, global_rl_policy, service_rl_policy, rl_hit, flag_evaluation, task_audit) and `data` (JSON)',
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
      serveSessionStream(
        request,
        reply,
        sessions,
        streams,
        checkIntervalMs,
        (response) => hub.connect(response, lastEventId),
        false,
        apiTokens,
      )
    },
  )
}

/**
 * Serves an authenticated event stream: takes the response over from Fastify, writes the stream
 * headers, lets `connect` attach it (it returns its remover) and ends it when its session ends
 * (logout, revocation on another instance, expiry) — the rule of every admin stream.
 * `untilClose` delimits the body by the connection's end (see {@link writeStreamHead}).
 */
export function serveSessionStream(
  request: FastifyRequest,
  reply: FastifyReply,
  sessions: SessionManager | null,
  streams: SessionStreams,
  checkIntervalMs: number,
  connect: (response: ServerResponse) => () => void,
  untilClose = false,
  apiTokens: ApiTokens | null = null,
): void {
  void reply.hijack()
  const response = reply.raw
  writeStreamHead(response, untilClose)
  if (endHeadRequest(request.method, response)) return
  const disconnect = connect(response)
  const session = request.switchyardAdmin?.session ?? null
  const token = request.switchyardAdmin?.token ?? null
  let stopWatching: () => void = () => undefined
  const end = () => {
    stopWatching()
    disconnect()
    if (!response.writableEnded) response.end()
  }
  const apiToken = request.switchyardAdmin?.apiToken
  if (sessions !== null && session !== null && token !== null) {
    const credential = {
      streamKey: session.tokenHash,
      untilExpiry: Math.max(0, Date.parse(session.expires_at) - sessions.now()),
      lookUp: () => sessions.resolve(token),
    }
    stopWatching = watchCredential(credential, streams, end, checkIntervalMs)
  } else if (apiTokens !== null && apiToken !== undefined) {
    const expiresAt = apiTokens.expiresAt(apiToken)
    const credential = {
      streamKey: apiTokenStreamKey(apiToken.id),
      untilExpiry: expiresAt === null ? null : Math.max(0, expiresAt - apiTokens.now()),
      lookUp: () => apiTokens.check(apiToken),
    }
    stopWatching = watchCredential(credential, streams, end, checkIntervalMs)
  }
  request.raw.once('close', () => {
    stopWatching()
    disconnect()
  })
}

/** The key under which {@link SessionStreams} keeps the streams of an API token. */
export function apiTokenStreamKey(id: string): string {
  // Session keys are hex hashes: no API-token key can collide with one.
  return `api-token:${id}`
}

/** Ends the streams of a session (or API token) when it is revoked on this instance. */
export class SessionStreams {
  private readonly enders = new Map<string, Set<() => void>>()

  /** Registers `end` for the session stored under `tokenHash`; returns the unregisterer. */
  add(tokenHash: string, end: () => void): () => void {
    let set = this.enders.get(tokenHash)
    if (set === undefined) {
      set = new Set()
      this.enders.set(tokenHash, set)
    }
    set.add(end)
    return () => {
      set.delete(end)
      if (set.size === 0) this.enders.delete(tokenHash)
    }
  }

  /** Ends every stream of the session stored under `tokenHash`. */
  revoked(tokenHash: string): void {
    for (const end of [...(this.enders.get(tokenHash) ?? [])]) end()
  }
}

/** What a stream's credential watch needs: the credential it ends with. */
interface WatchedCredential {
  /** The key under which a local logout or revocation ends its streams (`streams`). */
  streamKey: string
  /** Milliseconds until it expires; null when it never does. */
  untilExpiry: number | null
  /** Looks the credential up in the store again: null once it is revoked or expired. */
  lookUp: () => Promise<unknown>
}

/**
 * Watches one stream's credential (a session or an API token): ends the stream at expiry (a
 * timer), at a local logout or revocation (`streams`) and when a periodic lookup in the store no
 * longer finds it. Returns the function that stops watching.
 */
function watchCredential(
  credential: WatchedCredential,
  streams: SessionStreams,
  end: () => void,
  checkIntervalMs: number,
): () => void {
  const unregister = streams.add(credential.streamKey, end)
  const { untilExpiry } = credential
  // setTimeout takes at most 2^31 − 1 ms; the periodic check covers longer lifetimes.
  const expiry =
    untilExpiry !== null && untilExpiry < 2 ** 31 - 1 ? setTimeout(end, untilExpiry) : null
  expiry?.unref()
  let checking = false
  const check = setInterval(() => {
    if (checking) return
    checking = true
    credential
      .lookUp()
      .then((current) => {
        if (current === null) end()
      })
      // A store that cannot answer is no proof of revocation: keep the stream, check again.
      .catch(() => undefined)
      .finally(() => {
        checking = false
      })
  }, checkIntervalMs)
  check.unref()
  return () => {
    unregister()
    if (expiry !== null) clearTimeout(expiry)
    clearInterval(check)
  }
}
