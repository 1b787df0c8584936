/**
 * OpenFeature's evaluation conformance scenarios, run through a real OpenFeature client with the
 * switchyard provider.
 *
 * Source: the Gherkin suites of the OpenFeature specification (open-feature/spec,
 * `specification/assets/gherkin/evaluation_v2.feature`, plus the context-aware scenario of the
 * older `evaluation.feature`) and their flag set `test-flags.json`. No npm package ships these
 * files and no Cucumber runner is installed, so the scenario tables are transcribed here and
 * the flag set is expressed as switchyard flags (a `contextEvaluator` becomes a rule). The
 * provider states (not ready, fatal, stale), events, hooks and tracking are in
 * `openfeature-lifecycle.test.ts`. The scenarios of `metadata.feature` run against a flag
 * carrying the suite's metadata. Adapted: the DISABLED scenario — a disabled switchyard flag
 * serves its off variation rather than the caller's default. Not applicable: CACHED (the
 * in-process provider evaluates on its replica every time; the OFREP web provider's cache is
 * covered in test/ofrep/web-provider.test.ts).
 */
import {
  OpenFeature,
  type Client,
  type EvaluationContext,
  type JsonValue,
} from '@openfeature/server-sdk'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { FlagService, type FlagInput, type FlagType } from '../../src/flags/index.js'
import { staticFlag, type Variants } from './helpers.js'
import { SwitchyardProvider } from '../../src/flags/openfeature.js'

/** `email == 'ballmer@macrosoft.com' ? 'zero' : ''` (empty = the default variant, also zero). */
function targetedZero(key: string, type: FlagType, variants: Variants): FlagInput {
  return {
    ...staticFlag(key, type, variants, 'zero'),
    rules: [
      {
        clauses: [{ attribute: 'email', operator: 'is', values: ['ballmer@macrosoft.com'] }],
        variation: 'zero',
      },
    ],
  }
}

const template = { showImages: true, title: 'Check out these pics!', imagesPerPage: 100 }
const flags: FlagInput[] = [
  staticFlag('boolean-flag', 'boolean', { on: true, off: false }, 'on'),
  staticFlag('string-flag', 'string', { greeting: 'hi', parting: 'bye' }, 'greeting'),
  staticFlag('integer-flag', 'integer', { one: 1, ten: 10 }, 'ten'),
  staticFlag('float-flag', 'float', { tenth: 0.1, half: 0.5 }, 'half'),
  staticFlag('object-flag', 'json', { empty: {}, template }, 'template'),
  staticFlag('boolean-zero-flag', 'boolean', { zero: false, 'non-zero': true }, 'zero'),
  staticFlag('string-zero-flag', 'string', { zero: '', 'non-zero': 'str' }, 'zero'),
  staticFlag('integer-zero-flag', 'integer', { zero: 0, 'non-zero': 1 }, 'zero'),
  staticFlag('float-zero-flag', 'float', { zero: 0.0, 'non-zero': 1.0 }, 'zero'),
  staticFlag('object-zero-flag', 'json', { zero: {}, 'non-zero': template }, 'zero'),
  targetedZero('boolean-targeted-zero-flag', 'boolean', { zero: false, 'non-zero': true }),
  targetedZero('string-targeted-zero-flag', 'string', { zero: '', 'non-zero': 'str' }),
  targetedZero('integer-targeted-zero-flag', 'integer', { zero: 0, 'non-zero': 1 }),
  targetedZero('float-targeted-zero-flag', 'float', { zero: 0.0, 'non-zero': 1.0 }),
  targetedZero('object-targeted-zero-flag', 'json', { zero: {}, 'non-zero': template }),
  {
    // `!customer ? 'internal' : ''`
    ...staticFlag(
      'context-aware',
      'string',
      { internal: 'INTERNAL', external: 'EXTERNAL' },
      'external',
    ),
    rules: [
      {
        clauses: [{ attribute: 'customer', operator: 'is', values: [false] }],
        variation: 'internal',
      },
    ],
  },
  staticFlag('wrong-flag', 'string', { one: 'uno', two: 'dos' }, 'one'),
  {
    ...staticFlag('metadata-flag', 'boolean', { on: true, off: false }, 'on'),
    metadata: { string: '1.0.2', integer: 2, float: 0.1, boolean: true },
  },
  {
    // email, role, age and customer together select INTERNAL.
    ...staticFlag(
      'complex-targeted',
      'string',
      { internal: 'INTERNAL', external: 'EXTERNAL' },
      'external',
    ),
    rules: [
      {
        id: 'internal-admins',
        clauses: [
          { attribute: 'email', operator: 'ends_with', values: ['@macrosoft.com'] },
          { attribute: 'role', operator: 'is', values: ['admin'] },
          { attribute: 'age', operator: 'gte', values: [18] },
          { attribute: 'customer', operator: 'is', values: [false] },
        ],
        variation: 'internal',
      },
    ],
  },
  ...(['boolean', 'string', 'integer', 'float', 'json'] as const).map((type) => ({
    ...staticFlag(
      `${type === 'json' ? 'object' : type}-disabled-flag`,
      type,
      {
        boolean: { off: false, on: true },
        string: { off: 'bye', on: 'hi' },
        integer: { off: 1, on: 10 },
        float: { off: 0.1, on: 0.5 },
        json: { off: { a: 1 }, on: template },
      }[type],
      'on',
    ),
    off_variation: 'off',
    enabled: false,
  })),
]

