/**
 * The options of an engine's rate limiting, as `createEngine({ rateLimit })` and the Fastify
 * plugin's `rateLimit` option take them.
 *
 * They may be given in several places (the engine, then the plugin): each later set is merged
 * over the earlier ones, option by option, until the engine starts; from then on they are
 * final, because counters and stores cannot be swapped under live traffic.
 */
import { ConfigError } from '../core/errors.js'
import type { Operation } from '../core/operations.js'
import type { ApiKeyValidator } from './api-key-validator.js'
import type { CounterStore } from './counters/types.js'
import type { RateLimitHeaderMode } from './evaluate.js'
import type { RateLimitHitStore, RateLimitPolicyStore } from './ports.js'

/** Rate-limiting options of an engine. */
export interface RateLimitingOptions {
  /** Counter backend; default: the engine's backend's (memory, file snapshot or Redis). */
  counters?: CounterStore
  /** Where runtime policies persist; default: the engine's backend. */
  policies?: RateLimitPolicyStore
  /** The blocked-request log; default: the engine's backend, `maxRlHitEntries` records. */
  hits?: RateLimitHitStore
  /** Capacity of the default blocked-request log (default 10 000). */
  maxRlHitEntries?: number
  /**
   * Proxies whose `X-Forwarded-For` / `X-Real-IP` are believed (default loopback + private);
   * the client is the rightmost `X-Forwarded-For` entry that is not one of them. Ignored when
   * the Fastify app sets its own `trustProxy` (then `request.ip` is the client).
   */
  trustedProxies?: readonly string[]
  /** Bits of an IPv6 client address that name one client for the `ip` key (default 64). */
  ipv6Prefix?: number
  /**
   * `all` (default): `X-RateLimit-*` on every counted response; `blocked`: only on 429s, saving
   * three headers per allowed response.
   */
  headers?: RateLimitHeaderMode
  /** Receives one operation per policy change, besides the engine's audit log. */
  report?: (operation: Operation) => void
  /**
   * Counter snapshot file on the file backend (default `<state file>.rl-counters.json`).
   * Ignored on other backends and when `counters` are given.
   */
  counterSnapshotPath?: string
  /**
   * Deadline of each request-path call of the backend's Redis or PostgreSQL counters, in
   * seconds (default 0.05). Past it the request is let through (fail-open); after repeated
   * failures the counters stop calling the backend for a moment (see docs/rate-limiting.md).
   */
  redisCommandTimeout?: number
  /**
   * Decides whether an `X-API-Key` value is a real key before the `api_key` strategy gives it a
   * bucket of its own; a key it refuses counts as missing (`on_missing_key`, by default the
   * client address's bucket). Without it every invented key is a fresh bucket, so the
   * `api_key` strategy limits only clients that cannot change their header. Answers are
   * remembered briefly (see docs/rate-limiting.md).
   */
  apiKeyValidator?: ApiKeyValidator
  /**
   * Deadline of one `apiKeyValidator` call, in seconds (default 0.05). A later answer, or an
   * error, counts as "not valid" for that request.
   */
  apiKeyValidatorTimeout?: number
}

/** `later` merged over `earlier`, option by option (an option set to undefined is not given). */
export function mergeRateLimitingOptions(
  earlier: RateLimitingOptions,
  later: RateLimitingOptions,
): RateLimitingOptions {
  if (typeof (later as unknown) !== 'object' || (later as unknown) === null)
    throw new ConfigError('The rateLimit option must be an object of rate-limiting options.')
  const merged: Record<string, unknown> = { ...earlier }
  for (const [name, value] of Object.entries(later)) if (value !== undefined) merged[name] = value
  const timeout = merged.redisCommandTimeout
  if (timeout !== undefined && (typeof timeout !== 'number' || !(timeout > 0) || timeout > 60))
    throw new ConfigError(
      `Invalid redisCommandTimeout ${JSON.stringify(timeout)}: expected a number of seconds above 0 and at most 60 (default 0.05).`,
    )
  const validator = merged.apiKeyValidator
  if (validator !== undefined && typeof validator !== 'function')
    throw new ConfigError('apiKeyValidator must be a function (key, request) => boolean.')
  const deadline = merged.apiKeyValidatorTimeout
  if (deadline !== undefined && (typeof deadline !== 'number' || !(deadline > 0) || deadline > 10))
    throw new ConfigError(
      `Invalid apiKeyValidatorTimeout ${JSON.stringify(deadline)}: expected a number of seconds above 0 and at most 10 (default 0.05).`,
    )
  return merged
}
