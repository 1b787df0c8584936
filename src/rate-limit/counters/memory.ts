/**
 * In-process counters: one Map of buckets per scope, each entry expiring with its window.
 * Not shared between processes. Memory stays bounded, and the bound cannot be
 * turned against other clients:
 *
 * - past `maxEntries`, a counter is evicted from the scope that holds the most counters, so a
 *   flood of random keys on one route pays for itself and never resets another route's
 *   counters (a login limit);
 * - inside that scope the least recently used counter goes (a "second chance" clock: a counter
 *   used since the hand last passed is kept and moved to the back), so a client that keeps
 *   sending is not reset by a flood of new keys;
 * - expiry is amortised: each new counter looks at the two oldest of its scope and drops them
 *   if they have expired, and a timer sweeps the rest now and then; no insertion ever walks the
 *   whole table.
 */
import {
  bucketFullAt,
  effectiveLimit,
  step,
  tokensAt,
  tokenWaitMs,
  type CounterOutcome,
  type CounterRule,
  type CounterState,
  type CounterStep,
  type FixedWindowState,
  type TokenBucketState,
} from '../algorithms.js'
import type { CounterCheck, CounterReading, CounterStore } from './types.js'

/** A stored state this store alone reads, and so may update in place. */
type Writable<State> = { -readonly [field in keyof State]: State[field] }

/** A stored counter state and when it may be forgotten. */
export interface CounterEntry {
  state: CounterState
  expiresAt: number
  /** Set on use, cleared by the eviction clock: a used entry gets a second chance. */
  used?: boolean
}

