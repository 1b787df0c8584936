/**
 * Regular expressions of `matches` / `not_matches` clauses run on the linear-time engine
 * (re2js): patterns that backtracking made dangerous save and evaluate at once; constructs RE2
 * cannot run are refused when saved, naming the construct, and change nothing; patterns keep
 * the meaning they had on JavaScript's RegExp (`u` flag); a refused pattern written straight to
 * the store loads, never matches and is reported once; the length caps hold.
 */
import fc from 'fast-check'
import { afterEach, describe, expect, it } from 'vitest'
import { FlagService, memoryFlagStore } from '../../src/flags/index.js'
import {
  compilePattern,
  MAX_MATCHED_LENGTH,
  MAX_PATTERN_LENGTH,
  PATTERN_CACHE_LIMIT,
} from '../../src/flags/linear-regex.js'
import { authedAdmin, closeAdmins } from '../admin/helpers.js'
import { booleanFlag, storedFlag, storedSegment } from './helpers.js'

afterEach(closeAdmins)

const matching = (pattern: string, operator: 'matches' | 'not_matches' = 'matches') =>
  booleanFlag('f', {
    fallthrough: 'off',
    rules: [
      {
        clauses: [
          { attribute: 'email', operator: 'is', values: ['x'] },
          { attribute: 'name', operator, values: ['^ok$', pattern] },
        ],
        variation: 'on',
      },
    ],
  })

const context = (name: string) => ({ key: 'u', email: 'x', attributes: { name } })

async function startedService() {
  const store = memoryFlagStore()
  const service = new FlagService({ store })
  await service.start()
  return { store, service }
}

describe('patterns that backtracking made dangerous', () => {
  it.each([
    [
      '^([a-z0-9-]+\\.)+example\\.com$',
      ['api.eu.example.com', 'a.example.com'],
      ['example.com', 'a.example.org', `${'a.'.repeat(200)}example.co`],
    ],
    ['(\\d+,)*\\d+', ['1,2,3', 'x7'], ['', 'abc', ',,,']],
    ['^(a+)+$', ['a', 'aaaa'], [`${'a'.repeat(60)}!`, 'b']],
    ['(a|aa)+$', ['xa', 'aaa'], [`${'a'.repeat(60)}!`]],
  ])('%s saves, as a flag and as a segment, and matches', async (pattern, hits, misses) => {
    const { store, service } = await startedService()
    await service.saveFlag(matching(pattern))
    await service.saveSegment({
      key: 's',
      name: 's',
      rules: [{ clauses: [{ attribute: 'name', operator: 'matches', values: [pattern] }] }],
    })
    expect((await store.listFlags()).map((flag) => flag.key)).toEqual(['f'])
    expect((await store.listSegments()).map((segment) => segment.key)).toEqual(['s'])
    for (const name of hits) expect(service.evaluate('f', context(name)).value).toBe(true)
    // The misses include the inputs that took a backtracking engine minutes.
    for (const name of misses) expect(service.evaluate('f', context(name)).value).toBe(false)
  })
})

