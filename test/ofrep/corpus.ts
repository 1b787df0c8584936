/**
 * The flags and contexts the OFREP client tests compare against the in-process provider:
 * every flag type, individual targets, rules (with and without rollouts), segments (included
 * keys and rules), percentage rollouts, prerequisites that pass and fail, and a disabled flag.
 */
import {
  OpenFeature,
  type Client,
  type EvaluationContext,
  type JsonValue,
} from '@openfeature/server-sdk'
import type { OfrepOptions } from '../../src/admin/ofrep/index.js'
import type { FlagInput, SegmentInput } from '../../src/flags/index.js'
import { SwitchyardProvider } from '../../src/flags/openfeature.js'
import { ADMIN, buildAdmin, createEvaluationKey, login } from '../admin/helpers.js'

/** OpenFeature getter kind of a corpus flag. */
export type Kind = 'boolean' | 'string' | 'number' | 'object'

const onOff = [
  { name: 'on', value: true },
  { name: 'off', value: false },
]

/** The segment the corpus uses. */
export const corpusSegments: SegmentInput[] = [
  {
    key: 'staff',
    name: 'Staff',
    included: ['emp-1'],
    excluded: ['emp-9'],
    rules: [
      { clauses: [{ attribute: 'email', operator: 'ends_with', values: ['@corp.example'] }] },
    ],
  },
]

/** The corpus flags with the getter and default each is read with. */
export const corpusFlags: { flag: FlagInput; kind: Kind; fallback: unknown }[] = [
  {
    kind: 'boolean',
    fallback: false,
    flag: {
      key: 'banner',
      name: 'Banner',
      type: 'boolean',
      variations: onOff,
      off_variation: 'off',
      fallthrough: 'on',
    },
  },
  {
    kind: 'string',
    fallback: 'none',
    flag: {
      key: 'theme',
      name: 'Theme',
      type: 'string',
      variations: [
        { name: 'light', value: 'light' },
        { name: 'dark', value: 'dark' },
        { name: 'festive', value: 'festive' },
      ],
      off_variation: 'light',
      fallthrough: 'light',
      targets: { dark: ['vip'] },
      rules: [
        {
          id: 'germany',
          clauses: [{ attribute: 'country', operator: 'is', values: ['DE'] }],
          variation: 'festive',
        },
      ],
    },
  },
  {
    kind: 'number',
    fallback: -1,
    flag: {
      key: 'page-size',
      name: 'Page size',
      type: 'integer',
      variations: [
        { name: 'small', value: 10 },
        { name: 'large', value: 100 },
      ],
      off_variation: 'small',
      fallthrough: 'small',
      rules: [
        {
          id: 'staff-rule',
          clauses: [{ attribute: 'key', operator: 'in_segment', values: ['staff'] }],
          variation: 'large',
        },
      ],
    },
  },
  {
    kind: 'number',
    fallback: 0,
    flag: {
      key: 'discount',
      name: 'Discount',
      type: 'float',
      variations: [
        { name: 'none', value: 0.0 },
        { name: 'some', value: 0.15 },
      ],
      off_variation: 'none',
      fallthrough: [
        { variation: 'none', weight: 50_000 },
        { variation: 'some', weight: 50_000 },
      ],
    },
  },
  {
    kind: 'object',
    fallback: {},
    flag: {
      key: 'limits',
      name: 'Limits',
      type: 'json',
      variations: [
        { name: 'basic', value: { requests: 10, burst: false } },
        { name: 'pro', value: { requests: 1000, burst: true, regions: ['eu', 'us'] } },
      ],
      off_variation: 'basic',
      fallthrough: 'basic',
      rules: [
        {
          id: 'pro-plan',
          clauses: [{ attribute: 'plan', operator: 'in', values: ['pro', 'enterprise'] }],
          variation: 'pro',
        },
      ],
    },
  },
  {
    kind: 'string',
    fallback: 'control',
    flag: {
      key: 'experiment',
      name: 'Experiment',
      type: 'string',
      variations: [
        { name: 'a', value: 'A' },
        { name: 'b', value: 'B' },
        { name: 'control', value: 'control' },
      ],
      off_variation: 'control',
      fallthrough: 'control',
      rules: [
        {
          id: 'france-split',
          clauses: [{ attribute: 'country', operator: 'is', values: ['FR'] }],
          rollout: [
            { variation: 'a', weight: 33_333 },
            { variation: 'b', weight: 66_667 },
          ],
        },
      ],
    },
  },
  {
    kind: 'boolean',
    fallback: true,
    flag: {
      key: 'kill-switch',
      name: 'Kill switch',
      type: 'boolean',
      variations: onOff,
      off_variation: 'off',
      fallthrough: 'on',
      enabled: false,
    },
  },
  {
    kind: 'boolean',
    fallback: true,
    flag: {
      key: 'new-checkout',
      name: 'New checkout',
      type: 'boolean',
      variations: onOff,
      off_variation: 'off',
      fallthrough: 'on',
      prerequisites: [{ flag_key: 'banner', variation: 'on' }],
      metadata: { owner: 'checkout-team', version: 2, ratio: 0.5, beta: true },
    },
  },
  {
    kind: 'boolean',
    fallback: true,
    flag: {
      key: 'gated',
      name: 'Gated',
      type: 'boolean',
      variations: onOff,
      off_variation: 'off',
      fallthrough: 'on',
      prerequisites: [{ flag_key: 'kill-switch', variation: 'on' }],
    },
  },
]

