/**
 * The OFREP endpoints on the admin mount (OpenFeature Remote Evaluation Protocol), so that
 * every stock OFREP provider — Go, Python, Java, .NET, browsers — evaluates switchyard flags:
 *
 *   POST {admin}/ofrep/v1/evaluate/flags/{key}   one flag: 200, 400, 404, 500 (OFREP bodies)
 *   POST {admin}/ofrep/v1/evaluate/flags         every flag; ETag, If-None-Match → 304
 *   GET  {admin}/ofrep/stream?token=…&since=…    change notifications (see streams.ts)
 *   OPTIONS on the two POST routes               CORS preflights (the `ofrep.cors` origins)
 *
 * Credentials: the admin's bearer token or session, or a read-only evaluation key. The routes
 * live in their own encapsulated context so that every error, including a malformed body,
 * leaves in the OFREP shape; 401 and 403 come from the admin auth guard. Each caller
 * (credential and client address) has a token bucket (429 with `Retry-After`), and while the
 * flags have not been loaded the endpoints answer 503 with `Retry-After` rather than report
 * every flag as missing. The client address follows the admin app's proxy rule (its trusted
 * proxies, or Fastify's own `trustProxy` when the app set it): behind a proxy each client has
 * its own bucket, and a peer that is not a trusted proxy cannot pick one with
 * `X-Forwarded-For`.
 *
 * A key limited to some flags (flag-scope.ts) sees only those: any other flag answers 404
 * FLAG_NOT_FOUND exactly as a missing one, and bulk answers, their ETags and the change
 * stream leave it out.
 */
import { endHeadRequest } from '../../common/sse-stream.js'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { SwitchyardError, toError } from '../../core/errors.js'
import type { FlagService } from '../../flags/service.js'
import type { EvaluationKeyRecord } from '../../stores/types.js'
import { clientAddress } from '../auth/client.js'
import type { EvaluationKeys } from '../auth/evaluation-keys.js'
import { scopeOf, type FlagScope } from '../auth/flag-scope.js'
import { ADMIN_ROUTE, PUBLIC_ROUTE, type AdminContext, type AdminInstance } from '../context.js'
import {
  failureJson,
  ifNoneMatch,
  isProblem,
  readRequest,
  type OfrepEvaluator,
} from './evaluate.js'
import { addCorsHeaders, allowedOrigin, answerPreflight, type OfrepLimiter } from './http.js'
import type { ResolvedOfrepOptions } from './options.js'
import type { OfrepStreams } from './streams.js'

/** What the OFREP routes work with. */
export interface OfrepDependencies {
  context: AdminContext
  options: ResolvedOfrepOptions
  service: FlagService
  evaluator: OfrepEvaluator
  limiter: OfrepLimiter
  streams: OfrepStreams
  keys: EvaluationKeys
}

/**
 * Route config of the evaluation endpoints: admin credentials or an evaluation key. An
 * evaluation is a read, POST or not: a viewer may make one, as an evaluation key may. They are
 * POSTs that change nothing, called by browser providers on other origins (`ofrep.cors`), so
 * the cross-origin write rule does not apply to them.
 */
const OFREP_ROUTE = {
  ...ADMIN_ROUTE,
  evaluationKey: true,
  role: 'viewer',
  crossOrigin: true,
} as const
const BODY_LIMIT = 64 * 1024
const SINGLE = '/ofrep/v1/evaluate/flags/:key'
const BULK = '/ofrep/v1/evaluate/flags'
const STREAM = '/ofrep/stream'
/**
 * Longest `since` accepted (a fingerprint is 22 characters). The slack keeps URLs that a
 * browser cached in local storage valid should the fingerprint grow; longer is a 400.
 */
const MAX_SINCE_LENGTH = 64

