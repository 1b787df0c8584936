/**
 * The View tab's metrics, cached per range for a few seconds. Reading a range's metric cells
 * costs a scan of its minutes (hundreds of milliseconds over a large history on SQLite, whose
 * driver blocks the event loop), and every open page asks again on every task event; so one
 * read per range serves every viewer for `ttlMs`, a stale value is served while one refresh
 * runs in the background, and only the first viewer of a range ever waits. The keys are the
 * fixed ranges, so the cache cannot grow with user input.
 *
 * A value carries when its read started, so a page shown a value read before the change that
 * made it ask (a task event) knows to ask once more when the value is due: a background
 * refresh then reaches the page too, instead of waiting for the next event.
 */
import type { TaskMetrics } from '../../metrics-report.js'

/** One range's metrics and when their read started. */
interface Entry<T> {
  value: T | null
  at: number
  pending: Promise<T> | null
}

/** A per-range cache with stale-while-revalidate and single-flight reads. */
export class MetricsCache<T = TaskMetrics> {
  readonly #entries = new Map<string, Entry<T>>()

  constructor(
    private readonly read: (range: string) => Promise<T>,
    private readonly now: () => number,
    private readonly ttlMs = 5_000,
  ) {}

  /** The cached metrics of `range` (null before the first read finished); starts a read if due. */
  peek(range: string): T | null {
    const entry = this.#entry(range)
    void this.#refreshIfDue(range, entry)
    return entry.value
  }

  /** When the cached value of `range` was read (its read started), or null before the first. */
  readAt(range: string): number | null {
    const entry = this.#entries.get(range)
    return entry?.value == null ? null : entry.at
  }

  /**
   * The metrics of `range` no older than the TTL (waiting for a read when the cached value is
   * due), with when their read started.
   */
  async current(range: string): Promise<{ value: T; readAt: number }> {
    const entry = this.#entry(range)
    const pending = this.#refreshIfDue(range, entry)
    // No refresh due means a value younger than the TTL is cached.
    const value = pending === null ? (entry.value as T) : await pending
    return { value, readAt: entry.at }
  }

  /** How long (ms) a value read at `readAt` is served before a refresh is due. */
  dueIn(readAt: number): number {
    return Math.max(0, this.ttlMs - (this.now() - readAt))
  }

  /** The clock of the cache (ms). */
  clock(): number {
    return this.now()
  }

  /** The metrics of `range`: the cached value (a stale one triggers a refresh), else a read. */
  async get(range: string): Promise<T> {
    const entry = this.#entry(range)
    const pending = this.#refreshIfDue(range, entry)
    if (entry.value !== null) return entry.value
    return pending ?? (await this.#load(range, entry))
  }

  #entry(range: string): Entry<T> {
    let entry = this.#entries.get(range)
    if (entry === undefined) {
      entry = { value: null, at: 0, pending: null }
      this.#entries.set(range, entry)
    }
    return entry
  }

  #refreshIfDue(range: string, entry: Entry<T>): Promise<T> | null {
    if (entry.pending !== null) return entry.pending
    if (entry.value !== null && this.now() - entry.at < this.ttlMs) return null
    return this.#load(range, entry)
  }

  #load(range: string, entry: Entry<T>): Promise<T> {
    // The start, not the end: a change during the read may be missing from its value.
    const started = this.now()
    const pending = this.read(range).then(
      (value) => {
        entry.value = value
        entry.at = started
        entry.pending = null
        return value
      },
      (error: unknown) => {
        entry.pending = null
        throw error
      },
    )
    // A background refresh that fails leaves the old value; the next request tries again.
    pending.catch(() => undefined)
    entry.pending = pending
    return pending
  }
}
