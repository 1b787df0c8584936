import { describe, expect, it } from 'vitest'
import {
  bucketOf,
  evaluateFlag,
  isSegmentMember,
  compileSegment,
  type Flag,
  type Rule,
} from '../../src/flags/index.js'
import { bucketForKey, bucketPrefix } from '../../src/flags/bucketing.js'
import { referenceBucket, snapshotOf, storedFlag, storedSegment } from './helpers.js'

const rule = (id: string, extra: Partial<Rule>): Rule => ({
  id,
  description: '',
  clauses: [],
  variation: null,
  rollout: null,
  track_events: false,
  ...extra,
})

describe('evaluation order and reasons', () => {
  const flag = storedFlag('checkout', {
    fallthrough: 'off',
    targets: { on: ['vip'] },
    rules: [
      rule('pro-rule', {
        clauses: [{ attribute: 'plan', operator: 'is', values: ['pro'] }],
        variation: 'on',
      }),
    ],
  })

  it('OFF when disabled, even for targeted keys', () => {
    const snapshot = snapshotOf([{ ...flag, enabled: false }])
    expect(evaluateFlag(snapshot, 'checkout', { key: 'vip' })).toMatchObject({
      value: false,
      variation: 'off',
      reason: 'OFF',
    })
  })

  it('TARGET_MATCH before rules', () => {
    const result = evaluateFlag(snapshotOf([flag]), 'checkout', {
      key: 'vip',
      attributes: { plan: 'free' },
    })
    expect(result).toMatchObject({ value: true, variation: 'on', reason: 'TARGET_MATCH' })
  })

  it('RULE_MATCH with the rule id', () => {
    const result = evaluateFlag(snapshotOf([flag]), 'checkout', {
      key: 'u1',
      attributes: { plan: 'pro' },
    })
    expect(result).toEqual({
      value: true,
      variation: 'on',
      reason: 'RULE_MATCH',
      rule_id: 'pro-rule',
      prerequisite_key: null,
      error_message: null,
      error_code: null,
      metadata: {},
    })
  })

  it("every result of a flag carries the flag's metadata; an unknown flag an empty one", () => {
    const metadata = { owner: 'checkout-team', version: 2, ratio: 0.5, beta: true }
    const described = storedFlag('described', {
      metadata,
      targets: { on: ['vip'] },
      rules: [
        rule('pro', {
          clauses: [{ attribute: 'plan', operator: 'is', values: ['pro'] }],
          variation: 'on',
        }),
      ],
      fallthrough: 'off',
    })
    const snapshot = snapshotOf([described])
    for (const context of [
      { key: 'vip' },
      { key: 'u', attributes: { plan: 'pro' } },
      { key: 'u', attributes: { plan: 'free' } },
    ]) {
      const result = evaluateFlag(snapshot, 'described', context)
      expect(result.metadata).toEqual(metadata)
      expect(Object.isFrozen(result.metadata)).toBe(true)
    }
    const off = evaluateFlag(snapshotOf([{ ...described, enabled: false }]), 'described', {
      key: 'u',
    })
    expect(off).toMatchObject({ reason: 'OFF', metadata })
    expect(evaluateFlag(snapshot, 'missing', { key: 'u' }).metadata).toEqual({})
  })

  it('a record stored before flags had metadata evaluates with an empty one', () => {
    const legacy: Partial<typeof flag> = { ...flag }
    delete legacy.metadata
    const result = evaluateFlag(snapshotOf([legacy as typeof flag]), 'checkout', { key: 'u1' })
    expect(result.metadata).toEqual({})
  })

  it('first matching rule wins', () => {
    const twoRules = storedFlag('two', {
      fallthrough: 'off',
      rules: [
        rule('first', {
          clauses: [{ attribute: 'a', operator: 'is', values: [1] }],
          variation: 'off',
        }),
        rule('second', {
          clauses: [{ attribute: 'a', operator: 'is', values: [1] }],
          variation: 'on',
        }),
      ],
    })
    expect(
      evaluateFlag(snapshotOf([twoRules]), 'two', { key: 'x', attributes: { a: 1 } }),
    ).toMatchObject({
      rule_id: 'first',
      variation: 'off',
    })
  })

  it('FALLTHROUGH when nothing matches', () => {
    expect(evaluateFlag(snapshotOf([flag]), 'checkout', { key: 'u1' })).toMatchObject({
      variation: 'off',
      reason: 'FALLTHROUGH',
      rule_id: null,
    })
  })

  it('DEFAULT for an unknown flag', () => {
    expect(evaluateFlag(snapshotOf([]), 'nope', { key: 'u1' })).toMatchObject({
      value: null,
      variation: null,
      reason: 'DEFAULT',
      error_code: 'FLAG_NOT_FOUND',
    })
  })

  it('ERROR (never a throw) for a rollout without a context key', () => {
    const rollout = storedFlag('r', {
      fallthrough: [
        { variation: 'on', weight: 50_000 },
        { variation: 'off', weight: 50_000 },
      ],
    })
    const result = evaluateFlag(snapshotOf([rollout]), 'r', {} as never)
    expect(result).toMatchObject({
      reason: 'ERROR',
      variation: null,
      error_code: 'TARGETING_KEY_MISSING',
    })
    expect(result.error_message).toContain('context key')
    expect(evaluateFlag(snapshotOf([rollout]), 'r', null).reason).toBe('ERROR')
  })

  it('ERROR when a clause test throws (a hostile attribute), never a throw', () => {
    const snapshot = snapshotOf([flag])
    const hostile = {
      key: 'u1',
      get attributes(): Record<string, unknown> {
        throw new Error('boom')
      },
    }
    expect(evaluateFlag(snapshot, 'checkout', hostile)).toMatchObject({
      reason: 'ERROR',
      error_message: 'Error: boom',
    })
  })

  it('returns shared frozen results (no allocation per evaluation)', () => {
    const snapshot = snapshotOf([flag])
    const a = evaluateFlag(snapshot, 'checkout', { key: 'u1' })
    const b = evaluateFlag(snapshot, 'checkout', { key: 'u2' })
    expect(a).toBe(b)
    expect(Object.isFrozen(a)).toBe(true)
  })
})

