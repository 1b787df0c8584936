/**
 * What a blocked request carries: the rate-limit exception (handed to custom
 * response factories, never thrown), the built-in 429 decision, and the blocked-request record.
 */
import type { BlockDecision, Header } from '../core/decision.js'
import { SwitchyardError } from '../core/errors.js'

/** The exception a custom response factory receives: limit, retry_after_seconds, reset_at, remaining (always 0), key. */
export class RateLimitExceededError extends SwitchyardError {
  /** Stable code, as in the built-in body. */
  readonly code = 'RATE_LIMITED'
  /** The status of the built-in answer. */
  readonly statusCode = 429
  /** The limit string that was exceeded (the tier's, for tiered policies). */
  readonly limit: string
  /** Whole seconds until a request may succeed (0 for a missing key with `block`). */
  readonly retryAfterSeconds: number
  /** When the window resets. */
  readonly resetAt: Date
  /** Always 0. */
  readonly remaining = 0
  /** The namespaced counter key, e.g. `rl:route:default:GET:/search:ip:10.0.0.1`. */
  readonly key: string
  /** The caller's tier, or null. */
  readonly tier: string | null

  constructor(fields: {
    limit: string
    retryAfterSeconds: number
    resetAt: Date
    key: string
    tier: string | null
  }) {
    super('Too many requests', { limit: fields.limit, retry_after: fields.retryAfterSeconds })
    this.limit = fields.limit
    this.retryAfterSeconds = fields.retryAfterSeconds
    this.resetAt = fields.resetAt
    this.key = fields.key
    this.tier = fields.tier
  }
}

/** A 429 decision that also carries its exception, for custom response factories. */
export interface RateLimitBlockDecision extends BlockDecision {
  readonly exceeded: RateLimitExceededError
}

/** True when a block decision is a rate-limit rejection. */
export function isRateLimitBlock(decision: BlockDecision): decision is RateLimitBlockDecision {
  return (decision as Partial<RateLimitBlockDecision>).exceeded instanceof RateLimitExceededError
}

/** The built-in 429 (docs/reference/protected-app.md), with its headers. */
export function rateLimitDecision(
  exceeded: RateLimitExceededError,
  headers: readonly Header[],
): RateLimitBlockDecision {
  return {
    action: 'block',
    statusCode: 429,
    body: {
      error: {
        code: 'RATE_LIMITED',
        message: 'Too many requests',
        limit: exceeded.limit,
        retry_after: exceeded.retryAfterSeconds,
      },
    },
    headers,
    exceeded,
  }
}

/** A blocked-request record (docs/rate-limiting.md): one per 429. */
export interface RateLimitHit {
  id: string
  /** ISO 8601 UTC. */
  timestamp: string
  /** The route pattern. */
  path: string
  method: string
  /** The service of the route (records written before services were recorded have none). */
  service?: string | null
  /** The counter key that exceeded its limit. */
  key: string
  limit: string
  tier: string | null
  /** ISO 8601 UTC. */
  reset_at: string
}

/** Which blocked-request records a listing wants: one route path, one service, at most `limit`. */
export interface HitQuery {
  limit?: number
  path?: string
  service?: string
}

/** Whether a record passes the path and service filters of `query`. */
export function hitMatches(hit: RateLimitHit, query: HitQuery): boolean {
  return (
    (query.path === undefined || hit.path === query.path) &&
    (query.service === undefined || hit.service === query.service)
  )
}
