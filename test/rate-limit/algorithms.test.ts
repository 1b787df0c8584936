import { describe, expect, it } from 'vitest'
import {
  parseAlgorithm,
  step,
  type CounterRule,
  type CounterState,
} from '../../src/rate-limit/algorithms.js'

/** Runs requests at the given times through one counter; returns allowed flags and outcomes. */
function run(rule: CounterRule, times: number[]) {
  let state: CounterState | undefined
  return times.map((now) => {
    const result = step(rule, state, now)
    if (result.next !== undefined) state = result.next
    return result
  })
}

const T0 = 1_800_000_000_000 // a multiple of 60 000: windows start here
const minute = (algorithm: CounterRule['algorithm'], count: number, burst = 0): CounterRule => ({
  algorithm,
  count,
  periodMs: 60_000,
  burst,
})

describe('fixed_window', () => {
  it('allows the N-th request and blocks the N+1-th', () => {
    const outcomes = run(minute('fixed_window', 3), [T0, T0 + 1, T0 + 2, T0 + 3])
    expect(outcomes.map((o) => o.allowed)).toEqual([true, true, true, false])
    expect(outcomes.map((o) => o.remaining)).toEqual([2, 1, 0, 0])
    expect(outcomes[3]).toMatchObject({ resetAt: T0 + 60_000, retryAfterMs: 60_000 - 3 })
  })

  it('rolls over at the window boundary', () => {
    const outcomes = run(minute('fixed_window', 2), [
      T0 + 59_000,
      T0 + 59_500,
      T0 + 59_999,
      T0 + 60_000,
    ])
    expect(outcomes.map((o) => o.allowed)).toEqual([true, true, false, true])
    expect(outcomes[3]?.remaining).toBe(1)
  })

  it('adds burst to the limit', () => {
    const outcomes = run(minute('fixed_window', 2, 1), [T0, T0, T0, T0])
    expect(outcomes.map((o) => o.allowed)).toEqual([true, true, true, false])
    expect(outcomes[0]?.effective).toBe(3)
  })

  it('a blocked request does not change the state', () => {
    const rule = minute('fixed_window', 1)
    const first = step(rule, undefined, T0)
    const blocked = step(rule, first.next, T0 + 1)
    expect(blocked.next).toBeUndefined()
  })
})

describe('sliding_window', () => {
  it('weights the previous window by its overlap', () => {
    const rule = minute('sliding_window', 10)
    let state: CounterState | undefined
    for (let i = 0; i < 10; i++) state = step(rule, state, T0 + i).next ?? state
    expect(step(rule, state, T0 + 100).allowed).toBe(false)
    // 30 s into the next window, the previous 10 weigh floor(10 * 0.5) = 5: five more fit.
    const outcomes: boolean[] = []
    for (let i = 0; i < 6; i++) {
      const result = step(rule, state, T0 + 90_000)
      outcomes.push(result.allowed)
      state = result.next ?? state
    }
    expect(outcomes).toEqual([true, true, true, true, true, false])
  })

  it('forgets everything after two periods and reports a retry time when blocked', () => {
    const rule = minute('sliding_window', 2)
    const outcomes = run(rule, [T0, T0 + 1, T0 + 2, T0 + 120_000])
    expect(outcomes.map((o) => o.allowed)).toEqual([true, true, false, true])
    expect(outcomes[2]?.retryAfterMs).toBeGreaterThan(0)
  })

  it('burst raises the effective limit', () => {
    const outcomes = run(minute('sliding_window', 1, 2), [T0, T0, T0, T0])
    expect(outcomes.map((o) => o.allowed)).toEqual([true, true, true, false])
  })
})