describe('prerequisites', () => {
  /** A chain f0 -> f1 -> ... -> f<depth>: each requires the next to serve `on`. */
  const chain = (depth: number): Flag[] =>
    Array.from({ length: depth + 1 }, (_, index) =>
      storedFlag(`f${index}`, {
        prerequisites: index < depth ? [{ flag_key: `f${index + 1}`, variation: 'on' }] : [],
      }),
    )

  it('serves off_variation with PREREQUISITE_FAIL and the key of the failing prerequisite', () => {
    const flags = [
      storedFlag('parent', { prerequisites: [{ flag_key: 'child', variation: 'on' }] }),
      storedFlag('child', { enabled: false }),
    ]
    expect(evaluateFlag(snapshotOf(flags), 'parent', { key: 'u' })).toMatchObject({
      value: false,
      variation: 'off',
      reason: 'PREREQUISITE_FAIL',
      prerequisite_key: 'child',
    })
  })

  it('passes when the prerequisite serves the required variation (even an off one)', () => {
    const flags = [
      storedFlag('parent', { prerequisites: [{ flag_key: 'child', variation: 'off' }] }),
      storedFlag('child', { enabled: false }),
    ]
    expect(evaluateFlag(snapshotOf(flags), 'parent', { key: 'u' }).reason).toBe('FALLTHROUGH')
  })

  it('runs before individual targets', () => {
    const flags = [
      storedFlag('parent', {
        targets: { on: ['vip'] },
        prerequisites: [{ flag_key: 'child', variation: 'on' }],
      }),
      storedFlag('child', { fallthrough: 'off' }),
    ]
    expect(evaluateFlag(snapshotOf(flags), 'parent', { key: 'vip' }).reason).toBe(
      'PREREQUISITE_FAIL',
    )
  })

  it('fails for a prerequisite that is not (yet) replicated', () => {
    const flags = [
      storedFlag('parent', { prerequisites: [{ flag_key: 'ghost', variation: 'on' }] }),
    ]
    expect(evaluateFlag(snapshotOf(flags), 'parent', { key: 'u' })).toMatchObject({
      reason: 'PREREQUISITE_FAIL',
      prerequisite_key: 'ghost',
    })
  })

  it('evaluates a chain of depth 10', () => {
    expect(evaluateFlag(snapshotOf(chain(10)), 'f0', { key: 'u' })).toMatchObject({
      reason: 'FALLTHROUGH',
      value: true,
    })
  })

  it('gives ERROR for a chain of depth 11', () => {
    expect(evaluateFlag(snapshotOf(chain(11)), 'f0', { key: 'u' })).toMatchObject({
      reason: 'ERROR',
      error_message: 'prerequisite chain deeper than 10',
    })
    expect(evaluateFlag(snapshotOf(chain(11)), 'f1', { key: 'u' }).reason).toBe('FALLTHROUGH')
  })
})

