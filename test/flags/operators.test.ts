import { describe, expect, it } from 'vitest'
import { OPERATORS, compileFlag, type Clause, type Operator } from '../../src/flags/index.js'
import { clauseMatches, ruleFlag, storedSegment } from './helpers.js'

/** [operator, clause values, attribute value, expected match without negate]. */
const cases: [Operator, unknown[], unknown, boolean][] = [
  ['is', ['pro'], 'pro', true],
  ['is', ['pro', 'team'], 'team', true],
  ['is', ['pro'], 'free', false],
  ['is', [3], '3', false],
  ['is_not', ['pro'], 'free', true],
  ['is_not', ['pro'], 'pro', false],
  ['contains', ['corp'], 'a@corp.com', true],
  ['contains', ['xyz', 'corp'], 'a@corp.com', true],
  ['contains', ['xyz'], 'a@corp.com', false],
  ['contains', ['1'], 1, false],
  ['not_contains', ['corp'], 'a@corp.com', false],
  ['not_contains', ['xyz'], 'a@corp.com', true],
  ['starts_with', ['a@'], 'a@corp.com', true],
  ['starts_with', ['b@'], 'a@corp.com', false],
  ['ends_with', ['.com'], 'a@corp.com', true],
  ['ends_with', ['.org'], 'a@corp.com', false],
  ['matches', ['^a@[a-z]+\\.com$'], 'a@corp.com', true],
  ['matches', ['^b'], 'a@corp.com', false],
  ['not_matches', ['^b'], 'a@corp.com', true],
  ['not_matches', ['^a'], 'a@corp.com', false],
  ['gt', [10], 11, true],
  ['gt', [10], 10, false],
  ['gt', [10, 5], 6, true],
  ['gt', [10], '11', false],
  ['gte', [10], 10, true],
  ['gte', [10], 9.5, false],
  ['lt', [10], 9, true],
  ['lt', [10], 10, false],
  ['lte', [10], 10, true],
  ['lte', [10], 11, false],
  ['before', ['2026-06-01T00:00:00Z'], '2026-05-31T23:59:59Z', true],
  ['before', ['2026-06-01T00:00:00Z'], '2026-06-01T00:00:00Z', false],
  ['before', ['2026-06-01'], new Date('2026-05-01T00:00:00Z'), true],
  ['after', ['2026-06-01T00:00:00Z'], '2026-06-01T00:00:01Z', true],
  ['after', ['2026-06-01T00:00:00Z'], '2026-01-01T00:00:00Z', false],
  ['after', ['2026-06-01T00:00:00Z'], 20260602, false],
  ['in', ['de', 'fr', 'nl'], 'fr', true],
  ['in', ['de', 'fr'], 'us', false],
  ['in', [1, 2], 2, true],
  ['not_in', ['de', 'fr'], 'us', true],
  ['not_in', ['de', 'fr'], 'de', false],
  ['semver_eq', ['1.4.0'], '1.4.0', true],
  ['semver_eq', ['1.4.0'], '1.4.1', false],
  ['semver_eq', ['1.4.0'], 'not-a-version', false],
  ['semver_lt', ['2.0.0'], '1.9.9', true],
  ['semver_lt', ['2.0.0'], '2.0.0', false],
  ['semver_lt', ['2.0.0'], '2.0.0-beta.1', true],
  ['semver_gt', ['2.0.0'], '2.0.1', true],
  ['semver_gt', ['2.0.0'], '1.0.0', false],
]

const negative = new Set<Operator>([
  'is_not',
  'not_contains',
  'not_matches',
  'not_in',
  'not_in_segment',
])