type Kind = 'Boolean' | 'String' | 'Integer' | 'Float' | 'Object'
let client: Client

function details(kind: Kind, key: string, fallback: unknown, context: EvaluationContext = {}) {
  switch (kind) {
    case 'Boolean':
      return client.getBooleanDetails(key, fallback as boolean, context)
    case 'String':
      return client.getStringDetails(key, fallback as string, context)
    case 'Integer':
    case 'Float':
      return client.getNumberDetails(key, fallback as number, context)
    case 'Object':
      return client.getObjectDetails(key, fallback as JsonValue, context)
  }
}

beforeAll(async () => {
  const service = new FlagService()
  for (const flag of flags) await service.saveFlag(flag)
  await service.start()
  await OpenFeature.setProviderAndWait('conformance', new SwitchyardProvider(service))
  client = OpenFeature.getClient('conformance')
})

afterAll(async () => {
  await OpenFeature.close()
})

describe('OpenFeature evaluation_v2.feature', () => {
  it.each([
    ['Boolean', 'boolean-flag', false, true, 'on'],
    ['String', 'string-flag', 'bye', 'hi', 'greeting'],
    ['Integer', 'integer-flag', 1, 10, 'ten'],
    ['Float', 'float-flag', 0.1, 0.5, 'half'],
    ['Object', 'object-flag', {}, template, 'template'],
  ] as const)(
    'Resolve values / complete details: %s %s',
    async (kind, key, fallback, value, variant) => {
      expect(await details(kind, key, fallback)).toMatchObject({
        flagKey: key,
        value,
        variant,
        reason: 'STATIC',
      })
    },
  )

  it.each([
    ['Boolean', 'boolean-zero-flag', true, false],
    ['String', 'string-zero-flag', 'hi', ''],
    ['Integer', 'integer-zero-flag', 1, 0],
    ['Float', 'float-zero-flag', 0.1, 0.0],
    ['Object', 'object-zero-flag', { a: 1 }, {}],
  ] as const)('Resolves zero value: %s %s', async (kind, key, fallback, value) => {
    expect(await details(kind, key, fallback)).toMatchObject({ value, reason: 'STATIC' })
  })

  const targeted = [
    ['Boolean', 'boolean-targeted-zero-flag', true, false],
    ['String', 'string-targeted-zero-flag', 'hi', ''],
    ['Integer', 'integer-targeted-zero-flag', 1, 0],
    ['Float', 'float-targeted-zero-flag', 0.1, 0.0],
    ['Object', 'object-targeted-zero-flag', { a: 1 }, {}],
  ] as const

  it.each(targeted)(
    'Resolves zero value with targeting: %s %s',
    async (kind, key, fallback, value) => {
      const result = await details(kind, key, fallback, { email: 'ballmer@macrosoft.com' })
      expect(result).toMatchObject({ value, reason: 'TARGETING_MATCH' })
    },
  )

  it.each(targeted)(
    'Resolves zero value with targeting using default: %s %s',
    async (kind, key, fallback, value) => {
      const result = await details(kind, key, fallback, { email: 'ballmer@none.com' })
      expect(result).toMatchObject({ value, reason: 'DEFAULT' })
    },
  )

  it.each(targeted)('Empty evaluation context: %s %s', async (kind, key, fallback, value) => {
    expect(await details(kind, key, fallback, {})).toMatchObject({ value, reason: 'DEFAULT' })
  })

  it.each(targeted)('Null context values: %s %s', async (kind, key, fallback, value) => {
    expect(await details(kind, key, fallback, { email: null })).toMatchObject({
      value,
      reason: 'DEFAULT',
    })
  })

  it.each([
    ['Boolean', false],
    ['String', 'bye'],
    ['Integer', 1],
    ['Float', 0.1],
    ['Object', { a: 1 }],
  ] as const)('Flag not found error: %s', async (kind, fallback) => {
    expect(await details(kind, 'non-existent-flag', fallback)).toMatchObject({
      value: fallback,
      reason: 'ERROR',
      errorCode: 'FLAG_NOT_FOUND',
    })
  })

  it.each([
    ['String', 'boolean-flag', 'bye'],
    ['Boolean', 'string-flag', false],
    ['Integer', 'string-flag', 1],
    ['Object', 'string-flag', {}],
  ] as const)('Type mismatch error: %s requested from %s', async (kind, key, fallback) => {
    expect(await details(kind, key, fallback)).toMatchObject({
      value: fallback,
      reason: 'ERROR',
      errorCode: 'TYPE_MISMATCH',
    })
  })
})

