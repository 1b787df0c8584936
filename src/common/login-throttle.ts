/**
 * Login throttling, shared by the admin app and the task admin.
 *
 * Failed logins are counted under three keys, and an attempt must wait for the longest delay
 * any of them imposes:
 *
 * | key                     | free failures           | delay after that                              |
 * |-------------------------|-------------------------|-----------------------------------------------|
 * | username + address      | `freeAttempts` (5)      | `baseDelay × 2^(n − free)`, up to `maxDelay` (900 s) |
 * | username (any address)  | `sharedFreeAttempts` (20) | the same, up to `maxSharedDelay` (60 s)     |
 * | address (any username)  | `sharedFreeAttempts` (20) | the same, up to `maxSharedDelay` (60 s)     |
 *
 * Why three: one guesser against one account is slowed hard (the pair); guessing one account
 * from many addresses, or many accounts from one address, is slowed too (the shared keys). Why
 * the shared keys are capped low: other people's failures — an attacker guessing your username,
 * or colleagues behind the same proxy typing their passwords wrong — may delay a correct
 * password by at most `maxSharedDelay` per attempt, never lock it out. That is the documented
 * bound; only failures from your own address on your own username can delay you longer.
 *
 * Why an attempt is reserved before the password is checked: `authenticate` may be async, and
 * guesses sent concurrently would otherwise all be checked before the first failure is
 * counted. {@link LoginThrottle.begin} counts the attempt as a failure at once; settling it with
 * `succeed()` takes that back (and clears the username's failures), `fail()` keeps it.
 *
 * The address is the client address as the trusted-proxy rule resolves it (see
 * trusted-proxies.ts), never a raw forwarding header. Kept in process memory: it slows down
 * guessing against one instance, which is its job; every table is bounded (`maxEntries`), the
 * least recently failed entry dropped first.
 *
 * @example
 * const attempt = throttle.begin(username, address)
 * if (!attempt.allowed) return tooManyAttempts(attempt.retryAfter) // seconds
 * if (await verify(username, password)) attempt.succeed()
 * else attempt.fail()
 */
import type { InvalidOption } from './sse-hub.js'

/** The time source the throttle reads (epoch milliseconds). */
export interface ThrottleClock {
  now(): number
}

/** Options of {@link LoginThrottle}. Durations are seconds. */
export interface LoginThrottleOptions {
  /** Failures of one username from one address allowed without delay (default 5). */
  freeAttempts?: number
  /** First delay after the free attempts (default 1). */
  baseDelay?: number
  /** Longest delay of one username from one address (default 900). */
  maxDelay?: number
  /** Failures of one username from anywhere, or of one address for any username, allowed without delay (default 20). */
  sharedFreeAttempts?: number
  /** Longest delay those shared counts impose: the bound on being slowed by others (default 60). */
  maxSharedDelay?: number
  /** Seconds without a failure after which a key starts afresh (default 3600). */
  resetAfter?: number
  /** Keys tracked at most per table; the least recently failed is dropped beyond it (default 10000). */
  maxEntries?: number
  /** Former name of `maxEntries`. */
  maxAddresses?: number
}

/** An attempt that must wait. */
export interface LoginWait {
  readonly allowed: false
  /** Whole seconds to wait before the next attempt. */
  readonly retryAfter: number
}

/** An attempt that may check its password; settle it exactly once (later calls do nothing). */
export interface LoginAttempt {
  readonly allowed: true
  /** The password was right: takes the reserved failure back and clears the username's failures. */
  succeed(): void
  /** The password was wrong: the reserved failure stays counted. */
  fail(): void
}

interface Failures {
  count: number
  last: number
}

/** One table of failure counts with its own free attempts and cap. */
class FailureTable {
  private readonly entries = new Map<string, Failures>()

  constructor(
    private readonly free: number,
    private readonly capMs: number,
    private readonly settings: { baseDelayMs: number; resetAfterMs: number; maxEntries: number },
  ) {}

