import { describe, expect, it } from 'vitest'
import { FlagService, type FlagStore } from '../../src/flags/index.js'
import { booleanFlag, setup } from './helpers.js'

async function expectRejected(
  promise: Promise<unknown>,
  code: string,
  service: FlagService,
  store: FlagStore,
  flagCount: number,
) {
  await expect(promise).rejects.toMatchObject({ code })
  expect(await service.listFlags()).toHaveLength(flagCount)
  expect(await store.listFlags()).toHaveLength(flagCount)
}

describe('FlagService writes', () => {
  it('creates then updates with audit actions by prior existence', async () => {
    const { service, operations } = setup()
    await service.start()
    const created = await service.saveFlag(booleanFlag('f'), { actor: 'alice', platform: 'cli' })
    expect(created).toMatchObject({
      key: 'f',
      enabled: true,
      description: '',
      status: 'ACTIVE',
      temporary: true,
      maintainer: null,
      created_by: 'alice',
      created_at: '2026-11-21T12:00:00.000+00:00',
    })
    await service.saveFlag(booleanFlag('f', { description: 'changed' }), { actor: 'bob' })
    await service.saveFlag(booleanFlag('f'), { audit: false })
    await service.saveFlag(booleanFlag('f'), { action: 'flag_imported' })
    expect(operations.map((operation) => operation.action)).toEqual([
      'flag_created',
      'flag_updated',
      'flag_imported',
    ])
    expect(operations[0]).toEqual({
      action: 'flag_created',
      route: '[Flag f]',
      service: null,
      actor: 'alice',
      platform: 'cli',
      reason: '',
      previous_status: null,
      new_status: 'enabled',
    })
    expect((await service.getFlag('f'))?.created_by).toBe('alice')
  })

  it('generates UUID rule ids and keeps given ones', async () => {
    const { service } = setup()
    const flag = await service.saveFlag(
      booleanFlag('f', {
        rules: [
          { clauses: [], variation: 'on' },
          { id: 'mine', clauses: [], variation: 'off' },
        ],
      }),
    )
    expect(flag.rules[0]?.id).toMatch(/^[0-9a-f-]{36}$/)
    expect(flag.rules[1]?.id).toBe('mine')
  })

  it.each([
    ['one variation', booleanFlag('bad', { variations: [{ name: 'on', value: true }] })],
    [
      'a value of the wrong type',
      booleanFlag('bad', {
        variations: [
          { name: 'on', value: 'yes' },
          { name: 'off', value: false },
        ],
      }),
    ],
    ['an unknown off_variation', booleanFlag('bad', { off_variation: 'nope' })],
    ['an unknown fallthrough', booleanFlag('bad', { fallthrough: 'nope' })],
    [
      'weights not summing to 100000',
      booleanFlag('bad', {
        fallthrough: [
          { variation: 'on', weight: 50_000 },
          { variation: 'off', weight: 40_000 },
        ],
      }),
    ],
    [
      'a rollout naming an unknown variation',
      booleanFlag('bad', { fallthrough: [{ variation: 'x', weight: 100_000 }] }),
    ],
    [
      'a rule with variation and rollout',
      booleanFlag('bad', {
        rules: [{ clauses: [], variation: 'on', rollout: [{ variation: 'on', weight: 100_000 }] }],
      }),
    ],
    ['a rule with neither', booleanFlag('bad', { rules: [{ clauses: [] }] })],
    [
      'a bad regex',
      booleanFlag('bad', {
        rules: [
          { clauses: [{ attribute: 'a', operator: 'matches', values: ['['] }], variation: 'on' },
        ],
      }),
    ],
    [
      'a bad semver',
      booleanFlag('bad', {
        rules: [
          {
            clauses: [{ attribute: 'a', operator: 'semver_lt', values: ['v-one'] }],
            variation: 'on',
          },
        ],
      }),
    ],
    [
      'an unknown operator',
      booleanFlag('bad', {
        rules: [
          {
            clauses: [{ attribute: 'a', operator: 'like' as never, values: ['x'] }],
            variation: 'on',
          },
        ],
      }),
    ],
    ['targets naming an unknown variation', booleanFlag('bad', { targets: { maybe: ['u1'] } })],
    ['a key targeted twice', booleanFlag('bad', { targets: { on: ['u1'], off: ['u1'] } })],
    [
      'an unknown prerequisite',
      booleanFlag('bad', { prerequisites: [{ flag_key: 'ghost', variation: 'on' }] }),
    ],
    [
      'an unknown segment',
      booleanFlag('bad', {
        rules: [
          {
            clauses: [{ attribute: 'key', operator: 'in_segment', values: ['ghost'] }],
            variation: 'on',
          },
        ],
      }),
    ],
    ['a bad key', booleanFlag('bad key/with slash')],
    ['an unknown field', { ...booleanFlag('bad'), colour: 'red' }],
    [
      'a bad scheduled time',
      booleanFlag('bad', { scheduled_changes: [{ at: 'tomorrow', action: 'enable' }] }),
    ],
    [
      'an update without patch',
      booleanFlag('bad', { scheduled_changes: [{ at: '2027-01-01T00:00:00Z', action: 'update' }] }),
    ],
    [
      'a patch changing the type',
      booleanFlag('bad', {
        scheduled_changes: [
          { at: '2027-01-01T00:00:00Z', action: 'update', patch: { type: 'string' } },
        ],
      }),
    ],
    ['not an object', 'flag'],
    [
      'a json value that JSON cannot carry',
      {
        ...booleanFlag('bad'),
        type: 'json',
        variations: [
          { name: 'on', value: { at: new Date() } },
          { name: 'off', value: {} },
        ],
      },
    ],
  ])('rejects %s and stores nothing', async (_, input) => {
    const { service, store, operations } = setup()
    await service.saveFlag(booleanFlag('ok'))
    await expectRejected(service.saveFlag(input), 'VALIDATION_ERROR', service, store, 1)
    expect(operations).toHaveLength(1)
  })

  it('names a direct prerequisite cycle', async () => {
    const { service, store } = setup()
    await service.saveFlag(booleanFlag('a'))
    await service.saveFlag(
      booleanFlag('b', { prerequisites: [{ flag_key: 'a', variation: 'on' }] }),
    )
    const attempt = service.saveFlag(
      booleanFlag('a', { prerequisites: [{ flag_key: 'b', variation: 'on' }] }),
    )
    await expect(attempt).rejects.toMatchObject({
      code: 'FLAG_PREREQUISITE_CYCLE',
      statusCode: 409,
      cycle: ['a', 'b', 'a'],
    })
    expect((await store.listFlags()).find((flag) => flag.key === 'a')?.prerequisites).toEqual([])
  })

  it('names an indirect prerequisite cycle', async () => {
    const { service } = setup()
    await service.saveFlag(booleanFlag('a'))
    await service.saveFlag(
      booleanFlag('b', { prerequisites: [{ flag_key: 'a', variation: 'on' }] }),
    )
    await service.saveFlag(
      booleanFlag('c', { prerequisites: [{ flag_key: 'b', variation: 'on' }] }),
    )
    const error: unknown = await service
      .saveFlag(booleanFlag('a', { prerequisites: [{ flag_key: 'c', variation: 'on' }] }))
      .catch((caught: unknown) => caught)
    expect(error).toMatchObject({ code: 'FLAG_PREREQUISITE_CYCLE', cycle: ['a', 'c', 'b', 'a'] })
    expect((error as { toJSON(): unknown }).toJSON()).toEqual({
      error: {
        code: 'FLAG_PREREQUISITE_CYCLE',
        message: 'Circular flag prerequisites: a -> c -> b -> a.',
        cycle: ['a', 'c', 'b', 'a'],
      },
    })
  })

  it('names a self prerequisite as a cycle of one (new flag, replace, patch)', async () => {
    const { service, store, operations } = setup()
    const self = { prerequisites: [{ flag_key: 'a', variation: 'on' }] }
    const cycle = { code: 'FLAG_PREREQUISITE_CYCLE', statusCode: 409, cycle: ['a'] }
    await expect(service.saveFlag(booleanFlag('a', self))).rejects.toMatchObject(cycle)
    expect(await store.listFlags()).toEqual([])
    await service.saveFlag(booleanFlag('a'))
    await expect(service.saveFlag(booleanFlag('a', self))).rejects.toMatchObject(cycle)
    await expect(service.patchFlag('a', self)).rejects.toMatchObject(cycle)
    await expect(
      service.createFlag(
        booleanFlag('b', { prerequisites: [{ flag_key: 'b', variation: 'nope' }] }),
      ),
    ).rejects.toMatchObject({ ...cycle, cycle: ['b'] })
    expect((await store.listFlags()).map((flag) => flag.prerequisites)).toEqual([[]])
    expect(operations).toHaveLength(1)
  })

  it('accepts a prerequisite chain of depth 10 and rejects depth 11 from either end', async () => {
    const { service, store } = setup()
    await service.saveFlag(booleanFlag('f10'))
    for (let index = 9; index >= 0; index--)
      await service.saveFlag(
        booleanFlag(`f${index}`, {
          prerequisites: [{ flag_key: `f${index + 1}`, variation: 'on' }],
        }),
      )
    expect(service.evaluate('f0', { key: 'u' }).reason).toBe('FALLTHROUGH')
    await expectRejected(
      service.saveFlag(
        booleanFlag('top', { prerequisites: [{ flag_key: 'f0', variation: 'on' }] }),
      ),
      'VALIDATION_ERROR',
      service,
      store,
      11,
    )
    await service.saveFlag(booleanFlag('bottom'))
    await expect(
      service.saveFlag(
        booleanFlag('f10', { prerequisites: [{ flag_key: 'bottom', variation: 'on' }] }),
      ),
    ).rejects.toThrow(/depth 11/)
  })

  it('patches with a JSON merge patch, validated after merging', async () => {
    const { service, operations } = setup()
    await service.saveFlag(booleanFlag('f', { description: 'x', tags: ['a'] }))
    const patched = await service.patchFlag('f', {
      description: null,
      tags: ['b'],
      fallthrough: 'off',
    })
    expect(patched).toMatchObject({ description: '', tags: ['b'], fallthrough: 'off' })
    await expect(service.patchFlag('f', { type: 'string' })).rejects.toMatchObject({
      code: 'VALIDATION_ERROR',
    })
    await expect(service.patchFlag('f', { key: 'g' })).rejects.toMatchObject({
      code: 'VALIDATION_ERROR',
    })
    await expect(service.patchFlag('f', { fallthrough: 'nope' })).rejects.toMatchObject({
      code: 'VALIDATION_ERROR',
    })
    await expect(service.patchFlag('ghost', {})).rejects.toMatchObject({
      code: 'FLAG_NOT_FOUND',
      statusCode: 404,
    })
    expect((await service.getFlag('f'))?.fallthrough).toBe('off')
    expect(operations.map((operation) => operation.action)).toEqual([
      'flag_created',
      'flag_updated',
    ])
  })

  it('enables and disables with their audit actions and statuses', async () => {
    const { service, operations } = setup()
    await service.saveFlag(booleanFlag('f'))
    await service.disableFlag('f', { actor: 'ops', reason: 'incident' })
    expect(service.evaluate('f', { key: 'u' }).reason).toBe('OFF')
    await service.enableFlag('f')
    expect(service.evaluate('f', { key: 'u' }).reason).toBe('FALLTHROUGH')
    expect(operations.slice(1)).toMatchObject([
      {
        action: 'flag_disabled',
        previous_status: 'enabled',
        new_status: 'disabled',
        actor: 'ops',
        reason: 'incident',
      },
      { action: 'flag_enabled', previous_status: 'disabled', new_status: 'enabled' },
    ])
    await expect(service.enableFlag('ghost')).rejects.toMatchObject({ code: 'FLAG_NOT_FOUND' })
  })

  it('creates only when absent with createFlag', async () => {
    const { service } = setup()
    await service.createFlag(booleanFlag('f'))
    await expect(service.createFlag(booleanFlag('f'))).rejects.toMatchObject({
      code: 'FLAG_EXISTS',
      statusCode: 409,
    })
  })

  it('deletes flags, refusing while another flag requires them', async () => {
    const { service, operations } = setup()
    await service.saveFlag(booleanFlag('a'))
    await service.saveFlag(
      booleanFlag('b', { prerequisites: [{ flag_key: 'a', variation: 'on' }] }),
    )
    await expect(service.deleteFlag('a')).rejects.toMatchObject({
      code: 'FLAG_IN_USE',
      details: { flags: ['b'] },
    })
    await service.deleteFlag('b')
    await service.deleteFlag('a', { actor: 'carol' })
    expect(await service.listFlags()).toEqual([])
    expect(service.evaluate('a', { key: 'u' }, true)).toMatchObject({
      value: true,
      reason: 'DEFAULT',
    })
    expect(operations.at(-1)).toMatchObject({
      action: 'flag_deleted',
      actor: 'carol',
      previous_status: 'enabled',
      new_status: null,
    })
    await expect(service.deleteFlag('a')).rejects.toMatchObject({ code: 'FLAG_NOT_FOUND' })
  })
})

