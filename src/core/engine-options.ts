/**
 * The options of `createEngine()`, what it hands the engine, and how they are read.
 */
import type { FlagsFeature } from '../flags/feature.js'
import type { RateLimitFeature } from '../rate-limit/feature.js'
import type { RateLimitingOptions } from '../rate-limit/options.js'
import { stderrLogger, type Logger } from '../common/logger.js'
import type { Store } from '../stores/types.js'
import type { Clock } from './clock.js'
import { ValidationError } from './errors.js'
import type { EngineLogger, FeatureHost } from './feature.js'

/** Options of `createEngine`. */
export interface EngineOptions {
  /** A store, or a backend name; default `CTL_BACKEND`, else `memory`. */
  store?: Store | string
  /** Environment name used by env gating; default `CTL_ENV`, else `dev`. */
  env?: string
  /** This application's service name; default `default`. */
  service?: string
  /** Time source; tests pass a fake clock. */
  clock?: Clock
  /**
   * Where the engine, its store and its features log: a pino-compatible logger (pino, Fastify's
   * `app.log`), used as given. Default: warnings and errors as JSON lines on stderr, until a
   * Fastify plugin the engine is registered with hands it a child of the app's logger.
   */
  logger?: EngineLogger
  /** Delay before the first retry of an unreachable store, in seconds (default 2); doubles per failure. */
  retryInterval?: number
  /** Longest delay between two retries of an unreachable store, in seconds (default 30). */
  maxRetryInterval?: number
  /** Audit entries kept in the store; the oldest are evicted beyond it (default 10000). */
  maxAuditEntries?: number
  /** Versions kept per flag in its history; the oldest are dropped beyond it (default 100). */
  flagHistoryLimit?: number
  /**
   * Rate-limit counters, stores and settings (`trustedProxies`, `headers`, `maxRlHitEntries`,
   * `redisCommandTimeout`, …); the Fastify plugin's `rateLimit` option adds to them until the
   * engine starts.
   */
  rateLimit?: RateLimitingOptions
}

/** What `createEngine` hands the engine: the store, and how to build each feature. */
export interface EngineParts {
  store: Store
  flags(host: FeatureHost): FlagsFeature
  rateLimits(host: FeatureHost, options: RateLimitingOptions | undefined): RateLimitFeature
  /**
   * Whether this engine persists automatic transitions and runs scheduled jobs (default true).
   * False for an SDK app: its server owns the records, applies them once and pushes the
   * result; enforcement never waits for a transition (effective states are computed from the
   * stored times), so the app has nothing to do when a change arrives.
   */
  runsSchedules?: boolean
}

/**
 * The engine's logger when none is given: warnings and errors as JSON lines on stderr, bound to
 * `module: 'switchyard'`. The Fastify plugins replace it with a child of the app's logger.
 */
export function defaultEngineLogger(): Logger {
  return stderrLogger({ bindings: { module: 'switchyard' } })
}

/** A duration option in seconds, as milliseconds (`fallback` seconds when not given). */
export function seconds(value: number | undefined, fallback: number, field: string): number {
  if (value === undefined) return fallback * 1000
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    throw new ValidationError(`${field} must be a non-negative number of seconds.`, {
      details: [{ field, message: 'expected a non-negative number of seconds' }],
    })
  }
  return value * 1000
}