describe('moving_window', () => {
  it('counts requests in the last period exactly', () => {
    const rule = minute('moving_window', 2)
    const outcomes = run(rule, [T0, T0 + 30_000, T0 + 59_999, T0 + 60_000, T0 + 60_001])
    expect(outcomes.map((o) => o.allowed)).toEqual([true, true, false, true, false])
    // blocked at T0+59_999: the stamp at T0 leaves the window at T0+60_000
    expect(outcomes[2]?.retryAfterMs).toBe(1)
    expect(outcomes[4]?.retryAfterMs).toBe(30_000 - 1)
  })

  it('with burst', () => {
    const outcomes = run(minute('moving_window', 1, 1), [T0, T0 + 1, T0 + 2])
    expect(outcomes.map((o) => o.allowed)).toEqual([true, true, false])
  })
})

describe('token_bucket', () => {
  it('starts full at count + burst and refills at count/period', () => {
    // 6/minute: one token every 10 s; capacity 6 + 2 = 8
    const rule = minute('token_bucket', 6, 2)
    const times = Array.from({ length: 9 }, () => T0)
    const outcomes = run(rule, times)
    expect(outcomes.map((o) => o.allowed)).toEqual([...Array(8).fill(true), false])
    expect(outcomes[0]?.effective).toBe(8)
    expect(outcomes[8]?.retryAfterMs).toBe(10_000)
  })

  it('refills one token per interval, never above capacity', () => {
    const rule = minute('token_bucket', 6)
    let state: CounterState | undefined
    for (let i = 0; i < 6; i++) state = step(rule, state, T0).next ?? state
    expect(step(rule, state, T0 + 9_999).allowed).toBe(false)
    const refilled = step(rule, state, T0 + 10_000)
    expect(refilled).toMatchObject({ allowed: true, remaining: 0 })
    state = refilled.next
    expect(step(rule, state, T0 + 10_001).allowed).toBe(false)
    // after a long idle time the bucket holds at most its capacity
    const idle = step(rule, state, T0 + 10 * 60_000)
    expect(idle.remaining).toBe(5)
  })

  it('differs from moving_window: it refills gradually', () => {
    const times = [T0, T0, T0, T0 + 20_000, T0 + 20_000]
    const bucket = run(minute('token_bucket', 3), times).map((o) => o.allowed)
    const moving = run(minute('moving_window', 3), times).map((o) => o.allowed)
    expect(bucket).toEqual([true, true, true, true, false])
    expect(moving).toEqual([true, true, true, false, false])
  })
})

describe('algorithm names', () => {
  it('defaults to fixed_window and rejects unknown ones', () => {
    expect(parseAlgorithm(undefined)).toBe('fixed_window')
    expect(parseAlgorithm('token_bucket')).toBe('token_bucket')
    expect(() => parseAlgorithm('leaky_bucket')).toThrow(/fixed_window, sliding_window/)
  })

  it('a state of another algorithm counts as fresh', () => {
    const fixed = step(minute('fixed_window', 1), undefined, T0).next
    expect(step(minute('token_bucket', 1), fixed, T0).allowed).toBe(true)
  })
})

describe('retry_after is exact', () => {
  // A deterministic pseudo-random request pattern; whenever a request is blocked, a request
  // retryAfterMs later must be allowed, and (when retryAfterMs > 1) one ms earlier blocked.
  for (const algorithm of [
    'fixed_window',
    'sliding_window',
    'moving_window',
    'token_bucket',
  ] as const) {
    it(algorithm, () => {
      const rule: CounterRule = { algorithm, count: 4, periodMs: 1000, burst: 1 }
      let seed = 7
      const random = () => (seed = (seed * 16807) % 2147483647) / 2147483647
      let state: CounterState | undefined
      let now = T0
      let checked = 0
      for (let i = 0; i < 3000; i++) {
        now += Math.floor(random() * 150)
        const result = step(rule, state, now)
        if (result.next !== undefined) {
          state = result.next
          continue
        }
        const retry = result.retryAfterMs
        expect(retry).toBeGreaterThan(0)
        expect(step(rule, state, now + retry).allowed).toBe(true)
        if (retry > 1) expect(step(rule, state, now + retry - 1).allowed).toBe(false)
        checked++
      }
      expect(checked).toBeGreaterThan(50)
    })
  }
})
