/**
 * Login throttling, shared by the admin app and the task admin.
 *
 * **The rule it keeps: a correct password from a client network that has not been failing logs
 * in at once, whatever other clients do.** A client network is the address's /64 for IPv6 and
 * the address itself for IPv4 (an IPv4-mapped IPv6 address counts as IPv4; see
 * client-network.ts): one IPv6 host usually holds a whole /64, so counting single addresses
 * would let it rotate through fresh counters.
 *
 * Failed logins are counted under three keys; an attempt waits for the longest delay the keys
 * that apply to it impose, where a key past its free failures imposes
 * `baseDelay × 2^(n − free)` seconds after its last failure, up to its cap:
 *
 * | key                       | applies to                                   | free failures                 | cap                       |
 * |---------------------------|----------------------------------------------|-------------------------------|---------------------------|
 * | username + client network | every attempt of that pair                   | `freeAttempts` (5)            | `maxDelay` (900 s)        |
 * | client network            | every attempt from that network              | `networkFreeAttempts` (20)    | `maxNetworkDelay` (60 s)  |
 * | username (any network)    | only attempts from a network with failures of its own still counted | `usernameFreeAttempts` (20) | `maxUsernameDelay` (60 s) |
 *
 * Why these keys: one guesser against one account is slowed hard (the pair); one network
 * trying many usernames is slowed too (the network key); guessing one account from many
 * networks is slowed once each of those networks has failed (the username key). Why the
 * username key never applies to a clean network: it counts everybody's failures, so applying
 * it to every attempt would let anyone lock an account out (26 failures from scattered
 * addresses would make the real owner's SDK fail with 429 at its next restart). A network
 * that has not failed has given no reason to be slowed, so only its own future failures can
 * slow it. What that costs: each fresh network gets its free attempts on an account; an
 * attacker holding many networks guesses that many more times.
 *
 * Why the network key is capped low: everyone behind one IPv4 address (an office NAT) shares
 * it, so one colleague's failures slow the others' logins by at most `maxNetworkDelay`.
 *
 * Why an attempt is reserved before the password is checked: `authenticate` may be async, and
 * guesses sent concurrently would otherwise all be checked before the first failure is
 * counted. {@link LoginThrottle.begin} counts the attempt as a failure at once under every key;
 * `succeed()` takes that back (and clears the pair's failures), `fail()` keeps it. A success
 * does not clear the network's or the username's failures: an attacker who knows one valid
 * account must not wipe its network's record by logging in, and the owner's logins must not
 * wipe the record of a guesser working on their account.
 *
 * Memory: every table holds at most `maxEntries` keys. When one is full, a key still within its
 * free failures (it slows nobody yet) is dropped first, the least recently failed of them; a
 * key past them only when every key in the table is, again the least recently failed. So an
 * attacker rotating through many networks (or usernames) pushes out only such unthrottled
 * keys — attackers' and victims' alike, which is harmless to victims: forgetting failures never
 * slows anyone, and a dropped key's owner regains at most its free attempts, which a fresh
 * network would have had anyway. To drop a key that throttles someone, an attacker must fill
 * the table with `maxEntries` keys that are throttled themselves. Kept in process memory: it
 * slows down guessing against one instance, which is its job.
 *
 * The address given to {@link LoginThrottle.begin} is the client address as the trusted-proxy
 * rule resolves it (see trusted-proxies.ts), never a raw forwarding header.
 *
 * @example
 * const attempt = throttle.begin(username, address)
 * if (!attempt.allowed) return tooManyAttempts(attempt.retryAfter) // seconds
 * if (await verify(username, password)) attempt.succeed()
 * else attempt.fail()
 */
import { clientNetwork } from './client-network.js'
import type { InvalidOption } from './sse-hub.js'

/** The time source the throttle reads (epoch milliseconds). */
export interface ThrottleClock {
  now(): number
}