describe('OpenFeature metadata.feature', () => {
  it('Returns metadata: every value with its type', async () => {
    const result = await details('Boolean', 'metadata-flag', true)
    expect(result).toMatchObject({ value: true, reason: 'STATIC' })
    expect(result.flagMetadata).toStrictEqual({
      string: '1.0.2',
      integer: 2,
      float: 0.1,
      boolean: true,
    })
    expect(typeof result.flagMetadata.string).toBe('string')
    expect(Number.isInteger(result.flagMetadata.integer)).toBe(true)
    expect(typeof result.flagMetadata.float).toBe('number')
    expect(typeof result.flagMetadata.boolean).toBe('boolean')
    expect(Object.isFrozen(result.flagMetadata)).toBe(true)
  })

  it.each([
    ['Boolean', 'boolean-flag', true],
    ['Integer', 'integer-flag', 23],
    ['Float', 'float-flag', 2.3],
    ['String', 'string-flag', 'value'],
    ['Object', 'object-flag', {}],
  ] as const)('Returns no metadata: %s %s', async (kind, key, fallback) => {
    const result = await details(kind, key, fallback)
    expect(result.errorCode).toBeUndefined()
    expect(result.flagMetadata).toStrictEqual({})
  })
})

describe('OpenFeature evaluation_v2.feature: reasons, metadata and details', () => {
  it('Multiple context attributes targeting: every clause of the rule must hold', async () => {
    const context = { email: 'ballmer@macrosoft.com', role: 'admin', age: 65, customer: false }
    expect(await details('String', 'complex-targeted', 'false', context)).toMatchObject({
      value: 'INTERNAL',
      reason: 'TARGETING_MATCH',
    })
    expect(
      await details('String', 'complex-targeted', 'false', { ...context, role: 'guest' }),
    ).toMatchObject({ value: 'EXTERNAL', reason: 'DEFAULT' })
  })

  it.each([
    ['Boolean', 'boolean-disabled-flag', true, false],
    ['String', 'string-disabled-flag', 'x', 'bye'],
    ['Integer', 'integer-disabled-flag', 7, 1],
    ['Float', 'float-disabled-flag', 0.9, 0.1],
    ['Object', 'object-disabled-flag', {}, { a: 1 }],
  ] as const)(
    'DISABLED reason: %s %s serves its off variation',
    async (kind, key, fallback, value) => {
      expect(await details(kind, key, fallback)).toMatchObject({
        value,
        variant: 'off',
        reason: 'DISABLED',
        flagMetadata: {},
      })
    },
  )

  it('Flag metadata in evaluation details: the flag’s own metadata, frozen', async () => {
    const result = await details('String', 'complex-targeted', 'x', {
      email: 'a@macrosoft.com',
      role: 'admin',
      age: 30,
      customer: false,
    })
    // A flag without metadata: nothing of switchyard's own unless asked for.
    expect(result.flagMetadata).toEqual({})
    expect(Object.isFrozen(result.flagMetadata)).toBe(true)
  })

  it('Error message in evaluation details names the missing flag', async () => {
    const result = await details('Boolean', 'missing-flag', false)
    expect(result.reason).toBe('ERROR')
    expect(result.errorMessage).toContain('flag missing-flag not found')
  })

  it.each([
    ['Boolean', 'string-flag', false],
    ['String', 'boolean-flag', 'bye'],
    ['Integer', 'boolean-flag', 1],
    ['Float', 'boolean-flag', 0.1],
  ] as const)('Default value type validation: %s from %s', async (kind, key, fallback) => {
    expect(await details(kind, key, fallback)).toMatchObject({
      value: fallback,
      errorCode: 'TYPE_MISMATCH',
    })
  })

  it('Evaluation context immutability: the context is not modified, the details are frozen', async () => {
    const context: EvaluationContext = { targetingKey: 'u', email: 'ballmer@macrosoft.com' }
    const copy = structuredClone(context)
    const result = await details('String', 'string-targeted-zero-flag', 'hi', context)
    expect(context).toEqual(copy)
    expect(Object.isFrozen(result.flagMetadata)).toBe(true)
  })

  it('Asynchronous flag evaluation: every method returns a promise', () => {
    const pending = client.getBooleanDetails('boolean-flag', false)
    expect(pending).toBeInstanceOf(Promise)
    return expect(pending).resolves.toMatchObject({ value: true })
  })
})

describe('OpenFeature evaluation.feature (context-aware and errors)', () => {
  it('Resolves based on context', async () => {
    const context = { fn: 'Sulisław', ln: 'Świętopełk', age: 29, customer: false }
    expect(await client.getStringValue('context-aware', 'EXTERNAL', context)).toBe('INTERNAL')
    expect(await client.getStringValue('context-aware', 'EXTERNAL', {})).toBe('EXTERNAL')
  })

  it('Type error: a string flag evaluated as an integer', async () => {
    expect(await client.getNumberDetails('wrong-flag', 13)).toMatchObject({
      value: 13,
      reason: 'ERROR',
      errorCode: 'TYPE_MISMATCH',
    })
  })
})
