import {
  ErrorCode,
  OpenFeature,
  ProviderEvents,
  type EventHandler,
  type Hook,
} from '@openfeature/server-sdk'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { FlagService } from '../../src/flags/index.js'
import { useOpenFeature, type SwitchyardProvider } from '../../src/flags/openfeature.js'
import { booleanFlag } from './helpers.js'

const service = new FlagService()
let provider: SwitchyardProvider

beforeAll(async () => {
  await service.saveSegment({ key: 'staff', name: 'Staff', included: ['emp-1'] })
  await service.saveFlag(
    booleanFlag('checkout', {
      fallthrough: 'off',
      targets: { on: ['vip'] },
      rules: [
        {
          id: 'staff-rule',
          clauses: [{ attribute: 'key', operator: 'in_segment', values: ['staff'] }],
          variation: 'on',
        },
        {
          id: 'pro-rule',
          clauses: [{ attribute: 'plan', operator: 'is', values: ['pro'] }],
          variation: 'on',
        },
      ],
    }),
  )
  await service.saveFlag({
    key: 'theme',
    name: 'Theme',
    type: 'string',
    variations: [
      { name: 'light', value: 'light' },
      { name: 'dark', value: 'dark' },
    ],
    off_variation: 'light',
    fallthrough: 'dark',
  })
  await service.saveFlag({
    key: 'limit',
    name: 'Limit',
    type: 'integer',
    variations: [
      { name: 'low', value: 10 },
      { name: 'high', value: 100 },
    ],
    off_variation: 'low',
    fallthrough: 'high',
  })
  await service.saveFlag({
    key: 'ratio',
    name: 'Ratio',
    type: 'float',
    variations: [
      { name: 'a', value: 0.25 },
      { name: 'b', value: 0.75 },
    ],
    off_variation: 'a',
    fallthrough: 'b',
  })
  await service.saveFlag({
    key: 'config',
    name: 'Config',
    type: 'json',
    variations: [
      { name: 'v1', value: { retries: 1 } },
      { name: 'v2', value: { retries: 3, hosts: ['a', 'b'] } },
    ],
    off_variation: 'v1',
    fallthrough: 'v2',
  })
  await service.saveFlag(
    booleanFlag('gated', { prerequisites: [{ flag_key: 'checkout', variation: 'on' }] }),
  )
  await service.saveFlag(
    booleanFlag('split', {
      fallthrough: [
        { variation: 'on', weight: 50_000 },
        { variation: 'off', weight: 50_000 },
      ],
    }),
  )
  await service.start()
  provider = await useOpenFeature(service, { detailedMetadata: true })
})

afterAll(async () => {
  await OpenFeature.close()
})