/** Options of {@link LoginThrottle}. Durations are seconds. */
export interface LoginThrottleOptions {
  /** Failures of one username from one client network allowed without delay (default 5). */
  freeAttempts?: number
  /** First delay after the free attempts, doubling with each further failure (default 1). */
  baseDelay?: number
  /** Longest delay of one username from one client network (default 900). */
  maxDelay?: number
  /** Failures of one client network on any usernames allowed without delay (default 20). */
  networkFreeAttempts?: number
  /** Longest delay the client network's own count imposes on all its attempts (default 60). */
  maxNetworkDelay?: number
  /**
   * Failures of one username from any networks allowed without delay (default 20); the delay
   * after them applies only to attempts from networks that have failed themselves.
   */
  usernameFreeAttempts?: number
  /** Longest delay the username's count imposes on a failing network's attempt (default 60). */
  maxUsernameDelay?: number
  /** Seconds without a failure after which a key starts afresh (default 3600). */
  resetAfter?: number
  /** Keys tracked at most per table (default 10000); see the module comment for which go first. */
  maxEntries?: number
  /**
   * @deprecated Sets both `networkFreeAttempts` and `usernameFreeAttempts` (each one given
   * itself wins).
   */
  sharedFreeAttempts?: number
  /** @deprecated Sets both `maxNetworkDelay` and `maxUsernameDelay` (each one given itself wins). */
  maxSharedDelay?: number
  /** @deprecated Former name of `maxEntries`. */
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
  /** The password was right: takes the reserved failure back and clears the pair's failures. */
  succeed(): void
  /** The password was wrong: the reserved failure stays counted. */
  fail(): void
}

/** How many keys each table tracks now (tests and diagnostics). */
export interface LoginThrottleSize {
  pairs: number
  networks: number
  usernames: number
}

/** The deprecated option names, read where they are translated into the current ones. */
interface FormerNames {
  sharedFreeAttempts?: number
  maxSharedDelay?: number
  maxAddresses?: number
}

interface Failures {
  count: number
  /** Time of the latest failure counted, reservations included. */
  last: number
  /** The table's sequence number when this entry was created: tells a recreated entry apart. */
  born: number
  /** The table's sequence number of the latest failure counted. */
  version: number
}

/** What {@link FailureTable.add} changed, so that {@link FailureTable.undo} can take it back. */
interface Mark {
  key: string
  born: number
  version: number
  previousLast: number
}

interface TableSettings {
  baseDelayMs: number
  resetAfterMs: number
  maxEntries: number
}

/** One table of failure counts with its own free failures and cap. */
class FailureTable {
  /** Keys still within their free failures: they slow nobody, so they are dropped first. */
  private readonly free = new Map<string, Failures>()
  /** Keys at or past their free failures (the next attempt may have to wait). Both maps are in
   * order of latest failure, oldest first. */
  private readonly throttled = new Map<string, Failures>()
  private sequence = 0

  constructor(
    private readonly freeFailures: number,
    private readonly capMs: number,
    private readonly settings: TableSettings,
  ) {}

  get size(): number {
    return this.free.size + this.throttled.size
  }

  /** Milliseconds `key` must still wait at `now`. */
  waitMs(key: string, now: number): number {
    const entry = this.current(key, now)
    if (entry === undefined || entry.count < this.freeFailures) return 0
    const delay = Math.min(
      this.capMs,
      this.settings.baseDelayMs * 2 ** (entry.count - this.freeFailures),
    )
    return Math.max(0, entry.last + delay - now)
  }

  /** True when `key` has failures counted at `now`. */
  failing(key: string, now: number): boolean {
    return this.current(key, now) !== undefined
  }

  /** Counts one failure of `key` at `now`. */
  add(key: string, now: number): Mark {
    const previous = this.current(key, now)
    this.sequence += 1
    const entry: Failures = {
      count: (previous?.count ?? 0) + 1,
      last: now,
      born: previous?.born ?? this.sequence,
      version: this.sequence,
    }
    this.place(key, entry)
    this.evict()
    return { key, born: entry.born, version: entry.version, previousLast: previous?.last ?? now }
  }

  /**
   * Takes back one failure counted by {@link add}: nothing when the entry has since been
   * dropped (expired or evicted, perhaps recreated by later failures, which stay counted); its
   * latest failure time goes back too unless a failure was counted after this one.
   */
  undo(mark: Mark): void {
    const entry = this.entries(mark.key)
    if (entry === undefined || entry.born !== mark.born) return
    if (entry.count <= 1) {
      this.clear(mark.key)
      return
    }
    const restored: Failures = {
      ...entry,
      count: entry.count - 1,
      last: entry.version === mark.version ? mark.previousLast : entry.last,
    }
    this.place(mark.key, restored)
  }

  clear(key: string): void {
    this.free.delete(key)
    this.throttled.delete(key)
  }

  private entries(key: string): Failures | undefined {
    return this.throttled.get(key) ?? this.free.get(key)
  }

