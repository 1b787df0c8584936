/**
 * The four counting algorithms, as pure functions over a counter's state: given the rule, the
 * stored state and "now", each returns whether the request is allowed, what the headers should
 * say and the next state. Counters (memory, snapshot, Redis) only store states; the Redis Lua
 * script mirrors these functions line for line, and the tests pin both to the same outcomes.
 *
 * A blocked request never changes state: it consumes nothing.
 *
 * Why in src/common: both halves count with them — route rate limits, and the task manager's
 * rate-limited queues (a queue's `rateLimit` takes the same limit strings and moving window).
 */

/** The algorithm values accepted on the wire. */
export const ALGORITHMS = [
  'fixed_window',
  'sliding_window',
  'moving_window',
  'token_bucket',
] as const

/** One of {@link ALGORITHMS}. */
export type Algorithm = (typeof ALGORITHMS)[number]

/** What one counter enforces. */
export interface CounterRule {
  readonly algorithm: Algorithm
  /** The limit's count per period. */
  readonly count: number
  readonly periodMs: number
  /** Extra requests above the count (window algorithms) or extra bucket capacity (token bucket). */
  readonly burst: number
}

/** `count` requests in the window that started at `start`. */
export interface FixedWindowState {
  readonly kind: 'fixed_window'
  readonly start: number
  readonly count: number
}

/** The current window's count plus the previous window's, weighted by overlap. */
export interface SlidingWindowState {
  readonly kind: 'sliding_window'
  readonly start: number
  readonly count: number
  readonly previous: number
}

/** The timestamps of the requests counted within the last period, oldest first. */
export interface MovingWindowState {
  readonly kind: 'moving_window'
  readonly stamps: readonly number[]
}

/** Tokens left at `updated`; tokens refill continuously at count/period. */
export interface TokenBucketState {
  readonly kind: 'token_bucket'
  readonly tokens: number
  readonly updated: number
}

/** The state of one counter. */
export type CounterState =
  FixedWindowState | SlidingWindowState | MovingWindowState | TokenBucketState

/** The verdict of one counter for one request. */
export interface CounterOutcome {
  readonly allowed: boolean
  /** The effective limit: count + burst (the token bucket's capacity). */
  readonly effective: number
  /** Requests left after this one (0 when blocked). */
  readonly remaining: number
  /** Epoch ms when the window resets (bucket full again). */
  readonly resetAt: number
  /** Ms until a request would be allowed again; 0 when allowed. */
  readonly retryAfterMs: number
}

/**
 * An outcome with the state to store when the request is allowed, and when it may be forgotten.
 * One object rather than an outcome wrapped in another: it is created for every counted
 * request, and the outcome handed back to the evaluator is this object itself.
 */
export interface CounterStep extends CounterOutcome {
  /** The state after counting this request; absent when blocked (nothing changes). */
  readonly next?: CounterState
  /** Epoch ms after which the state holds nothing worth keeping. */
  readonly expiresAt: number
}

/** The effective limit of a rule: limit plus burst (a burst raises the ceiling). */
export function effectiveLimit(rule: CounterRule): number {
  return rule.count + rule.burst
}

/** Runs the rule's algorithm over `state` (undefined or of another algorithm = fresh). */
export function step(rule: CounterRule, state: CounterState | undefined, now: number): CounterStep {
  const current = state?.kind === rule.algorithm ? state : undefined
  switch (rule.algorithm) {
    case 'fixed_window':
      return fixedWindow(rule, current as FixedWindowState | undefined, now)
    case 'sliding_window':
      return slidingWindow(rule, current as SlidingWindowState | undefined, now)
    case 'moving_window':
      return movingWindow(rule, current as MovingWindowState | undefined, now)
    case 'token_bucket':
      return tokenBucket(rule, current as TokenBucketState | undefined, now)
  }
}

function fixedWindow(rule: CounterRule, state: FixedWindowState | undefined, now: number) {
  const effective = effectiveLimit(rule)
  const start = now - (now % rule.periodMs)
  const resetAt = start + rule.periodMs
  const count = state?.start === start ? state.count : 0
  if (count >= effective) {
    return blocked(effective, resetAt, resetAt - now, resetAt)
  }
  return {
    allowed: true,
    effective,
    remaining: effective - count - 1,
    resetAt,
    retryAfterMs: 0,
    next: { kind: 'fixed_window', start, count: count + 1 },
    expiresAt: resetAt,
  } satisfies CounterStep
}