describe('OpenFeature provider', () => {
  const client = () => OpenFeature.getClient()

  it('is registered with its metadata', () => {
    expect(OpenFeature.providerMetadata.name).toBe('switchyard')
    expect(client().providerStatus).toBe('READY')
  })

  it('resolves every type with variant, reason and metadata', async () => {
    const details = await client().getBooleanDetails('checkout', false, {
      targetingKey: 'u1',
      plan: 'pro',
    })
    expect(details).toMatchObject({
      flagKey: 'checkout',
      value: true,
      variant: 'on',
      reason: 'TARGETING_MATCH',
      flagMetadata: { 'switchyard.reason': 'RULE_MATCH', 'switchyard.rule_id': 'pro-rule' },
    })
    expect(details.errorCode).toBeUndefined()
    expect(await client().getStringValue('theme', 'x', { targetingKey: 'u' })).toBe('dark')
    expect(await client().getNumberValue('limit', 0, { targetingKey: 'u' })).toBe(100)
    expect(await client().getNumberValue('ratio', 0, { targetingKey: 'u' })).toBe(0.75)
    expect(await client().getObjectValue('config', {}, { targetingKey: 'u' })).toEqual({
      retries: 3,
      hosts: ['a', 'b'],
    })
  })

  it('maps targetingKey to the context key (targets and segments)', async () => {
    expect(
      await client().getBooleanDetails('checkout', false, { targetingKey: 'vip' }),
    ).toMatchObject({
      value: true,
      flagMetadata: { 'switchyard.reason': 'TARGET_MATCH' },
    })
    expect(
      await client().getBooleanDetails('checkout', false, { targetingKey: 'emp-1' }),
    ).toMatchObject({
      value: true,
      flagMetadata: { 'switchyard.reason': 'RULE_MATCH', 'switchyard.rule_id': 'staff-rule' },
    })
  })

  it('maps reasons: FALLTHROUGH → DEFAULT, PREREQUISITE_FAIL and OFF → DISABLED', async () => {
    expect(await client().getBooleanDetails('checkout', true, { targetingKey: 'u' })).toMatchObject(
      {
        value: false,
        reason: 'DEFAULT',
        flagMetadata: { 'switchyard.reason': 'FALLTHROUGH' },
      },
    )
    expect(await client().getBooleanDetails('gated', true, { targetingKey: 'u' })).toMatchObject({
      value: false,
      variant: 'off',
      reason: 'DISABLED',
      flagMetadata: {
        'switchyard.reason': 'PREREQUISITE_FAIL',
        'switchyard.prerequisite_key': 'checkout',
      },
    })
    await service.disableFlag('theme')
    expect(await client().getStringDetails('theme', 'x', { targetingKey: 'u' })).toMatchObject({
      value: 'light',
      reason: 'DISABLED',
      flagMetadata: { 'switchyard.reason': 'OFF' },
    })
    await service.enableFlag('theme')
  })

  it.each([
    [
      'boolean getter on a string flag',
      () => client().getBooleanDetails('theme', true, { targetingKey: 'u' }),
      true,
    ],
    [
      'string getter on a boolean flag',
      () => client().getStringDetails('checkout', 'dflt', { targetingKey: 'u' }),
      'dflt',
    ],
    [
      'number getter on a json flag',
      () => client().getNumberDetails('config', 7, { targetingKey: 'u' }),
      7,
    ],
    [
      'object getter on an integer flag',
      () => client().getObjectDetails('limit', { d: 1 }, { targetingKey: 'u' }),
      { d: 1 },
    ],
  ] as const)('TYPE_MISMATCH with the caller default: %s', async (_, evaluate, fallback) => {
    const details = await evaluate()
    expect(details).toMatchObject({
      value: fallback,
      reason: 'ERROR',
      errorCode: ErrorCode.TYPE_MISMATCH,
    })
  })

  it('FLAG_NOT_FOUND returns the caller default', async () => {
    expect(await client().getBooleanDetails('nope', true, { targetingKey: 'u' })).toMatchObject({
      value: true,
      reason: 'ERROR',
      errorCode: ErrorCode.FLAG_NOT_FOUND,
    })
  })

  it('TARGETING_KEY_MISSING for a rollout without a targeting key', async () => {
    expect(await client().getBooleanDetails('split', true, {})).toMatchObject({
      value: true,
      errorCode: ErrorCode.TARGETING_KEY_MISSING,
    })
  })

  it('hooks receive the resolution details', async () => {
    const seen: unknown[] = []
    const hook: Hook = {
      after: (_, details) => {
        seen.push({
          value: details.value,
          variant: details.variant,
          metadata: details.flagMetadata,
        })
      },
    }
    await client().getBooleanValue('checkout', false, { targetingKey: 'vip' }, { hooks: [hook] })
    expect(seen).toEqual([
      { value: true, variant: 'on', metadata: { 'switchyard.reason': 'TARGET_MATCH' } },
    ])
  })

  it('emits ConfigurationChanged with the changed flags', async () => {
    const changes: (string[] | undefined)[] = []
    const handler: EventHandler = (details) => {
      changes.push(details?.flagsChanged as string[] | undefined)
    }
    OpenFeature.addHandler(ProviderEvents.ConfigurationChanged, handler)
    await service.patchFlag('theme', { description: 'now documented' })
    await service.saveSegment({ key: 'staff', name: 'Staff', included: ['emp-1', 'emp-2'] })
    await new Promise((resolve) => setImmediate(resolve))
    OpenFeature.removeHandler(ProviderEvents.ConfigurationChanged, handler)
    expect(changes).toEqual([['theme'], ['checkout']])
    expect(provider.metadata.name).toBe('switchyard')
  })
})

describe('synchronous client', () => {
  it('accepts a context or a plain object with targeting_key', () => {
    expect(service.sync.getBooleanValue('checkout', false, { key: 'vip' })).toBe(true)
    expect(
      service.sync.getBooleanValue('checkout', false, { targeting_key: 'u', plan: 'pro' }),
    ).toBe(true)
    expect(
      service.sync.getBooleanValue('checkout', true, {
        targeting_key: 'u',
        attributes: { plan: 'free' },
      }),
    ).toBe(false)
    expect(service.sync.getStringValue('theme', 'x', { key: 'u' })).toBe('dark')
    expect(service.sync.getIntegerValue('limit', 0, { key: 'u' })).toBe(100)
    expect(service.sync.getFloatValue('ratio', 0, { key: 'u' })).toBe(0.75)
    expect(service.sync.getFloatValue('limit', 0, { key: 'u' })).toBe(100)
    expect(service.sync.getObjectValue('config', {}, { key: 'u' })).toEqual({
      retries: 3,
      hosts: ['a', 'b'],
    })
  })

  it('returns the default on unknown flags, type mismatches and errors', () => {
    expect(service.sync.getBooleanValue('nope', true, { key: 'u' })).toBe(true)
    expect(service.sync.getBooleanValue('theme', true, { key: 'u' })).toBe(true)
    expect(service.sync.getIntegerValue('ratio', 5, { key: 'u' })).toBe(5)
    expect(service.sync.getStringValue('checkout', 'd', { key: 'u' })).toBe('d')
    expect(service.sync.getObjectValue('limit', { a: 1 }, { key: 'u' })).toEqual({ a: 1 })
    expect(service.sync.getBooleanValue('split', true, {})).toBe(true)
  })

  it('returns frozen json values that callers cannot corrupt', () => {
    const value = service.sync.getObjectValue('config', {}, { key: 'u' })
    expect(Object.isFrozen(value)).toBe(true)
  })
})