  /** (Re-)inserts `entry` at the recent end of the map its count belongs to. */
  private place(key: string, entry: Failures): void {
    this.clear(key)
    if (entry.count >= this.freeFailures) this.throttled.set(key, entry)
    else this.free.set(key, entry)
  }

  private evict(): void {
    if (this.size <= this.settings.maxEntries) return
    const from = this.free.size > 0 ? this.free : this.throttled
    const oldest = from.keys().next()
    if (oldest.done !== true) from.delete(oldest.value)
  }

  private current(key: string, now: number): Failures | undefined {
    const entry = this.entries(key)
    if (entry !== undefined && now - entry.last > this.settings.resetAfterMs) {
      this.clear(key)
      return undefined
    }
    return entry
  }
}

/** Tracks failed logins by username and client network, by client network and by username. */
export class LoginThrottle {
  private readonly pairs: FailureTable
  private readonly networks: FailureTable
  private readonly usernames: FailureTable

  /** Throws `invalid(message)` for a bad option. */
  constructor(
    private readonly clock: ThrottleClock,
    options: LoginThrottleOptions = {},
    invalid: InvalidOption = (m) => new RangeError(m),
  ) {
    const option = (value: number | undefined, fallback: number, field: string, int = false) =>
      nonNegative(value, fallback, field, invalid, int)
    // A former name is checked under its own name, then stands for the options it replaced.
    const former: FormerNames = options
    const sharedFree = option(former.sharedFreeAttempts, 20, 'sharedFreeAttempts', true)
    const sharedCap = option(former.maxSharedDelay, 60, 'maxSharedDelay')
    const settings: TableSettings = {
      baseDelayMs: option(options.baseDelay, 1, 'baseDelay') * 1000,
      resetAfterMs: option(options.resetAfter, 3600, 'resetAfter') * 1000,
      maxEntries: option(
        options.maxEntries ?? former.maxAddresses,
        10_000,
        options.maxEntries === undefined && former.maxAddresses !== undefined
          ? 'maxAddresses'
          : 'maxEntries',
        true,
      ),
    }
    this.pairs = new FailureTable(
      option(options.freeAttempts, 5, 'freeAttempts', true),
      option(options.maxDelay, 900, 'maxDelay') * 1000,
      settings,
    )
    this.networks = new FailureTable(
      option(options.networkFreeAttempts, sharedFree, 'networkFreeAttempts', true),
      option(options.maxNetworkDelay, sharedCap, 'maxNetworkDelay') * 1000,
      settings,
    )
    this.usernames = new FailureTable(
      option(options.usernameFreeAttempts, sharedFree, 'usernameFreeAttempts', true),
      option(options.maxUsernameDelay, sharedCap, 'maxUsernameDelay') * 1000,
      settings,
    )
  }

  /**
   * Starts a login attempt of `username` from `address` (the client address; its network is
   * what counts): either the seconds to wait, or an attempt whose failure is already counted
   * (settle it with `succeed` or `fail`).
   */
  begin(username: string, address: string): LoginWait | LoginAttempt {
    const now = this.clock.now()
    const user = username.trim().toLowerCase()
    const network = clientNetwork(address)
    const pair = `${user}\u0000${network}`
    // Checked before this attempt's own reservation: a network that has not failed is clean.
    // (The pair too, in case the network's key alone was dropped from its full table.)
    const failing = this.networks.failing(network, now) || this.pairs.failing(pair, now)
    const waitMs = Math.max(
      this.pairs.waitMs(pair, now),
      this.networks.waitMs(network, now),
      failing ? this.usernames.waitMs(user, now) : 0,
    )
    if (waitMs > 0) return { allowed: false, retryAfter: Math.ceil(waitMs / 1000) }
    this.pairs.add(pair, now)
    const networkMark = this.networks.add(network, now)
    const usernameMark = this.usernames.add(user, now)
    let settled = false
    return {
      allowed: true,
      succeed: () => {
        if (settled) return
        settled = true
        this.pairs.clear(pair)
        this.networks.undo(networkMark)
        this.usernames.undo(usernameMark)
      },
      fail: () => {
        settled = true
      },
    }
  }

  /** How many keys each table tracks now; each stays at most `maxEntries`. */
  size(): LoginThrottleSize {
    return {
      pairs: this.pairs.size,
      networks: this.networks.size,
      usernames: this.usernames.size,
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