/** Registers the OFREP endpoints in their own context (error handler, CORS). */
export function ofrepRoutes(app: AdminInstance, deps: OfrepDependencies): void {
  const { options, evaluator } = deps
  void app.register((instance, _opts, done) => {
    const ofrep: AdminInstance = instance.withTypeProvider<TypeBoxTypeProvider>()
    ofrep.setErrorHandler(errorHandler(options))
    ofrep.post(
      SINGLE,
      {
        config: OFREP_ROUTE,
        bodyLimit: BODY_LIMIT,
        schema: {
          summary:
            'OFREP: evaluate one flag for {"context": {...}} → {key, value, reason, variant, metadata}',
          tags: ['ofrep'],
        },
      },
      (request, reply) => {
        // No params schema: its per-request conversion costs more than the evaluation.
        const { key } = request.params as { key: string }
        addCorsHeaders(options, request, reply)
        const parsed = admit(deps, request, reply)
        if (parsed === null) return reply
        if (isProblem(parsed)) {
          return json(reply, 400, failureJson(key, parsed.errorCode, parsed.errorDetails))
        }
        const scope = scopeOf(request.switchyardAdmin?.evaluationKey)
        const answer = evaluator.evaluate(key, parsed.context, scope)
        return json(reply, answer.status, answer.body)
      },
    )

    ofrep.post(
      BULK,
      {
        config: OFREP_ROUTE,
        bodyLimit: BODY_LIMIT,
        schema: {
          summary:
            'OFREP: evaluate every flag for {"context": {...}} → {flags: [...]}; ETag, If-None-Match → 304',
          tags: ['ofrep'],
        },
      },
      async (request, reply) => {
        addCorsHeaders(options, request, reply)
        const parsed = admit(deps, request, reply)
        if (parsed === null) return reply
        if (isProblem(parsed)) return json(reply, 400, JSON.stringify(parsed))
        const principal = request.switchyardAdmin
        const key = principal?.evaluationKey ?? null
        const scope = scopeOf(key)
        // The answer depends on the credential too (its stream URL), so the ETag names it.
        const etag = evaluator.etag(parsed.flat, key?.id ?? principal?.via ?? 'open', scope)
        void reply.header('etag', etag)
        if (ifNoneMatch(request.headers['if-none-match'], etag)) return reply.status(304).send()
        const flags = evaluator.evaluateAllJson(parsed.context, scope)
        const streams = eventStreamsJson(deps, principal?.via, key, scope)
        return json(reply, 200, `{"flags":${flags}${streams}}`)
      },
    )

    for (const path of [SINGLE, BULK]) {
      ofrep.options(
        path,
        { config: PUBLIC_ROUTE, schema: { summary: 'OFREP: CORS preflight', tags: ['ofrep'] } },
        (request, reply) => {
          answerPreflight(options, 'POST', request, reply)
        },
      )
    }

    ofrep.get(
      STREAM,
      {
        config: PUBLIC_ROUTE,
        schema: {
          summary:
            'OFREP: change notifications (SSE) for browser providers; the URL comes from a bulk answer',
          tags: ['ofrep'],
          querystring: Type.Object({
            token: Type.Optional(Type.String({ maxLength: 200 })),
            since: Type.Optional(Type.String({ maxLength: MAX_SINCE_LENGTH })),
          }),
        },
      },
      async (request, reply) => openStream(deps, request.query, request, reply),
    )
    done()
  })
}

/**
 * The checks before an evaluation: the rate limit, flags loaded, a readable body. Answers and
 * returns null when the request must stop here.
 */
function admit(
  deps: OfrepDependencies,
  request: FastifyRequest,
  reply: FastifyReply,
): ReturnType<typeof readRequest> | null {
  const address = clientAddress(request, deps.context.proxies)
  const wait = deps.limiter.retryAfter(credentialOf(request), address)
  if (wait > 0) {
    void reply
      .status(429)
      .header('retry-after', String(wait))
      .send({ errorDetails: `Too many OFREP requests: try again in ${wait} s.` })
    return null
  }
  if (!deps.service.loaded || deps.service.status === 'fatal') {
    void reply
      .status(503)
      .header('retry-after', '5')
      .send({ errorDetails: 'The flags are not loaded yet (the store is unreachable).' })
    return null
  }
  return readRequest(request.body)
}

/**
 * The credential a request counts against (evaluation key id, admin user, or nobody in open
 * mode); the limiter pairs it with the client address. Never anything the client can choose
 * freely. Key ids (`ek_…`) and the `user:` prefix cannot collide.
 */
function credentialOf(request: FastifyRequest): string {
  const principal = request.switchyardAdmin
  if (principal?.via === 'evaluation_key') return principal.evaluationKey?.id ?? 'key:'
  return principal?.session != null ? `user:${principal.username}` : 'open'
}

/**
 * `,"eventStreams":[…]` for callers a browser could be (evaluation keys, open mode), else ''
 * (an admin token does not belong in a browser). The URL carries the fingerprint of the
 * flags the answer was computed from (`since`), so that the stream can tell the page at once
 * when they changed before it attached. The ETag starts with the same fingerprint, so a 304
 * never stands for an answer with another URL.
 */