describe('clause operators', () => {
  it('covers all 21 operators', () => {
    const tested = new Set([...cases.map(([operator]) => operator), 'in_segment', 'not_in_segment'])
    expect([...tested].sort()).toEqual([...OPERATORS].sort())
    expect(OPERATORS).toHaveLength(21)
  })

  describe.each(cases)('%s %j against %j', (operator, values, value, expected) => {
    const clause = (negate: boolean): Clause => ({ attribute: 'plan', operator, values, negate })

    it(`matches: ${expected}`, () => {
      expect(clauseMatches(clause(false), { key: 'k', attributes: { plan: value } })).toBe(expected)
    })

    it(`with negate: ${!expected}`, () => {
      expect(clauseMatches(clause(true), { key: 'k', attributes: { plan: value } })).toBe(!expected)
    })

    it('missing attribute fails, except for negative operators', () => {
      const whenMissing = negative.has(operator)
      expect(clauseMatches(clause(false), { key: 'k' })).toBe(whenMissing)
      expect(clauseMatches(clause(false), { key: 'k', attributes: { plan: null } })).toBe(
        whenMissing,
      )
      expect(clauseMatches(clause(true), { key: 'k' })).toBe(!whenMissing)
    })
  })

  it('reads named context fields before attributes', () => {
    const clause: Clause = { attribute: 'country', operator: 'is', values: ['de'] }
    expect(clauseMatches(clause, { key: 'k', country: 'de', attributes: { country: 'fr' } })).toBe(
      true,
    )
    expect(clauseMatches(clause, { key: 'k', attributes: { country: 'de' } })).toBe(false)
    const kind: Clause = { attribute: 'kind', operator: 'is', values: ['user'] }
    expect(clauseMatches(kind, { key: 'k' })).toBe(true)
    const version: Clause = { attribute: 'app_version', operator: 'semver_gt', values: ['1.0.0'] }
    expect(clauseMatches(version, { key: 'k', app_version: '1.2.0' })).toBe(true)
  })

  it('tests each element of a list attribute', () => {
    const clause: Clause = { attribute: 'groups', operator: 'is', values: ['admin'] }
    expect(clauseMatches(clause, { key: 'k', attributes: { groups: ['dev', 'admin'] } })).toBe(true)
    expect(clauseMatches(clause, { key: 'k', attributes: { groups: ['dev'] } })).toBe(false)
    const not: Clause = { attribute: 'groups', operator: 'is_not', values: ['admin'] }
    expect(clauseMatches(not, { key: 'k', attributes: { groups: ['dev', 'admin'] } })).toBe(false)
  })

  describe('in_segment and not_in_segment', () => {
    const segments = [
      storedSegment('beta', { included: ['u1'] }),
      storedSegment('staff', {
        rules: [
          {
            id: 's1',
            description: '',
            clauses: [{ attribute: 'email', operator: 'ends_with', values: ['@corp.com'] }],
          },
        ],
      }),
    ]
    it.each([
      ['in_segment', ['beta'], { key: 'u1' }, true],
      ['in_segment', ['beta'], { key: 'u2' }, false],
      ['in_segment', ['beta', 'staff'], { key: 'u2', email: 'x@corp.com' }, true],
      ['in_segment', ['unknown'], { key: 'u1' }, false],
      ['not_in_segment', ['beta'], { key: 'u1' }, false],
      ['not_in_segment', ['beta'], { key: 'u2' }, true],
    ] as const)('%s %j for %j: %s', (operator, values, context, expected) => {
      const clause: Clause = { attribute: 'key', operator, values: [...values] }
      expect(clauseMatches(clause, context, segments)).toBe(expected)
      expect(clauseMatches({ ...clause, negate: true }, context, segments)).toBe(!expected)
    })
  })

  it.each([
    ['matches', [42]],
    ['semver_eq', ['1.x']],
    ['gt', ['ten']],
    ['before', ['yesterday']],
    ['contains', [1]],
    ['in', [{ nested: true }]],
    ['in_segment', [42]],
  ] as const)('rejects %s with values %j', (operator, values) => {
    expect(() => compileFlag(ruleFlag({ attribute: 'a', operator, values: [...values] }))).toThrow(
      expect.objectContaining({ code: 'VALIDATION_ERROR' }),
    )
  })
})