describe('FlagService segments', () => {
  it('accepts included and excluded lists that overlap: excluded wins', async () => {
    const { service, store } = setup()
    const saved = await service.saveSegment({
      key: 'beta',
      name: 'Beta',
      included: ['u1', 'u2'],
      excluded: ['u2'],
    })
    expect(saved).toMatchObject({ included: ['u1', 'u2'], excluded: ['u2'] })
    expect(await store.listSegments()).toHaveLength(1)
    await service.saveFlag(
      booleanFlag('f', {
        fallthrough: 'off',
        rules: [
          {
            clauses: [{ attribute: 'key', operator: 'in_segment', values: ['beta'] }],
            variation: 'on',
          },
        ],
      }),
    )
    expect(service.evaluate('f', { key: 'u1' }).value).toBe(true)
    expect(service.evaluate('f', { key: 'u2' }).value).toBe(false)
  })

  it('saves, uses, refuses to delete while used, then deletes', async () => {
    const { service, operations } = setup()
    await service.saveSegment({ key: 'beta', name: 'Beta', included: ['u1'] })
    await service.saveSegment({ key: 'beta', name: 'Beta testers', included: ['u1', 'u2'] })
    await service.saveFlag(
      booleanFlag('f', {
        fallthrough: 'off',
        rules: [
          {
            clauses: [{ attribute: 'key', operator: 'in_segment', values: ['beta'] }],
            variation: 'on',
          },
        ],
      }),
    )
    expect(service.evaluate('f', { key: 'u2' }).reason).toBe('RULE_MATCH')
    await expect(service.deleteSegment('beta')).rejects.toMatchObject({
      code: 'SEGMENT_IN_USE',
      details: { flags: ['f'] },
    })
    await service.deleteFlag('f')
    await service.deleteSegment('beta')
    await expect(service.deleteSegment('beta')).rejects.toMatchObject({ code: 'SEGMENT_NOT_FOUND' })
    expect(operations.map((operation) => operation.action)).toEqual([
      'segment_created',
      'segment_updated',
      'flag_created',
      'flag_deleted',
      'segment_deleted',
    ])
    expect(operations[0]?.route).toBe('[Segment beta]')
  })

  it.each([
    [
      'nested segment clauses',
      {
        key: 's',
        name: 'S',
        rules: [{ clauses: [{ attribute: 'key', operator: 'in_segment', values: ['x'] }] }],
      },
    ],
    ['a rule without clauses', { key: 's', name: 'S', rules: [{ clauses: [] }] }],
    ['a missing name', { key: 's' }],
  ])('rejects %s and stores nothing', async (_, input) => {
    const { service, store } = setup()
    await expect(service.saveSegment(input)).rejects.toMatchObject({ code: 'VALIDATION_ERROR' })
    expect(await store.listSegments()).toEqual([])
    expect(await service.listSegments()).toEqual([])
  })
})