function eventStreamsJson(
  deps: OfrepDependencies,
  via: string | undefined,
  key: EvaluationKeyRecord | null,
  scope: FlagScope | null,
): string {
  if (deps.options.maxStreams === 0) return ''
  const mount = deps.context.mountPath === '/' ? '' : deps.context.mountPath
  let requestUri = `${mount}${STREAM}?`
  if (key !== null) requestUri += `token=${encodeURIComponent(deps.keys.streamToken(key))}&`
  else if (via !== 'open') return ''
  requestUri += `since=${encodeURIComponent(deps.evaluator.fingerprint(scope))}`
  return `,"eventStreams":${JSON.stringify([{ type: 'sse', endpoint: { requestUri } }])}`
}

async function openStream(
  deps: OfrepDependencies,
  { token, since }: { token?: string; since?: string },
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<FastifyReply> {
  addCorsHeaders(deps.options, request, reply)
  let record: EvaluationKeyRecord | null = null
  if (deps.context.sessions !== null) {
    record = await deps.keys.verifyStreamToken(token ?? '')
    if (record === null) {
      return reply.status(401).send({ errorDetails: 'Missing, invalid or revoked stream token.' })
    }
  }
  const keyId = record?.id ?? null
  const address = clientAddress(request, deps.context.proxies)
  const wait = deps.limiter.retryAfter(`stream:${keyId ?? 'open'}`, address)
  if (wait > 0) {
    return reply
      .status(429)
      .header('retry-after', String(wait))
      .send({ errorDetails: `Too many connections: try again in ${wait} s.` })
  }
  // Key ids (`ek_…`) and the `address:` prefix cannot collide.
  const holder = keyId ?? `address:${address}`
  if (!deps.streams.hasRoom || !deps.streams.hasRoomFor(holder)) {
    // The same answer for a full server and for a key at its own cap: the provider polls.
    return reply
      .status(503)
      .header('retry-after', '30')
      .send({
        errorDetails: deps.streams.hasRoom
          ? 'Too many open change streams for this key; poll instead.'
          : 'Too many open change streams; poll instead.',
      })
  }
  const header = request.headers['last-event-id']
  const lastEventId =
    typeof header === 'string' && /^\d{1,15}$/.test(header) ? Number(header) : null
  void reply.hijack()
  const origin = allowedOrigin(deps.options, request)
  reply.raw.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache, no-transform',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
    ...(origin === null ? {} : { 'access-control-allow-origin': origin, vary: 'Origin' }),
  })
  if (endHeadRequest(request.method, reply.raw)) return reply
  const owner = { keyId, holder, scope: scopeOf(record) }
  const disconnect = deps.streams.connect(reply.raw, owner, lastEventId, since ?? null)
  request.raw.once('close', disconnect)
  return reply
}

function json(reply: FastifyReply, status: number, body: string): FastifyReply {
  return reply.status(status).type('application/json; charset=utf-8').send(body)
}

/**
 * Errors in the OFREP shape: a body that is not JSON is a 400 PARSE_ERROR (with the flag key
 * on the single endpoint); the guard's 401 and 403 and the HTTP layer's 413 and 415 keep their
 * status with `{errorDetails}`; anything else is a 500 GENERAL, logged. Error answers carry
 * the CORS headers too, so that a browser can read them.
 */
function errorHandler(options: ResolvedOfrepOptions) {
  return (error: FastifyError, request: FastifyRequest, reply: FastifyReply): void => {
    addCorsHeaders(options, request, reply)
    handleError(error, request, reply)
  }
}

function handleError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const key = (request.params as { key?: unknown } | undefined)?.key
  if (
    error.code === 'FST_ERR_CTP_INVALID_JSON_BODY' ||
    error.code === 'FST_ERR_CTP_EMPTY_JSON_BODY'
  ) {
    const details = `The body is not valid JSON: ${error.message}`
    const body =
      typeof key === 'string'
        ? failureJson(key, 'PARSE_ERROR', details)
        : JSON.stringify({ errorCode: 'PARSE_ERROR', errorDetails: details })
    void json(reply, 400, body)
    return
  }
  const status =
    error instanceof SwitchyardError
      ? error.statusCode
      : typeof error.statusCode === 'number'
        ? error.statusCode
        : 500
  if (status >= 400 && status < 500) {
    void reply.status(status).send({ errorDetails: error.message })
    return
  }
  request.log.error({ err: toError(error) }, 'switchyard OFREP: unexpected error')
  const details = 'Internal error; see the server log.'
  void json(
    reply,
    500,
    typeof key === 'string'
      ? failureJson(key, 'GENERAL', details)
      : JSON.stringify({ errorCode: 'GENERAL', errorDetails: details }),
  )
}