describe('constructs the linear-time engine cannot run', () => {
  it.each([
    ['(a)\\1', 'uses a backreference (\\1), which the linear-time engine cannot run'],
    ['(?<n>a)\\k<n>', 'uses a named backreference'],
    ['(?=x)', 'uses a lookahead (?=…), which the linear-time engine cannot run'],
    ['a(?!x)', 'uses a negative lookahead (?!…)'],
    ['(?<=x)a', 'uses a lookbehind (?<=…)'],
    ['(?<!x)a', 'uses a negative lookbehind (?<!…)'],
    ['a++', 'uses a possessive quantifier (++)'],
    ['(?>ab)', 'uses an atomic group (?>…)'],
    ['a{1001}', 'repeats more than 1000 times'],
    ['\\p{Letter}', 'names a Unicode property RE2 does not know (\\p{Letter})'],
    ['(unclosed', 'is not valid RE2 syntax: missing closing )'],
  ])('%s is refused naming the construct and stores nothing', async (pattern, named) => {
    const { store, service } = await startedService()
    const saved = service.saveFlag(matching(pattern, 'not_matches'))
    await expect(saved).rejects.toMatchObject({
      code: 'VALIDATION_ERROR',
      message: expect.stringContaining(`the regular expression ${named}`) as unknown,
      details: { details: [{ field: '/rules/0/clauses/1/values/1' }] },
    })
    await expect(
      service.saveSegment({
        key: 's',
        name: 's',
        rules: [{ clauses: [{ attribute: 'name', operator: 'matches', values: [pattern] }] }],
      }),
    ).rejects.toMatchObject({ details: { details: [{ field: '/rules/0/clauses/0/values/0' }] } })
    expect(await store.listFlags()).toEqual([])
    expect(await store.listSegments()).toEqual([])
  })

  it('answers 400 over REST, naming the construct, and keeps the previous flag', async () => {
    const flags = new FlagService()
    await flags.start()
    const { call } = await authedAdmin({ flags })
    expect((await call('PUT', '/flags/f', matching('^ok$'))).statusCode).toBe(201)
    const answer = await call('PUT', '/flags/f', matching('(a)\\1'))
    expect(answer.statusCode).toBe(400)
    expect(answer.json().error).toMatchObject({
      code: 'VALIDATION_ERROR',
      details: [{ field: '/rules/0/clauses/1/values/1' }],
    })
    expect(answer.json().error.details[0].message).toContain('backreference (\\1)')
    const patched = await call('PATCH', '/flags/f', {
      rules: [
        {
          clauses: [{ attribute: 'name', operator: 'matches', values: ['(?=x)'] }],
          variation: 'on',
        },
      ],
    })
    expect(patched.statusCode).toBe(400)
    expect(patched.json().error.details[0]).toMatchObject({
      field: '/rules/0/clauses/0/values/0',
      message: expect.stringContaining('lookahead (?=…)') as unknown,
    })
    const kept = (await call('GET', '/flags/f')).json()
    expect(kept.rules[0].clauses[1].values).toEqual(['^ok$', '^ok$'])
  })
})

describe('the bounds', () => {
  it('refuses a pattern longer than the cap; a value longer than its cap never matches', async () => {
    const { service } = await startedService()
    await expect(
      service.saveFlag(matching('a'.repeat(MAX_PATTERN_LENGTH + 1))),
    ).rejects.toMatchObject({ code: 'VALIDATION_ERROR' })
    await service.saveFlag(matching('a'.repeat(MAX_PATTERN_LENGTH)))
    await service.saveFlag(matching('^b+$'))
    expect(service.evaluate('f', context('bbb')).value).toBe(true)
    expect(service.evaluate('f', context('b'.repeat(MAX_MATCHED_LENGTH))).value).toBe(true)
    expect(service.evaluate('f', context('b'.repeat(MAX_MATCHED_LENGTH + 1))).value).toBe(false)
  })

  it('keeps compiled patterns in a bounded cache that forgets the oldest first', () => {
    const first = compilePattern('^cache-probe$')
    expect(compilePattern('^cache-probe$')).toBe(first)
    for (let index = 0; index < PATTERN_CACHE_LIMIT; index++) compilePattern(`^filler-${index}$`)
    const again = compilePattern('^cache-probe$')
    expect(again).not.toBe(first)
    expect(again.regex?.test('cache-probe')).toBe(true)
  })
})

/** Patterns valid for both engines whose meaning could differ, and values that tell them apart. */
const SAME_MEANING = [
  'a.b',
  '^.$',
  '\\s',
  '^\\S+$',
  '[\\s,]',
  '[^\\s]',
  '[\\S]',
  '[^\\S]x',
  '\\u0041',
  '\\u{1F600}',
  '^\\uD83D\\uDE00$',
  '\\cA',
  '^a$',
  '\\bword\\b',
  '\\d\\w',
  '^[a-z0-9._%+-]+@corp\\.com$',
  '\\p{Lu}',
  '\\P{L}',
  '(?<name>x)y',
  '\\x41',
  '[.]',
  '\\.',
  '^$',
]
const VALUES = [
  'a.b',
  'a\nb',
  'a\rb',
  'a\u2028b',
  'a\u2029b',
  'a b',
  'a\u00a0b',
  'a\u3000b',
  '\ufeff',
  '\u000b',
  'A',
  '\u{1F600}',
  '\u0001',
  'x',
  'xy',
  'a word here',
  'awordb',
  '1_',
  'é1',
  'Élan',
  'a@corp.com',
  '',
  '.',
  'ab',
]