describe('flag metadata', () => {
  const tooMany = Object.fromEntries(Array.from({ length: 33 }, (_, index) => [`k${index}`, index]))
  const atLimit = Object.fromEntries(
    Array.from({ length: 32 }, (_, index) => [`${'k'.repeat(60)}${index}`, 'v'.repeat(256)]),
  )

  it('keeps entries at every bound and audits the change like any other', async () => {
    const { service, operations } = setup()
    await service.saveFlag(booleanFlag('f'))
    expect((await service.getFlag('f'))?.metadata).toEqual({})
    const saved = await service.saveFlag(booleanFlag('f', { metadata: atLimit }), {
      actor: 'alice',
    })
    expect(saved.metadata).toEqual(atLimit)
    expect(operations.map((operation) => [operation.action, operation.actor])).toEqual([
      ['flag_created', 'system'],
      ['flag_updated', 'alice'],
    ])
  })

  it.each([
    ['33 entries', tooMany, '/metadata'],
    ['a key of 65 characters', { ['k'.repeat(65)]: 1 }, `/metadata/${'k'.repeat(65)}`],
    ['an empty key', { '': 1 }, '/metadata/'],
    ['a reserved key', { 'switchyard.reason': 'x' }, '/metadata/switchyard.reason'],
    ['a string of 257 characters', { long: 'v'.repeat(257) }, '/metadata/long'],
    ['an object value', { nested: { a: 1 } }, '/metadata/nested'],
    ['a list value', { list: [1] }, '/metadata/list'],
    ['a null value', { gone: null }, '/metadata/gone'],
    ['a number that is not finite', { ratio: Number.NaN }, '/metadata/ratio'],
    ['not an object', ['a'], '/metadata'],
  ])('refuses %s with its path and changes nothing', async (_, metadata, field) => {
    const { service, store, operations } = setup()
    await service.saveFlag(booleanFlag('f', { metadata: { kept: true } }))
    const attempt = service.saveFlag(booleanFlag('f', { metadata } as never))
    await expect(attempt).rejects.toMatchObject({
      code: 'VALIDATION_ERROR',
      details: {
        details: expect.arrayContaining([expect.objectContaining({ field })]) as unknown,
      },
    })
    expect((await service.getFlag('f'))?.metadata).toEqual({ kept: true })
    expect((await store.listFlags())[0]?.metadata).toEqual({ kept: true })
    expect(operations).toHaveLength(1)
  })

  it('a merge patch adds, replaces and removes single entries', async () => {
    const { service } = setup()
    await service.saveFlag(booleanFlag('f', { metadata: { a: 1, b: 'two' } }))
    const patched = await service.patchFlag('f', { metadata: { a: null, c: false } })
    expect(patched.metadata).toStrictEqual({ b: 'two', c: false })
    await expect(
      service.patchFlag('f', { metadata: { 'switchyard.rule_id': 'x' } }),
    ).rejects.toMatchObject({ code: 'VALIDATION_ERROR' })
    expect((await service.getFlag('f'))?.metadata).toStrictEqual({ b: 'two', c: false })
  })

  it('keeps a key named __proto__ as an ordinary entry', async () => {
    const { service, store } = setup()
    const metadata = JSON.parse('{"__proto__": "not a prototype", "owner": "a"}') as Record<
      string,
      string
    >
    const saved = await service.saveFlag(booleanFlag('f', { metadata }))
    expect(Object.keys(saved.metadata)).toEqual(['__proto__', 'owner'])
    expect(Object.getPrototypeOf(saved.metadata)).toBe(Object.prototype)
    expect(JSON.stringify((await store.listFlags())[0]?.metadata)).toBe(
      '{"__proto__":"not a prototype","owner":"a"}',
    )
    expect(Object.keys(service.evaluate('f', { key: 'u' }).metadata)).toEqual([
      '__proto__',
      'owner',
    ])
  })

  it('is returned by evaluate() and the synchronous client', async () => {
    const { service } = setup()
    await service.saveFlag(booleanFlag('f', { metadata: { owner: 'team-a' } }))
    expect(service.evaluate('f', { key: 'u' }).metadata).toEqual({ owner: 'team-a' })
    expect(service.sync.getFlagMetadata('f')).toEqual({ owner: 'team-a' })
    expect(service.sync.getFlagMetadata('missing')).toEqual({})
  })
})