function slidingWindow(rule: CounterRule, state: SlidingWindowState | undefined, now: number) {
  const effective = effectiveLimit(rule)
  const period = rule.periodMs
  const start = now - (now % period)
  let count = 0
  let previous = 0
  if (state !== undefined) {
    if (state.start === start) {
      count = state.count
      previous = state.previous
    } else if (state.start === start - period) {
      previous = state.count
    }
  }
  const elapsed = now - start
  const weighted = Math.floor((previous * (period - elapsed)) / period) + count
  const resetAt = start + period
  if (weighted >= effective) {
    // Capacity re-opens once the previous window's weight has decayed enough. A full current
    // window (count = effective) becomes the previous one, whose weight drops below the limit
    // 1 ms into the next window.
    const needed = period - elapsed - ((effective - count) * period) / Math.max(previous, 1)
    const retry = count >= effective ? resetAt - now + 1 : Math.max(1, Math.floor(needed) + 1)
    return blocked(effective, now + retry, retry, start + 2 * period)
  }
  return {
    allowed: true,
    effective,
    remaining: effective - weighted - 1,
    resetAt,
    retryAfterMs: 0,
    next: { kind: 'sliding_window', start, count: count + 1, previous },
    expiresAt: start + 2 * period,
  } satisfies CounterStep
}

function movingWindow(rule: CounterRule, state: MovingWindowState | undefined, now: number) {
  const effective = effectiveLimit(rule)
  const since = now - rule.periodMs
  const stamps = (state?.stamps ?? []).filter((stamp) => stamp > since)
  if (stamps.length >= effective) {
    // The request fits again once enough of the oldest stamps have left the window.
    const freeing = stamps[stamps.length - effective] ?? now
    const resetAt = freeing + rule.periodMs
    return blocked(
      effective,
      resetAt,
      Math.max(1, resetAt - now),
      (stamps.at(-1) ?? now) + rule.periodMs,
    )
  }
  stamps.push(now)
  const oldest = stamps[0] ?? now
  return {
    allowed: true,
    effective,
    remaining: effective - stamps.length,
    resetAt: oldest + rule.periodMs,
    retryAfterMs: 0,
    next: { kind: 'moving_window', stamps },
    expiresAt: now + rule.periodMs,
  } satisfies CounterStep
}

function tokenBucket(rule: CounterRule, state: TokenBucketState | undefined, now: number) {
  const capacity = effectiveLimit(rule)
  const tokens = state === undefined ? capacity : tokensAt(rule, state, now)
  if (tokens < 1) {
    const retry = tokenWaitMs(rule, tokens)
    return blocked(capacity, now + retry, retry, bucketFullAt(rule, tokens, now))
  }
  const left = tokens - 1
  const fullAt = bucketFullAt(rule, left, now)
  return {
    allowed: true,
    effective: capacity,
    remaining: Math.floor(left),
    resetAt: fullAt,
    retryAfterMs: 0,
    next: { kind: 'token_bucket', tokens: left, updated: now },
    expiresAt: fullAt,
  } satisfies CounterStep
}

/** The tokens of a bucket at `now`: its stored level refilled at count/period, up to capacity. */
export function tokensAt(rule: CounterRule, state: TokenBucketState, now: number): number {
  const elapsed = Math.max(0, now - state.updated)
  return Math.min(effectiveLimit(rule), state.tokens + elapsed * (rule.count / rule.periodMs))
}

/** Ms until a bucket holding `tokens` (fewer than one) holds one again. */
export function tokenWaitMs(rule: CounterRule, tokens: number): number {
  return Math.max(1, Math.ceil((1 - tokens) / (rule.count / rule.periodMs)))
}

/** Epoch ms at which a bucket holding `tokens` at `now` is full again. */
export function bucketFullAt(rule: CounterRule, tokens: number, now: number): number {
  return now + Math.ceil((effectiveLimit(rule) - tokens) / (rule.count / rule.periodMs))
}

function blocked(
  effective: number,
  resetAt: number,
  retryAfterMs: number,
  expiresAt: number,
): CounterStep {
  return { allowed: false, effective, remaining: 0, resetAt, retryAfterMs, expiresAt }
}