describe('bucketing', () => {
  it('equals SHA-1 of "<flag>:<kind>:<key>" mod 100000, computed independently', () => {
    const keys = ['user-1', 'user-2', 'ümlaut', '🚀 rocket', '', 'x'.repeat(200), 'a:b:c']
    for (let index = 0; index < 300; index++) keys.push(`k${index * 7919}`)
    for (const key of keys)
      for (const kind of ['user', 'org'])
        expect(bucketOf('new-checkout', kind, key)).toBe(referenceBucket('new-checkout', kind, key))
  })

  it('gives the same buckets with the kind packed into the prefix (the evaluator hot path)', () => {
    const prefix = bucketPrefix('new-checkout:user:')
    for (const key of ['u', 'ümlaut-🚀', 'y'.repeat(43), 'y'.repeat(44), 'z'.repeat(130)])
      expect(bucketForKey(prefix, key)).toBe(referenceBucket('new-checkout', 'user', key))
  })

  it('serves the first entry whose cumulative weight exceeds the bucket (< not ≤)', () => {
    const key = 'boundary-user'
    const bucket = referenceBucket('split', 'user', key)
    const serve = (firstWeight: number) => {
      const flag = storedFlag('split', {
        fallthrough: [
          { variation: 'on', weight: firstWeight },
          { variation: 'off', weight: 100_000 - firstWeight },
        ],
      })
      return evaluateFlag(snapshotOf([flag]), 'split', { key }).variation
    }
    expect(serve(bucket)).toBe('off') // cumulative == bucket: not greater, next entry
    expect(serve(bucket + 1)).toBe('on') // cumulative == bucket + 1 > bucket
  })

  it('treats a non-string kind as its string form and keeps working afterwards', () => {
    const flag = storedFlag('split', {
      fallthrough: [
        { variation: 'on', weight: 50_000 },
        { variation: 'off', weight: 50_000 },
      ],
    })
    const snapshot = snapshotOf([flag])
    const result = evaluateFlag(snapshot, 'split', { key: 'u', kind: 7 as never })
    const expected = referenceBucket('split', '7', 'u') < 50_000 ? 'on' : 'off'
    expect(result.variation).toBe(expected)
    expect(bucketOf('split', 'user', 'u')).toBe(referenceBucket('split', 'user', 'u'))
  })

  it('skips zero-weight entries and uses the context kind', () => {
    const flag = storedFlag('split', {
      fallthrough: [
        { variation: 'on', weight: 0 },
        { variation: 'off', weight: 100_000 },
      ],
    })
    expect(evaluateFlag(snapshotOf([flag]), 'split', { key: 'u', kind: 'org' }).variation).toBe(
      'off',
    )
  })

  it('serves rule rollouts by bucket and is stable across calls and compilations', () => {
    const key = 'someone'
    const bucket = referenceBucket('ruled', 'org', key)
    const flag = storedFlag('ruled', {
      fallthrough: 'off',
      rules: [
        rule('split-rule', {
          rollout: [
            { variation: 'off', weight: bucket },
            { variation: 'on', weight: 100_000 - bucket },
          ],
        }),
      ],
    })
    for (let round = 0; round < 3; round++)
      expect(evaluateFlag(snapshotOf([flag]), 'ruled', { key, kind: 'org' })).toMatchObject({
        variation: 'on',
        reason: 'RULE_MATCH',
        rule_id: 'split-rule',
      })
  })
})

describe('segment membership', () => {
  const segment = storedSegment('s', {
    included: ['both', 'in'],
    excluded: ['both', 'out'],
    rules: [
      {
        id: 'r',
        description: '',
        clauses: [{ attribute: 'country', operator: 'is', values: ['de'] }],
      },
    ],
  })
  const compiled = compileSegment(segment)
  const snapshot = snapshotOf([], [segment])

  it.each([
    ['excluded wins over included', { key: 'both' }, false],
    ['excluded wins over a matching rule', { key: 'out', country: 'de' }, false],
    ['included wins without rules', { key: 'in' }, true],
    ['a matching rule includes', { key: 'other', country: 'de' }, true],
    ['otherwise not a member', { key: 'other', country: 'fr' }, false],
  ])('%s', (_, context, expected) => {
    expect(isSegmentMember(snapshot, compiled, context)).toBe(expected)
  })
})
