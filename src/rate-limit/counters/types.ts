/**
 * The counter port: where counter states live. Every implementation evaluates a request's
 * counters in order and atomically — each allowed counter is counted, the first that blocks
 * stops the evaluation and leaves it and every later counter untouched — so that a request
 * costs one call (one round trip on Redis) however many limits apply to it.
 */
import { CircuitBreaker } from '../../common/circuit-breaker.js'
import { LoggerSlot, stderrLogger, type LoggerLike } from '../../common/logger.js'
import { ConfigError } from '../../core/errors.js'
import type { CounterOutcome, CounterRule } from '../algorithms.js'

/** One counter to check for a request. */
export interface CounterCheck {
  /** The counter's scope: a route, a service or the global policy; resets address it exactly. */
  readonly scope: string
  /** The bucket inside the scope: the client IP, user id, API key, route pattern… */
  readonly bucket: string
  readonly rule: CounterRule
}

/** What an allowed request leaves in its counter: the figures of its `X-RateLimit-*` headers. */
export interface CounterReading {
  /** Requests left after this one. */
  remaining: number
  /** Epoch ms when the window resets (the bucket is full again). */
  resetAt: number
}

/** A counter backend. */
export interface CounterStore {
  /** Backend name (`memory`, `file`, `redis`). */
  readonly kind: string
  /**
   * Evaluates `checks` in order at `now`: counts every allowed one and stops at the first that
   * blocks. Returns one outcome per evaluated check (the last is the blocking one, if any).
   * Implementations answer synchronously when they can (memory), so the hot path stays sync.
   */
  consume(
    checks: readonly CounterCheck[],
    now: number,
  ): CounterOutcome[] | Promise<CounterOutcome[]>
  /**
   * Evaluates every one of `checks` at `now` as {@link consume} would, each on its own (a
   * blocked one does not stop the others), and counts nothing: the outcome says what one more
   * request would get. The built-in counters have it; counters without it cannot answer
   * `engine.rateLimits.check`.
   */
  peek?(checks: readonly CounterCheck[], now: number): CounterOutcome[] | Promise<CounterOutcome[]>
  /** Clears every counter of exactly `scope` (never a prefix or substring match). */
  reset(scope: string): Promise<void>
  /** Releases timers and connections. */
  close(): Promise<void>
  /**
   * Where counters created without a logger of their own log their faults; the engine hands
   * them its logger when it takes them into use.
   */
  attachLogger?(logger: LoggerLike): void
}

/** The namespaced counter key shown in rate-limit exceptions and blocked-request records. */
export function counterKey(scope: string, bucket: string): string {
  return `rl:${scope}:${bucket}`
}

/**
 * The logger of counters created with `given` (their `logger` option): stderr until the engine
 * attaches its own, unless one was given.
 */
export function countersLogger(given: LoggerLike | undefined): LoggerSlot {
  return new LoggerSlot(given, () => stderrLogger({ bindings: { module: 'switchyard' } }))
}

/** The `commandTimeout` of shared counters in milliseconds; a value outside (0, 60] s is refused. */
export function counterDeadlineMs(seconds: unknown): number {
  if (typeof seconds !== 'number' || !(seconds > 0) || seconds > 60)
    throw new ConfigError('commandTimeout must be a number of seconds above 0 and at most 60.')
  return seconds * 1000
}

/**
 * The circuit breaker of counters kept on a shared server (`server`: "Redis", "PostgreSQL"):
 * told to `onCircuit` when given, else logged — an error when it opens (requests then pass
 * uncounted), a warning when it closes.
 */
export function counterCircuit(
  server: string,
  logger: LoggerSlot,
  onCircuit?: (state: 'open' | 'closed', error?: Error) => void,
): CircuitBreaker {
  const tell =
    onCircuit ??
    ((state: 'open' | 'closed', error?: Error) => {
      if (state === 'open')
        logger.error(
          { err: error },
          `${server} rate-limit counters keep failing; requests pass uncounted until ${server} answers again`,
        )
      else logger.warn(`${server} rate-limit counters answer again`)
    })
  return new CircuitBreaker({
    onOpen: (error) => tell('open', error),
    onClose: () => tell('closed'),
  })
}
