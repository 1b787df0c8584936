/**
 * Regular expressions of `matches` / `not_matches` clauses are screened for catastrophic
 * backtracking: the known evil patterns are rejected when saved (400 with the clause value's
 * field), long patterns are rejected, long values never match, and a pattern that reaches the
 * evaluator unscreened (written straight to the store) never runs on user input.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { FlagService, memoryFlagStore } from '../../src/flags/index.js'
import {
  MAX_MATCHED_LENGTH,
  MAX_PATTERN_LENGTH,
  screenPattern,
} from '../../src/flags/pattern-screen.js'
import { authedAdmin, closeAdmins } from '../admin/helpers.js'
import { booleanFlag, storedFlag } from './helpers.js'

afterEach(closeAdmins)

const EVIL = [
  '^(a+)+$',
  '(a|a)*$',
  '(a|aa)+$',
  '(.*a){12}',
  '^(([a-z])+.)+[A-Z]([a-z])+$',
  '(\\w+\\s?)+$',
  'a.*b.*c.*d',
]

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

describe('saving a flag or segment', () => {
  it.each(EVIL)('rejects %s with the value field and stores nothing', async (pattern) => {
    const store = memoryFlagStore()
    const service = new FlagService({ store })
    await service.start()
    await expect(service.saveFlag(matching(pattern, 'not_matches'))).rejects.toMatchObject({
      code: 'VALIDATION_ERROR',
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

  it('answers 400 over REST and keeps the previous flag', async () => {
    const flags = new FlagService()
    await flags.start()
    const { call } = await authedAdmin({ flags })
    expect((await call('PUT', '/flags/f', matching('^ok$'))).statusCode).toBe(201)
    const answer = await call('PUT', '/flags/f', matching('^(a+)+$'))
    expect(answer.statusCode).toBe(400)
    expect(answer.json().error).toMatchObject({
      code: 'VALIDATION_ERROR',
      details: [{ field: '/rules/0/clauses/1/values/1' }],
    })
    const patched = await call('PATCH', '/flags/f', {
      rules: [
        {
          clauses: [{ attribute: 'name', operator: 'matches', values: ['(a|aa)+$'] }],
          variation: 'on',
        },
      ],
    })
    expect(patched.statusCode).toBe(400)
    const kept = (await call('GET', '/flags/f')).json()
    expect(kept.rules[0].clauses[1].values).toEqual(['^ok$', '^ok$'])
  })

  it('rejects a pattern longer than the cap and accepts ordinary ones', async () => {
    const service = new FlagService()
    await service.start()
    await expect(
      service.saveFlag(matching('a'.repeat(MAX_PATTERN_LENGTH + 1))),
    ).rejects.toMatchObject({ code: 'VALIDATION_ERROR' })
    for (const pattern of ['^[a-z0-9._%+-]+@corp\\.com$', 'foo.*bar', '^user-\\d+$', '(a)\\1'])
      expect(await screenPattern(pattern)).toBeNull()
    await service.saveFlag(matching('^b+$'))
    const context = (name: string) => ({ key: 'u', email: 'x', attributes: { name } })
    expect(service.evaluate('f', context('bbb')).value).toBe(true)
    expect(service.evaluate('f', context('b'.repeat(MAX_MATCHED_LENGTH))).value).toBe(true)
    expect(service.evaluate('f', context('b'.repeat(MAX_MATCHED_LENGTH + 1))).value).toBe(false)
  })
})

describe('evaluating a pattern that was never screened here', () => {
  it('never runs it on user input; through the evaluate endpoint too', async () => {
    const store = memoryFlagStore()
    const evil = storedFlag('legacy', {
      fallthrough: 'off',
      rules: [
        {
          id: 'r1',
          description: '',
          clauses: [{ attribute: 'name', operator: 'matches', values: ['^(a+)+$'], negate: false }],
          variation: 'on',
          rollout: null,
          track_events: false,
        },
      ],
    })
    await store.putFlag(evil) // as if written by an older version, bypassing the save path
    const flags = new FlagService({ store })
    await flags.start()
    const { call } = await authedAdmin({ flags })
    const attack = { context: { key: 'u', name: `${'a'.repeat(40)}!` } }
    for (let i = 0; i < 3; i++) {
      const answer = await call('POST', '/flags/legacy/evaluate', attack)
      expect(answer.json()).toMatchObject({ value: false, reason: 'FALLTHROUGH' })
    }
    expect(await screenPattern('^(a+)+$')).not.toBeNull()
    const ordinary = await call('POST', '/flags/legacy/evaluate', {
      context: { key: 'u', name: 'aaa' },
    })
    expect(ordinary.json().value).toBe(false)
  })
})
