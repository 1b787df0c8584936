/**
 * Login throttling per client address. After `freeAttempts` consecutive failures, each further
 * attempt must wait `baseDelay × 2^(failures − freeAttempts)` seconds (capped at `maxDelay`)
 * after the previous failure, and is answered 429 before the password is even checked. A
 * success clears the address. Failures are forgotten after `resetAfter` seconds of quiet.
 *
 * Kept in process memory: it slows down guessing against one instance, which is its job; the
 * table is bounded so that a flood of addresses cannot grow it without limit. Shared by the
 * admin app and the task admin, which is why it lives where both halves may import it.
 */
import type { InvalidOption } from './sse-hub.js'

/** The time source the throttle reads (epoch milliseconds). */
export interface ThrottleClock {
  now(): number
}

/** Options of {@link LoginThrottle}. */
export interface LoginThrottleOptions {
  /** Failures allowed without delay (default 5). */
  freeAttempts?: number
  /** First delay after the free attempts, in seconds (default 1). */
  baseDelay?: number
  /** Longest delay, in seconds (default 900). */
  maxDelay?: number
  /** Seconds without a failure after which an address starts afresh (default 3600). */
  resetAfter?: number
  /** Addresses tracked at most; the oldest is dropped beyond it (default 10000). */
  maxAddresses?: number
}

interface Failures {
  count: number
  last: number
}

/** Tracks failed logins per address. */
export class LoginThrottle {
  private readonly failures = new Map<string, Failures>()
  private readonly freeAttempts: number
  private readonly baseDelayMs: number
  private readonly maxDelayMs: number
  private readonly resetAfterMs: number
  private readonly maxAddresses: number

  /** Throws `invalid(message)` for a bad option. */
  constructor(
    private readonly clock: ThrottleClock,
    options: LoginThrottleOptions = {},
    invalid: InvalidOption = (m) => new RangeError(m),
  ) {
    const option = (value: number | undefined, fallback: number, field: string, int = false) =>
      positive(value, fallback, field, invalid, int)
    this.freeAttempts = option(options.freeAttempts, 5, 'freeAttempts', true)
    this.baseDelayMs = option(options.baseDelay, 1, 'baseDelay') * 1000
    this.maxDelayMs = option(options.maxDelay, 900, 'maxDelay') * 1000
    this.resetAfterMs = option(options.resetAfter, 3600, 'resetAfter') * 1000
    this.maxAddresses = option(options.maxAddresses, 10_000, 'maxAddresses', true)
  }

  /** Seconds the address must still wait before its next attempt (0 = may try now). */
  waitSeconds(address: string): number {
    const entry = this.current(address)
    if (entry === undefined || entry.count < this.freeAttempts) return 0
    const delay = Math.min(
      this.maxDelayMs,
      this.baseDelayMs * 2 ** (entry.count - this.freeAttempts),
    )
    const remaining = entry.last + delay - this.clock.now()
    return remaining > 0 ? Math.ceil(remaining / 1000) : 0
  }

  /** Records a failed attempt. */
  fail(address: string): void {
    const entry = this.current(address)
    this.failures.delete(address)
    this.failures.set(address, { count: (entry?.count ?? 0) + 1, last: this.clock.now() })
    if (this.failures.size > this.maxAddresses) {
      const oldest = this.failures.keys().next().value
      if (oldest !== undefined) this.failures.delete(oldest)
    }
  }

  /** Clears an address after a successful login. */
  succeed(address: string): void {
    this.failures.delete(address)
  }

  private current(address: string): Failures | undefined {
    const entry = this.failures.get(address)
    if (entry !== undefined && this.clock.now() - entry.last > this.resetAfterMs) {
      this.failures.delete(address)
      return undefined
    }
    return entry
  }
}

function positive(
  value: number | undefined,
  fallback: number,
  field: string,
  invalid: InvalidOption,
  integer = false,
): number {
  if (value === undefined) return fallback
  if (!Number.isFinite(value) || value < 0 || (integer && !Number.isInteger(value))) {
    throw invalid(
      `loginThrottle.${field} must be a non-negative ${integer ? 'integer' : 'number'}.`,
    )
  }
  return value
}
