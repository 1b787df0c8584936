/**
 * PostgreSQL counters: shared by every instance on the same database and table prefix, like
 * the Redis counters. A request costs one statement: the store's `<prefix>rl_consume()`
 * function checks and counts every applicable limit atomically (see
 * `src/stores/postgres/rl-consume.ts`).
 *
 * The counters live in an UNLOGGED table: writes skip the write-ahead log, which makes them
 * several times cheaper, at the price that PostgreSQL empties the table after a crash (not
 * after a clean restart) and that replicas do not have it. Counters only ever hold the current
 * window, so losing them lets a few requests more through once; they are not worth the log.
 *
 * These calls are on the request path, so each has a deadline (`commandTimeout`, default
 * 50 ms) past which the request fails open, and a circuit breaker: after repeated failures the
 * counters stop asking for a moment and let requests through at once, reporting the opening
 * and the recovery once each. Rows of expired counters are deleted by a sweep (default every
 * 60 s; a stale row is never read as live in between).
 *
 * Keys: `<scope>:<bucket>` with the scope URI-encoded so that it holds no `:`; a reset
 * therefore matches exactly one scope, never a prefix or substring of another.
 */
import { CircuitBreaker, CircuitOpenError } from '../../common/circuit-breaker.js'
import type { LoggerLike, LoggerSlot } from '../../common/logger.js'
import { toError } from '../../core/errors.js'
import type { Algorithm, CounterOutcome } from '../algorithms.js'
import {
  counterCircuit,
  counterDeadlineMs,
  countersLogger,
  type CounterCheck,
  type CounterStore,
} from './types.js'

/** What the counters need of the store: one statement at a time on its pool. */
export interface PostgresCounterClient {
  query(
    text: string,
    params?: unknown[],
  ): Promise<{ rows: Record<string, unknown>[]; rowCount?: number }>
}

/** Options of {@link postgresCounters}. */
export interface PostgresCounterOptions {
  /** The store's database (its `backend.postgres`). */
  client: PostgresCounterClient
  /** The store's table prefix (default `switchyard_`). */
  tablePrefix?: string
  /** Deadline of each counting call, in seconds (default 0.05): past it, the request passes. */
  commandTimeout?: number
  /** Seconds between sweeps of expired counter rows (default 60; 0 = never). */
  sweepInterval?: number
  /** Told when the circuit opens (with the last error) and closes, instead of the logger. */
  onCircuit?: (state: 'open' | 'closed', error?: Error) => void
  /** Where the circuit's opening and closing are logged when `onCircuit` is not given. */
  logger?: LoggerLike
}

const algorithmCodes: Readonly<Record<Algorithm, number>> = {
  fixed_window: 1,
  sliding_window: 2,
  moving_window: 3,
  token_bucket: 4,
}

/** Counters in a PostgreSQL table. */
export class PostgresCounters implements CounterStore {
  readonly kind = 'postgres'
  private readonly client: PostgresCounterClient
  private readonly prefix: string
  private readonly timeoutMs: number
  private readonly breaker: CircuitBreaker
  private readonly logger: LoggerSlot
  private readonly circuitOpen = new CircuitOpenError('PostgreSQL rate-limit counters')
  private readonly sweeper: NodeJS.Timeout | null
  /** The encoded key head of each scope: scopes are few, encoding them per request is waste. */
  private readonly heads = new Map<string, string>()

  constructor(options: PostgresCounterOptions) {
    this.client = options.client
    this.prefix = options.tablePrefix ?? 'switchyard_'
    this.timeoutMs = counterDeadlineMs(options.commandTimeout ?? 0.05)
    this.logger = countersLogger(options.logger)
    this.breaker = counterCircuit('PostgreSQL', this.logger, options.onCircuit)
    const sweep = options.sweepInterval ?? 60
    this.sweeper =
      sweep > 0
        ? setInterval(() => {
            this.sweep(Date.now()).catch(() => undefined) // the next sweep tries again
          }, sweep * 1000)
        : null
    this.sweeper?.unref()
  }

  consume(checks: readonly CounterCheck[], now: number): Promise<CounterOutcome[]> {
    return this.call(checks, now, false)
  }

  peek(checks: readonly CounterCheck[], now: number): Promise<CounterOutcome[]> {
    return this.call(checks, now, true)
  }