/** Contexts that reach every branch of the corpus. */
export const corpusContexts: Record<string, unknown>[] = [
  { targetingKey: 'vip' },
  { targetingKey: 'user-1', country: 'DE', plan: 'pro' },
  { targetingKey: 'emp-1' },
  { targetingKey: 'emp-9', email: 'nine@corp.example' },
  { targetingKey: 'user-2', email: 'two@corp.example', plan: 'enterprise' },
  { targetingKey: 'user-3', country: 'FR' },
  { targetingKey: 'user-4', country: 'FR' },
  { targetingKey: 'user-5', country: 'FR' },
  { targetingKey: 'user-6' },
  { country: 'FR' },
  {},
]

/**
 * What every client must agree on, from a server-SDK client (error messages are left out:
 * each client words them its own way).
 */
export async function serverDetails(
  client: Client,
  kind: Kind,
  key: string,
  fallback: unknown,
  flat: Readonly<Record<string, unknown>>,
) {
  const context = flat as EvaluationContext
  const details =
    kind === 'boolean'
      ? await client.getBooleanDetails(key, fallback as boolean, context)
      : kind === 'string'
        ? await client.getStringDetails(key, fallback as string, context)
        : kind === 'number'
          ? await client.getNumberDetails(key, fallback as number, context)
          : await client.getObjectDetails(key, fallback as JsonValue, context)
  const { value, variant, reason, errorCode, flagMetadata } = details
  return { value, variant, reason, errorCode, flagMetadata: { ...flagMetadata } }
}

/**
 * A live admin app (credentials on, 127.0.0.1, port 0) holding the corpus, an evaluation key
 * named `keyName`, and the in-process provider on the same engine as the OpenFeature domain
 * `local` — what each OFREP client is compared with.
 */
export async function corpusServer(keyName: string, ofrep: OfrepOptions) {
  const { app, engine } = await buildAdmin({ auth: ADMIN, clock: null, ofrep })
  for (const segment of corpusSegments) await engine.saveSegment(segment)
  for (const { flag } of corpusFlags) await engine.saveFlag(flag)
  const address = await app.listen({ host: '127.0.0.1', port: 0 })
  const { key } = await createEvaluationKey(app, keyName, await login(app))
  await OpenFeature.setProviderAndWait(
    'local',
    new SwitchyardProvider(engine.flags, { detailedMetadata: ofrep.detailedMetadata === true }),
  )
  return {
    app,
    engine,
    baseUrl: `${address}/switchyard`,
    key,
    local: OpenFeature.getClient('local'),
  }
}
