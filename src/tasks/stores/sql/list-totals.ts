/**
 * The totals of list queries, per filter: counting every match of a filter over a large history
 * is the one read of a list page that grows with the history, so a total is counted on first use
 * and then served from here while it is recounted in the background.
 *
 * A total is reused for `ttlMs`, or for {@link SLOW_COUNT_FACTOR} times as long as its last
 * count took, whichever is longer (at most {@link MAX_TTL_MS}): SQLite counts synchronously, so
 * a count of 1 s over 10 million rows holds up every other request of the process for that
 * second, and recounting it every 5 s would do so a fifth of the time. With the factor, counting
 * takes at most about 1 % of the time per filter.
 */

/** A count that took `d` ms is reused for at least this many times `d`. */
export const SLOW_COUNT_FACTOR = 100
/** The longest a total is reused without a recount: 10 minutes. */
export const MAX_TTL_MS = 10 * 60_000
/** Filters whose totals are kept; past it, the cache starts afresh. */
const MAX_FILTERS = 1000

interface Total {
  total: number
  /** When the count finished. */
  at: number
  /** How long it may be served before a recount. */
  ttl: number
  refreshing: boolean
}

/** Cached list totals by filter key. */
export class ListTotals {
  readonly #totals = new Map<string, Total>()
  /**
   * Bumped by {@link clear}: a count that started before a deletion may have counted the
   * deleted rows, so it answers the request that waited for it but is not kept.
   */
  #generation = 0

  /**
   * `ttlMs` ≤ 0 disables the cache (every list counts). `now` is a monotonic clock in ms
   * (tests pass a fake one).
   */
  constructor(
    private readonly ttlMs: number,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /**
   * The total for `key`: counted now on first use; later the cached one, with a recount
   * started in the background (after this answer) once it is older than its time to live.
   */
  async get(key: string, count: () => Promise<number>): Promise<number> {
    if (this.ttlMs <= 0) return count()
    const cached = this.#totals.get(key)
    if (cached !== undefined) {
      if (this.now() - cached.at >= cached.ttl && !cached.refreshing) {
        cached.refreshing = true
        setImmediate(() => {
          this.#countAndKeep(key, count).catch(() => {
            cached.refreshing = false
          })
        })
      }
      return cached.total
    }
    return (await this.#countAndKeep(key, count)).total
  }

  /** Forgets every total, and any count still running (after a deletion). */
  clear(): void {
    this.#generation++
    this.#totals.clear()
  }

  /**
   * Counts `key` and keeps the total, unless {@link clear} was called while it counted (see
   * `#generation`). A new filter past {@link MAX_FILTERS} starts the cache afresh.
   */
  async #countAndKeep(key: string, count: () => Promise<number>): Promise<Total> {
    const generation = this.#generation
    const started = this.now()
    const total = await count()
    const at = this.now()
    const ttl = Math.min(MAX_TTL_MS, Math.max(this.ttlMs, (at - started) * SLOW_COUNT_FACTOR))
    const fresh = { total, at, ttl, refreshing: false }
    if (generation !== this.#generation) return fresh
    if (!this.#totals.has(key) && this.#totals.size >= MAX_FILTERS) this.#totals.clear()
    this.#totals.set(key, fresh)
    return fresh
  }
}
