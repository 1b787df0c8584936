/**
 * Property tests of drill 5: the limit-string parser accepts exactly the documented form and
 * rejects anything else with a validation error; flag evaluation never throws and gives the
 * same answer for the same context; each rate-limit algorithm never admits more than the limit
 * plus burst, checked against a reference model over random request times.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { ValidationError } from '../../src/core/errors.js'
import { FlagService } from '../../src/flags/service.js'
import {
  step,
  type Algorithm,
  type CounterRule,
  type CounterState,
} from '../../src/rate-limit/algorithms.js'
import { MAX_PERIOD_MS, parseLimit } from '../../src/rate-limit/limit.js'
import { booleanFlag } from '../flags/helpers.js'

const UNITS: [string, number][] = [
  ['s', 1000],
  ['second', 1000],
  ['seconds', 1000],
  ['min', 60_000],
  ['minute', 60_000],
  ['h', 3_600_000],
  ['hours', 3_600_000],
  ['d', 86_400_000],
  ['day', 86_400_000],
]

describe('limit-string parser', () => {
  it('parses every well-formed limit to its count and period, and refuses a period over a year', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 1_000_000_000 }),
        fc.option(fc.integer({ min: 1, max: 1000 }), { nil: undefined }),
        fc.constantFrom(...UNITS),
        fc.constantFrom('', ' '),
        fc.boolean(),
        (count, n, [unit, ms], space, upper) => {
          const text = `${count}${space}/${space}${n === undefined ? '' : `${n} `}${upper ? unit.toUpperCase() : unit}`
          const periodMs = ms * (n ?? 1)
          if (periodMs > MAX_PERIOD_MS) {
            expect(() => parseLimit(text)).toThrow(ValidationError)
            return
          }
          const limit = parseLimit(text)
          expect(limit.count).toBe(count)
          expect(limit.periodMs).toBe(periodMs)
        },
      ),
      { numRuns: 2000 },
    )
  })

  it('rejects anything else with a validation error, never another error', () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.string({ maxLength: 30 }), fc.jsonValue({ maxDepth: 2 })),
        (input) => {
          let limit
          try {
            limit = parseLimit(input)
          } catch (error) {
            expect(error).toBeInstanceOf(ValidationError)
            return
          }
          // Accepted: then it is a positive safe count over a positive finite period.
          expect(Number.isSafeInteger(limit.count) && limit.count >= 1).toBe(true)
          expect(Number.isFinite(limit.periodMs) && limit.periodMs > 0).toBe(true)
        },
      ),
      { numRuns: 5000 },
    )
    for (const bad of [
      '0/minute',
      '2/constructor',
      '1/__proto__',
      '-1/s',
      '1.5/s',
      '1/0 s',
      'unlimited',
    ])
      expect(() => parseLimit(bad)).toThrow(ValidationError)
  })
})

describe('flag evaluator', () => {
  it('never throws and answers the same for the same context', async () => {
    const flags = new FlagService()
    await flags.start()
    await flags.saveSegment({ key: 'staff', name: 'Staff', included: ['u1'], excluded: ['u2'] })
    await flags.saveFlag(
      booleanFlag('rollout', {
        rules: [
          {
            clauses: [{ attribute: 'country', operator: 'in', values: ['FR', 'DE'] }],
            variation: 'on',
          },
          {
            clauses: [{ attribute: 'key', operator: 'in_segment', values: ['staff'] }],
            variation: 'off',
          },
        ],
        fallthrough: [
          { variation: 'on', weight: 30_000 },
          { variation: 'off', weight: 70_000 },
        ],
      }),
    )
    // The flag is live: a matching rule serves its variation.
    expect(flags.evaluate('rollout', { targetingKey: 'u9', country: 'FR' }).value).toBe(true)
    expect(flags.evaluate('rollout', { targetingKey: 'u1' }).value).toBe(false)
    const context = fc.oneof(
      fc.constant(null),
      fc.dictionary(
        fc.oneof(
          fc.constantFrom('targetingKey', 'key', 'country', '__proto__', 'constructor'),
          fc.string(),
        ),
        fc.jsonValue({ maxDepth: 3 }),
        { maxKeys: 5 },
      ),
    )
    fc.assert(
      fc.property(
        fc.constantFrom('rollout', 'missing', ''),
        context,
        fc.jsonValue({ maxDepth: 1 }),
        (key, ctx, fallback) => {
          const first = flags.evaluate(key, ctx, fallback)
          const second = flags.evaluate(key, structuredClone(ctx), fallback)
          expect(second).toEqual(first)
        },
      ),
      { numRuns: 3000 },
    )
    flags.close()
  })
})

/** The number of requests the algorithm admits, per the reference model, is never exceeded. */
function admitted(rule: CounterRule, times: readonly number[]): number[] {
  let state: CounterState | undefined
  const allowed: number[] = []
  for (const now of times) {
    const outcome = step(rule, state, now)
    if (outcome.allowed) {
      allowed.push(now)
      state = outcome.next
    }
  }
  return allowed
}