describe('patterns keep the meaning they had on JavaScript RegExp', () => {
  it.each(SAME_MEANING)('%s', (pattern) => {
    const { regex, refusal } = compilePattern(pattern)
    expect(refusal).toBeNull()
    const javascript = new RegExp(pattern, 'u')
    for (const value of VALUES)
      expect([value, regex?.test(value)]).toEqual([value, javascript.test(value)])
  })

  it('agrees with RegExp on generated patterns and values', () => {
    const atom = fc.constantFrom(
      'a',
      'b',
      '.',
      '\\s',
      '\\S',
      '\\d',
      '\\w',
      '\\W',
      '[ab]',
      '[^a]',
      '[\\s.]',
      '[^\\S]',
      '\\u00a0',
      '\\n',
      '^',
      '$',
      '\\b',
    )
    const piece = fc
      .tuple(atom, fc.constantFrom('', '*', '+', '?', '{2}', '{1,3}', '*?'))
      .map(([a, q]) => (/^[$^]|\\b/.test(a) ? a : a + q))
    const pattern = fc
      .array(
        fc.oneof(
          piece,
          fc.array(piece, { minLength: 1, maxLength: 3 }).map((parts) => `(${parts.join('')})+`),
        ),
        { minLength: 1, maxLength: 5 },
      )
      .chain((parts) => fc.constantFrom(parts.join(''), parts.join('|')))
    const value = fc
      .array(
        fc.constantFrom('a', 'b', ' ', '\n', '\r', '\u00a0', '\u2028', '1', '_', 'é', '\u{1F600}'),
        { maxLength: 8 },
      )
      .map((chars) => chars.join(''))
    fc.assert(
      fc.property(pattern, fc.array(value, { minLength: 1, maxLength: 5 }), (source, values) => {
        const { regex } = compilePattern(source)
        const javascript = new RegExp(source, 'u')
        return values.every((text) => regex?.test(text) === javascript.test(text))
      }),
      { numRuns: 300 },
    )
  })

  it('is case-sensitive unless the pattern opts in with (?i); (?s) makes . match newlines', () => {
    expect(compilePattern('abc').regex?.test('ABC')).toBe(false)
    expect(compilePattern('(?i)abc').regex?.test('xABCx')).toBe(true)
    const dot = compilePattern('(?s:.)b.').regex
    expect(dot?.test('\nbx')).toBe(true)
    expect(dot?.test('\nb\n')).toBe(false)
  })
})

describe('a refused pattern that reaches the store another way', () => {
  it("loads, never matches, lets the clause's other values match, and is reported once", async () => {
    const store = memoryFlagStore()
    const legacy = storedFlag('legacy', {
      fallthrough: 'off',
      rules: [
        {
          id: 'r1',
          description: '',
          clauses: [
            { attribute: 'name', operator: 'matches', values: ['(a)\\1', '^ok$'], negate: false },
          ],
          variation: 'on',
          rollout: null,
          track_events: false,
        },
      ],
    })
    await store.putFlag(legacy) // as if written by an older version, bypassing the save path
    await store.putSegment(
      storedSegment('legacy-segment', {
        rules: [
          {
            id: 's1',
            description: '',
            clauses: [
              { attribute: 'name', operator: 'matches', values: ['a(?=b)'], negate: false },
            ],
          },
        ],
      }),
    )
    const reports: string[] = []
    const flags = new FlagService({
      store,
      onError: (error, what) => reports.push(`${what}: ${error.message}`),
    })
    await flags.start()
    const { call } = await authedAdmin({ flags })
    const evaluate = async (name: string): Promise<unknown> =>
      (
        await call('POST', '/flags/legacy/evaluate', {
          context: { key: 'u', attributes: { name } },
        })
      ).json()
    expect(await evaluate('aa')).toMatchObject({ value: false, reason: 'FALLTHROUGH' })
    expect(await evaluate('ok')).toMatchObject({ value: true, reason: 'RULE_MATCH' })
    await flags.start() // a reload applies the same record again
    expect(await evaluate('aa')).toMatchObject({ value: false })
    expect(reports).toEqual([
      'applying segment legacy-segment: The regular expression at /rules/0/clauses/0/values/0 uses a lookahead (?=…), which the linear-time engine cannot run; it never matches.',
      'applying flag legacy: The regular expression at /rules/0/clauses/0/values/0 uses a backreference (\\1), which the linear-time engine cannot run; it never matches.',
    ])
  })
})