/** Options of {@link memoryCounters}. */
export interface MemoryCounterOptions {
  /**
   * Upper bound on stored counters (default 100 000); beyond it the scope holding the most
   * counters loses its least recently used one.
   */
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
      const result = this.count(check.scope, check.bucket, check.rule, now)
      outcomes[evaluated++] = result
      if (result.next === undefined) break
    }
    if (evaluated < outcomes.length) outcomes.length = evaluated
    return outcomes
  }

  peek(checks: readonly CounterCheck[], now: number): CounterOutcome[] {
    // `step` computes the next state without touching the stored one; nothing is stored here.
    return checks.map((check) => {
      const entry = this.scopes.get(check.scope)?.get(check.bucket)
      return step(
        check.rule,
        entry !== undefined && entry.expiresAt > now ? entry.state : undefined,
        now,
      )
    })
  }

  /**
   * Counts one request against a single token-bucket counter: 0 when allowed, else the ms to
   * wait — the outcome {@link consume} would give for this one check, but a stored bucket is
   * updated in place instead of being replaced by a new state and outcome, so a caller counted
   * on every request allocates nothing (the OFREP limiter). In-place is safe: once stored, a
   * state is read by this store only.
   */
  takeToken(scope: string, bucket: string, rule: CounterRule, now: number): number {
    const entry = this.scopes.get(scope)?.get(bucket)
    const state = entry?.state
    if (
      entry === undefined ||
      state?.kind !== 'token_bucket' ||
      rule.algorithm !== 'token_bucket' ||
      entry.expiresAt <= now
    ) {
      return this.count(scope, bucket, rule, now).retryAfterMs
    }
    const tokens = takeStoredToken(entry, state, rule, now)
    return tokens < 1 ? tokenWaitMs(rule, tokens) : 0
  }

  /**
   * Counts one request as {@link consume} would for this one check, giving the same answer:
   * true when allowed, with `reading` filled in; false when refused, with nothing changed (so
   * `consume` of the same check then gives the refusal's details without counting). An
   * existing fixed-window or token-bucket counter is updated in place, so the request
   * allocates nothing (the route limiter's path; a new counter and the other algorithms go
   * through {@link count}).
   */
  hit(
    scope: string,
    bucket: string,
    rule: CounterRule,
    now: number,
    reading: CounterReading,
  ): boolean {
    const entry = this.scopes.get(scope)?.get(bucket)
    if (entry !== undefined && entry.expiresAt > now && entry.state.kind === rule.algorithm) {
      if (entry.state.kind === 'fixed_window') {
        const state = entry.state as Writable<FixedWindowState>
        const start = now - (now % rule.periodMs)
        if (state.start === start) {
          entry.used = true
          const effective = effectiveLimit(rule)
          if (state.count >= effective) return false
          reading.remaining = effective - ++state.count
          reading.resetAt = start + rule.periodMs
          return true
        }
      } else if (entry.state.kind === 'token_bucket') {
        const tokens = takeStoredToken(entry, entry.state, rule, now)
        if (tokens < 1) return false
        reading.remaining = Math.floor(tokens - 1)
        reading.resetAt = entry.expiresAt
        return true
      }
    }
    const result = this.count(scope, bucket, rule, now)
    if (!result.allowed) return false
    reading.remaining = result.remaining
    reading.resetAt = result.resetAt
    return true
  }

  /** Steps one counter and stores its next state (nothing is stored when it refuses). */
  private count(scope: string, bucket: string, rule: CounterRule, now: number): CounterStep {
    let buckets = this.scopes.get(scope)
    const entry = buckets?.get(bucket)
    const result = step(
      rule,
      entry !== undefined && entry.expiresAt > now ? entry.state : undefined,
      now,
    )
    if (entry !== undefined) entry.used = true
    if (result.next === undefined) return result
    if (entry !== undefined) {
      entry.state = result.next
      entry.expiresAt = result.expiresAt
      return result
    }
    if (buckets === undefined) {
      buckets = new Map()
      this.scopes.set(scope, buckets)
    }
    this.dropExpiredOldest(buckets, now)
    buckets.set(bucket, { state: result.next, expiresAt: result.expiresAt, used: false })
    if (++this.size > this.maxEntries) this.evict()
    return result
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
    buckets.set(bucket, { state: entry.state, expiresAt: entry.expiresAt, used: false })
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

  /** Over the bound: evict from the largest scope, least recently used first. */
  private evict(): void {
    while (this.size > this.maxEntries) {
      let largest: Map<string, CounterEntry> | undefined
      let largestScope = ''
      for (const [scope, buckets] of this.scopes) {
        if (largest === undefined || buckets.size > largest.size) {
          largest = buckets
          largestScope = scope
        }
      }
      if (largest === undefined) return
      evictOne(largest)
      this.size--
      if (largest.size === 0) this.scopes.delete(largestScope)
    }
  }

  /** Drops the (at most two) oldest entries of a scope when they have expired. */
  private dropExpiredOldest(buckets: Map<string, CounterEntry>, now: number): void {
    for (let i = 0; i < 2; i++) {
      const oldest = buckets.entries().next()
      if (oldest.done === true || oldest.value[1].expiresAt > now) return
      buckets.delete(oldest.value[0])
      this.size--
    }
  }
}

/**
 * Takes one token from a stored, unexpired token bucket, in place (the entry is marked used);
 * returns the tokens it held before. Fewer than 1: nothing was taken and nothing changed.
 */
function takeStoredToken(
  entry: CounterEntry,
  state: TokenBucketState,
  rule: CounterRule,
  now: number,
): number {
  entry.used = true
  const tokens = tokensAt(rule, state, now)
  if (tokens < 1) return tokens
  const level = state as Writable<TokenBucketState>
  level.tokens = tokens - 1
  level.updated = now
  entry.expiresAt = bucketFullAt(rule, level.tokens, now)
  return tokens
}

/**
 * Evicts one entry of a non-empty scope: the clock hand is the oldest position of the Map;
 * an entry used since it was last passed is moved to the back (second chance) instead.
 */
function evictOne(buckets: Map<string, CounterEntry>): void {
  for (;;) {
    const oldest = buckets.entries().next()
    if (oldest.done === true) return
    const [bucket, entry] = oldest.value
    buckets.delete(bucket)
    if (entry.used !== true) return
    entry.used = false
    buckets.set(bucket, entry)
  }
}

/** Creates in-process counters. */
export function memoryCounters(options?: MemoryCounterOptions): MemoryCounters {
  return new MemoryCounters(options)
}