  private call(
    checks: readonly CounterCheck[],
    now: number,
    peek: boolean,
  ): Promise<CounterOutcome[]> {
    if (checks.length === 0) return Promise.resolve([])
    if (!this.breaker.allow()) return Promise.reject(this.circuitOpen)
    const keys: string[] = []
    const rules: number[] = []
    for (const { scope, bucket, rule } of checks) {
      keys.push(this.keyOf(scope, bucket))
      rules.push(algorithmCodes[rule.algorithm], rule.count, rule.periodMs, rule.burst)
    }
    return new Promise((resolve, reject) => {
      let settled = false
      const timer = setTimeout(() => {
        if (settled) return
        settled = true
        const error = new Error(
          `PostgreSQL rate-limit counters did not answer within ${this.timeoutMs} ms`,
        )
        this.breaker.failure(error)
        reject(error)
      }, this.timeoutMs)
      let sent: ReturnType<PostgresCounterClient['query']>
      try {
        sent = this.client.query(`SELECT ${this.prefix}rl_consume($1, $2, $3, $4) AS r`, [
          now,
          keys,
          rules,
          peek,
        ])
      } catch (error) {
        sent = Promise.reject(toError(error))
      }
      sent.then(
        ({ rows }) => {
          if (settled) return
          settled = true
          clearTimeout(timer)
          try {
            const outcomes = decode(checks, rows[0]?.r, peek)
            this.breaker.success()
            resolve(outcomes)
          } catch (error) {
            this.breaker.failure(toError(error))
            reject(toError(error))
          }
        },
        (error: unknown) => {
          if (settled) return
          settled = true
          clearTimeout(timer)
          this.breaker.failure(toError(error))
          reject(toError(error))
        },
      )
    })
  }

  async reset(scope: string): Promise<void> {
    await this.client.query(`DELETE FROM ${this.prefix}rl_counters WHERE starts_with(key, $1)`, [
      `${encodeURIComponent(scope)}:`,
    ])
  }

  /** Deletes the rows of counters expired at `now`; resolves how many went. */
  async sweep(now: number): Promise<number> {
    const result = await this.client.query(
      `DELETE FROM ${this.prefix}rl_counters WHERE expires_ms <= $1`,
      [now],
    )
    return result.rowCount ?? 0
  }

  attachLogger(logger: LoggerLike): void {
    this.logger.attach(logger)
  }

  close(): Promise<void> {
    // The store owns the connections and closes them.
    if (this.sweeper !== null) clearInterval(this.sweeper)
    return Promise.resolve()
  }

  /** The row key of one counter. */
  keyOf(scope: string, bucket: string): string {
    let head = this.heads.get(scope)
    if (head === undefined) {
      head = `${encodeURIComponent(scope)}:`
      if (this.heads.size >= 10_000) this.heads.clear()
      this.heads.set(scope, head)
    }
    return head + bucket
  }
}

/** Creates counters on the PostgreSQL store's database. */
export function postgresCounters(options: PostgresCounterOptions): PostgresCounters {
  return new PostgresCounters(options)
}

/**
 * The outcomes of a reply: comma-separated integers, two per evaluated limit — remaining
 * (≥ 0) or minus the retry delay (< 0, blocked: evaluation stopped there unless peeking), then
 * the reset time.
 */
function decode(checks: readonly CounterCheck[], reply: unknown, peek: boolean): CounterOutcome[] {
  if (typeof reply !== 'string') throw new Error('unexpected reply from rl_consume')
  const numbers = reply === '' ? [] : reply.split(',').map(Number)
  const outcomes: CounterOutcome[] = []
  for (let i = 0; i < checks.length && 2 * i + 1 < numbers.length; i++) {
    const rule = (checks[i] as CounterCheck).rule
    const value = numbers[2 * i] as number
    const resetAt = numbers[2 * i + 1] as number
    if (!Number.isSafeInteger(value) || !Number.isSafeInteger(resetAt))
      throw new Error('malformed reply from rl_consume')
    const effective = rule.count + rule.burst
    if (value >= 0) {
      outcomes.push({ allowed: true, effective, remaining: value, resetAt, retryAfterMs: 0 })
      continue
    }
    outcomes.push({ allowed: false, effective, remaining: 0, resetAt, retryAfterMs: -value })
    if (!peek) break
  }
  return outcomes
}
