/**
 * The HTTP concerns of the OFREP endpoints that are not evaluation: cross-origin access for
 * browsers (CORS) and the per-caller rate limit.
 *
 * CORS: the OFREP routes alone answer preflights, and only for the configured origins. A
 * browser's request carries `Authorization`, `Content-Type: application/json` and
 * `If-None-Match`, so it is always preflighted; the answers expose `ETag` (the web provider
 * reads it for conditional requests) and `Retry-After`. No cookies are involved: credentials
 * are evaluation keys in the `Authorization` header.
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { Clock } from '../../core/clock.js'
import type { CounterRule } from '../../rate-limit/algorithms.js'
import { MemoryCounters } from '../../rate-limit/counters/memory.js'
import type { Limit } from '../../rate-limit/limit.js'
import type { ResolvedOfrepOptions } from './options.js'

const ALLOWED_HEADERS = new Set(['authorization', 'content-type', 'if-none-match'])

/** The allowed origin to echo for a request, or null (no `Origin`, or not allowed). */
export function allowedOrigin(
  options: ResolvedOfrepOptions,
  request: FastifyRequest,
): string | null {
  const origin = request.headers.origin
  if (typeof origin !== 'string' || origin === '') return null
  if (options.cors === '*') return '*'
  return options.cors.has(origin.toLowerCase()) ? origin : null
}

/** Adds the CORS headers of an actual (non-preflight) OFREP response. */
export function addCorsHeaders(
  options: ResolvedOfrepOptions,
  request: FastifyRequest,
  reply: FastifyReply,
): void {
  const origin = allowedOrigin(options, request)
  if (origin === null) return
  void reply.header('access-control-allow-origin', origin)
  void reply.header('access-control-expose-headers', 'ETag, Retry-After')
  if (origin !== '*') void reply.header('vary', 'Origin')
}

/**
 * Answers a preflight: 204 with the allowed method and headers for an allowed origin asking
 * for `method`, 403 otherwise (the browser then refuses the request).
 */
export function answerPreflight(
  options: ResolvedOfrepOptions,
  method: string,
  request: FastifyRequest,
  reply: FastifyReply,
): void {
  const origin = allowedOrigin(options, request)
  const asked = request.headers['access-control-request-method']
  const headers = (request.headers['access-control-request-headers'] ?? '')
    .split(',')
    .map((name) => name.trim().toLowerCase())
    .filter((name) => name !== '')
  if (origin === null || asked !== method || !headers.every((name) => ALLOWED_HEADERS.has(name))) {
    void reply
      .status(403)
      .send({ errorDetails: 'This origin, method or header is not allowed (ofrep.cors).' })
    return
  }
  void reply
    .status(204)
    .header('access-control-allow-origin', origin)
    .header('access-control-allow-methods', method)
    .header('access-control-allow-headers', [...ALLOWED_HEADERS].join(', '))
    .header('access-control-max-age', '600')
    .header('vary', origin === '*' ? 'Access-Control-Request-Headers' : 'Origin')
    .send()
}

/** The per-caller token bucket of the OFREP endpoints (memory, per instance). */
export class OfrepLimiter {
  private readonly counters: MemoryCounters | null
  private readonly rule: CounterRule | null

  constructor(
    limit: Limit | null,
    private readonly clock: Clock,
  ) {
    // Bursts up to twice the count: a page load or a reconnect storm is not a flood.
    this.rule =
      limit === null
        ? null
        : {
            algorithm: 'token_bucket',
            count: limit.count,
            periodMs: limit.periodMs,
            burst: limit.count,
          }
    this.counters = limit === null ? null : new MemoryCounters({ maxEntries: 50_000 })
  }

  /**
   * Counts one request of a caller — its credential and its client address — and answers 0
   * when allowed, else the seconds to wait. The two parts stay separate strings (no joined key
   * built per request), and a flood of addresses under one credential evicts only that
   * credential's counters.
   */
  retryAfter(credential: string, address: string): number {
    if (this.counters === null || this.rule === null) return 0
    const waitMs = this.counters.takeToken(credential, address, this.rule, this.clock.now())
    return waitMs === 0 ? 0 : Math.max(1, Math.ceil(waitMs / 1000))
  }

  /** Stops the counters' sweeper. */
  close(): Promise<void> {
    return this.counters?.close() ?? Promise.resolve()
  }
}