  /** Milliseconds `key` must still wait at `now`. */
  waitMs(key: string, now: number): number {
    const entry = this.current(key, now)
    if (entry === undefined || entry.count < this.free) return 0
    const delay = Math.min(this.capMs, this.settings.baseDelayMs * 2 ** (entry.count - this.free))
    return Math.max(0, entry.last + delay - now)
  }

  /** Counts one failure of `key` at `now`. */
  add(key: string, now: number): void {
    const previous = this.current(key, now)
    // Re-inserted, so the Map's order is least recently failed first.
    this.entries.delete(key)
    this.entries.set(key, { count: (previous?.count ?? 0) + 1, last: now })
    if (this.entries.size > this.settings.maxEntries) {
      const oldest = this.entries.keys().next().value
      if (oldest !== undefined) this.entries.delete(oldest)
    }
  }

  /** Takes back one failure counted by {@link add} (the entry may have moved on since). */
  undo(key: string): void {
    const entry = this.entries.get(key)
    if (entry === undefined) return
    if (entry.count <= 1) this.entries.delete(key)
    else entry.count -= 1
  }

  clear(key: string): void {
    this.entries.delete(key)
  }

  private current(key: string, now: number): Failures | undefined {
    const entry = this.entries.get(key)
    if (entry !== undefined && now - entry.last > this.settings.resetAfterMs) {
      this.entries.delete(key)
      return undefined
    }
    return entry
  }
}

/** Tracks failed logins by username and address pair, by username and by address. */
export class LoginThrottle {
  private readonly pairs: FailureTable
  private readonly usernames: FailureTable
  private readonly addresses: FailureTable

  /** Throws `invalid(message)` for a bad option. */
  constructor(
    private readonly clock: ThrottleClock,
    options: LoginThrottleOptions = {},
    invalid: InvalidOption = (m) => new RangeError(m),
  ) {
    const option = (value: number | undefined, fallback: number, field: string, int = false) =>
      nonNegative(value, fallback, field, invalid, int)
    const settings = {
      baseDelayMs: option(options.baseDelay, 1, 'baseDelay') * 1000,
      resetAfterMs: option(options.resetAfter, 3600, 'resetAfter') * 1000,
      maxEntries: option(
        options.maxEntries ?? options.maxAddresses,
        10_000,
        options.maxEntries === undefined && options.maxAddresses !== undefined
          ? 'maxAddresses'
          : 'maxEntries',
        true,
      ),
    }
    const free = option(options.freeAttempts, 5, 'freeAttempts', true)
    const sharedFree = option(options.sharedFreeAttempts, 20, 'sharedFreeAttempts', true)
    const maxDelayMs = option(options.maxDelay, 900, 'maxDelay') * 1000
    const sharedCapMs = option(options.maxSharedDelay, 60, 'maxSharedDelay') * 1000
    this.pairs = new FailureTable(free, maxDelayMs, settings)
    this.usernames = new FailureTable(sharedFree, sharedCapMs, settings)
    this.addresses = new FailureTable(sharedFree, sharedCapMs, settings)
  }

  /**
   * Starts a login attempt of `username` from `address`: either the seconds to wait, or an
   * attempt whose failure is already counted (settle it with `succeed` or `fail`).
   */
  begin(username: string, address: string): LoginWait | LoginAttempt {
    const now = this.clock.now()
    const user = username.trim().toLowerCase()
    const pair = `${user}\u0000${address}`
    const waitMs = Math.max(
      this.pairs.waitMs(pair, now),
      this.usernames.waitMs(user, now),
      this.addresses.waitMs(address, now),
    )
    if (waitMs > 0) return { allowed: false, retryAfter: Math.ceil(waitMs / 1000) }
    this.pairs.add(pair, now)
    this.usernames.add(user, now)
    this.addresses.add(address, now)
    let settled = false
    return {
      allowed: true,
      succeed: () => {
        if (settled) return
        settled = true
        this.pairs.clear(pair)
        this.usernames.clear(user)
        this.addresses.undo(address)
      },
      fail: () => {
        settled = true
      },
    }
  }
}

function nonNegative(
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