const ruleArbitrary = (algorithm: Algorithm) =>
  fc.record({
    algorithm: fc.constant(algorithm),
    count: fc.integer({ min: 1, max: 20 }),
    periodMs: fc.integer({ min: 10, max: 5000 }),
    burst: fc.integer({ min: 0, max: 5 }),
  })

/** Non-decreasing request times, dense enough to hit the limits. */
const timesArbitrary = fc
  .array(fc.integer({ min: 0, max: 400 }), { minLength: 1, maxLength: 300 })
  .map((gaps) => {
    let now = 1_700_000_000_000
    return gaps.map((gap) => (now += gap % 3 === 0 ? 0 : gap))
  })

/** A simple model of an algorithm that must admit exactly the requests the model admits. */
interface ReferenceModel {
  name: string
  algorithm: Algorithm
  /** What the model keeps, in words. */
  model: string
  /** A fresh model of `rule`: whether a request at `now` is admitted (and counted if so). */
  admits(rule: CounterRule): (now: number) => boolean
}

const referenceModels: ReferenceModel[] = [
  {
    name: 'fixed window',
    algorithm: 'fixed_window',
    model: 'a per-window counter',
    admits(rule) {
      const perWindow = new Map<number, number>()
      return (now) => {
        const window = Math.floor(now / rule.periodMs)
        const used = perWindow.get(window) ?? 0
        if (used >= rule.count + rule.burst) return false
        perWindow.set(window, used + 1)
        return true
      }
    },
  },
  {
    name: 'moving window',
    algorithm: 'moving_window',
    model: 'a log of the last period',
    admits(rule) {
      const log: number[] = []
      return (now) => {
        const recent = log.filter((stamp) => stamp > now - rule.periodMs)
        if (recent.length >= rule.count + rule.burst) return false
        log.push(now)
        return true
      }
    },
  },
]

describe('rate-limit algorithms against a reference model', () => {
  it.each(referenceModels)('$name: admits exactly what $model admits', (reference) => {
    fc.assert(
      fc.property(ruleArbitrary(reference.algorithm), timesArbitrary, (rule, times) => {
        expect(admitted(rule, times)).toEqual(times.filter(reference.admits(rule)))
      }),
      { numRuns: 500 },
    )
  })

  it('sliding window: never more than limit + burst in one window', () => {
    fc.assert(
      fc.property(ruleArbitrary('sliding_window'), timesArbitrary, (rule, times) => {
        const perWindow = new Map<number, number>()
        for (const now of admitted(rule, times)) {
          const window = Math.floor(now / rule.periodMs)
          perWindow.set(window, (perWindow.get(window) ?? 0) + 1)
        }
        for (const used of perWindow.values())
          expect(used).toBeLessThanOrEqual(rule.count + rule.burst)
      }),
      { numRuns: 500 },
    )
  })

  it('token bucket: never more than the capacity plus what refilled in any interval', () => {
    fc.assert(
      fc.property(ruleArbitrary('token_bucket'), timesArbitrary, (rule, times) => {
        const allowed = admitted(rule, times)
        const rate = rule.count / rule.periodMs
        for (let i = 0; i < allowed.length; i++) {
          for (let j = i; j < allowed.length; j++) {
            const span = allowed[j]! - allowed[i]!
            expect(j - i + 1).toBeLessThanOrEqual(
              rule.count + rule.burst + Math.floor(span * rate + 1e-9),
            )
          }
        }
      }),
      { numRuns: 300 },
    )
  })
})
