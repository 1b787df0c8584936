/**
 * What the OFREP benchmarks evaluate: a boolean flag with individual targets, a segment rule,
 * an attribute rule and a rollout fallthrough, the context the load generator sends, and the
 * JSON switchyard answers for it (which the bare Fastify baseline returns as is).
 */
import type { FlagInput, SegmentInput } from '../../src/flags/index.js'

/** The segment the flag's first rule uses. */
export const STAFF: SegmentInput = {
  key: 'staff',
  name: 'Staff',
  included: ['emp-1', 'emp-2'],
  rules: [{ clauses: [{ attribute: 'email', operator: 'ends_with', values: ['@corp.example'] }] }],
}

/** The flag of the single-evaluation benchmark. */
export const CHECKOUT: FlagInput = {
  key: 'checkout',
  name: 'Checkout',
  type: 'boolean',
  variations: [
    { name: 'on', value: true },
    { name: 'off', value: false },
  ],
  off_variation: 'off',
  targets: { on: ['vip-1', 'vip-2'] },
  rules: [
    {
      id: 'staff-rule',
      clauses: [{ attribute: 'key', operator: 'in_segment', values: ['staff'] }],
      variation: 'on',
    },
    {
      id: 'pro-rule',
      clauses: [{ attribute: 'plan', operator: 'in', values: ['pro', 'enterprise'] }],
      variation: 'on',
    },
  ],
  fallthrough: [
    { variation: 'on', weight: 30_000 },
    { variation: 'off', weight: 70_000 },
  ],
}

/** The request body of every benchmark request. */
export const REQUEST_BODY = JSON.stringify({
  context: { targetingKey: 'user-42', plan: 'pro', country: 'NL', email: 'u42@shop.example' },
})

/**
 * What switchyard answers to {@link REQUEST_BODY} for {@link CHECKOUT}: the flag has no metadata
 * of its own, and switchyard's details (reason, rule id) are left out unless
 * `ofrep.detailedMetadata` is on, which the benchmark app leaves off as the default does.
 */
export const EXPECTED_ANSWER = {
  key: 'checkout',
  value: true,
  reason: 'TARGETING_MATCH',
  variant: 'on',
  metadata: {},
}

/** The bench's evaluation key (random per run, handed to the server through the environment). */
export const OFREP_KEY_VARIABLE = 'OFREP_BENCH_KEY'
