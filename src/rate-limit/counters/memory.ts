/**
 * In-process counters: one Map of buckets per scope, each entry expiring with its window.
 * Not shared between processes (spec rule 9). Memory stays bounded: expired entries are swept
 * periodically, and past `maxEntries` the oldest entries are dropped first.
 */
import { step, type CounterOutcome, type CounterState } from '../algorithms.js'
import type { CounterCheck, CounterStore } from './types.js'

/** A stored counter state and when it may be forgotten. */
export interface CounterEntry {
  state: CounterState
  expiresAt: number
}

/** Options of {@link memoryCounters}. */
export interface MemoryCounterOptions {
  /** Upper bound on stored counters (default 100 000). */
  maxEntries?: number
  /** Seconds between sweeps of expired entries (default 60; 0 disables the timer). */
  sweepInterval?: number
  /** Time source of the sweeper (default `Date.now`). */
  now?: () => number
}

/** Memory counters; also the engine of the file-snapshot variant. */
export class MemoryCounters implements CounterStore {
  readonly kind: string = 'memory'
  /** Counter entries by scope, then bucket. */
  protected readonly scopes = new Map<string, Map<string, CounterEntry>>()
  private size = 0
  private readonly maxEntries: number
  private readonly timer: NodeJS.Timeout | null
  private readonly now: () => number

  constructor(options: MemoryCounterOptions = {}) {
    this.maxEntries = options.maxEntries ?? 100_000
    this.now = options.now ?? Date.now
    const interval = options.sweepInterval ?? 60
    this.timer = interval > 0 ? setInterval(() => this.sweep(this.now()), interval * 1000) : null
    this.timer?.unref()
  }

  consume(checks: readonly CounterCheck[], now: number): CounterOutcome[] {
    const outcomes = new Array<CounterOutcome>(checks.length)
    let evaluated = 0
    for (const check of checks) {
      let buckets = this.scopes.get(check.scope)
      const entry = buckets?.get(check.bucket)
      const result = step(
        check.rule,
        entry !== undefined && entry.expiresAt > now ? entry.state : undefined,
        now,
      )
      outcomes[evaluated++] = result
      if (result.next === undefined) break
      if (entry !== undefined) {
        entry.state = result.next
        entry.expiresAt = result.expiresAt
        continue
      }
      if (buckets === undefined) {
        buckets = new Map()
        this.scopes.set(check.scope, buckets)
      }
      buckets.set(check.bucket, { state: result.next, expiresAt: result.expiresAt })
      if (++this.size > this.maxEntries) this.evict(now)
    }
    if (evaluated < outcomes.length) outcomes.length = evaluated
    return outcomes
  }

  reset(scope: string): Promise<void> {
    const buckets = this.scopes.get(scope)
    if (buckets !== undefined) {
      this.size -= buckets.size
      this.scopes.delete(scope)
    }
    return Promise.resolve()
  }

  close(): Promise<void> {
    if (this.timer !== null) clearInterval(this.timer)
    return Promise.resolve()
  }

  /** Number of stored counters (tests and diagnostics). */
  get entryCount(): number {
    return this.size
  }

  /** Puts back one entry (snapshot restore); expired entries are skipped. */
  protected restore(scope: string, bucket: string, entry: CounterEntry, now: number): void {
    if (entry.expiresAt <= now) return
    let buckets = this.scopes.get(scope)
    if (buckets === undefined) {
      buckets = new Map()
      this.scopes.set(scope, buckets)
    }
    if (!buckets.has(bucket)) this.size++
    buckets.set(bucket, entry)
  }

  /** Drops every entry that expired before `now`. */
  sweep(now: number): void {
    for (const [scope, buckets] of this.scopes) {
      for (const [bucket, entry] of buckets) {
        if (entry.expiresAt <= now) {
          buckets.delete(bucket)
          this.size--
        }
      }
      if (buckets.size === 0) this.scopes.delete(scope)
    }
  }

  /** Over the bound: sweep, then drop the oldest-inserted entries until back under it. */
  private evict(now: number): void {
    this.sweep(now)
    for (const [scope, buckets] of this.scopes) {
      for (const bucket of buckets.keys()) {
        if (this.size <= this.maxEntries) return
        buckets.delete(bucket)
        this.size--
      }
      if (buckets.size === 0) this.scopes.delete(scope)
    }
  }
}

/** Creates in-process counters. */
export function memoryCounters(options?: MemoryCounterOptions): MemoryCounters {
  return new MemoryCounters(options)
}
