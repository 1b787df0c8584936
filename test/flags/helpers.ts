/**
 * Builders shared by the flag tests: minimal valid flags and a snapshot built straight from
 * records (bypassing the service, so the evaluator can be tested on its own).
 */
import { createHash } from 'node:crypto'
import type { Operation } from '../../src/core/operations.js'
import {
  compileFlag,
  compileSegment,
  FlagService,
  memoryFlagStore,
  type FlagStore,
  evaluateFlag,
  type Clause,
  type CompiledFlag,
  type CompiledSegment,
  type EvaluationContext,
  type Flag,
  type FlagInput,
  type FlagSnapshot,
  type ResolutionDetails,
  type Segment,
} from '../../src/flags/index.js'

export { booleanFlag } from '../../drill/lib/flag-input.js'

/** Variation names and their values. */
export type Variants = Record<string, unknown>

/** A flag of any type with these variations that serves `fallthrough` (also its off variation). */
export function staticFlag(
  key: string,
  type: FlagInput['type'],
  variants: Variants,
  fallthrough: string,
): FlagInput {
  return {
    key,
    name: key,
    type,
    variations: Object.entries(variants).map(([name, value]) => ({ name, value })),
    off_variation: fallthrough,
    fallthrough,
  }
}

/** A stored (normalised) flag built from a few fields, for evaluator-only tests. */
export function storedFlag(key: string, extra: Partial<Flag> = {}): Flag {
  return {
    key,
    name: key,
    description: '',
    type: 'boolean',
    tags: [],
    variations: [
      { name: 'on', value: true, description: '' },
      { name: 'off', value: false, description: '' },
    ],
    off_variation: 'off',
    fallthrough: 'on',
    enabled: true,
    prerequisites: [],
    targets: {},
    rules: [],
    scheduled_changes: [],
    status: 'ACTIVE',
    temporary: true,
    maintainer: null,
    metadata: {},
    created_at: '2026-01-01T00:00:00.000+00:00',
    updated_at: '2026-01-01T00:00:00.000+00:00',
    created_by: 'system',
    ...extra,
  }
}

/** A stored segment. */
export function storedSegment(key: string, extra: Partial<Segment> = {}): Segment {
  return {
    key,
    name: key,
    description: '',
    included: [],
    excluded: [],
    rules: [],
    tags: [],
    created_at: '2026-01-01T00:00:00.000+00:00',
    updated_at: '2026-01-01T00:00:00.000+00:00',
    ...extra,
  }
}

/** A snapshot of compiled records. */
export function snapshotOf(flags: Flag[], segments: Segment[] = []): FlagSnapshot {
  return {
    flags: new Map<string, CompiledFlag>(flags.map((flag) => [flag.key, compileFlag(flag)])),
    segments: new Map<string, CompiledSegment>(
      segments.map((segment) => [segment.key, compileSegment(segment)]),
    ),
  }
}

/** A flag whose only rule has `clause` and serves `on`; fallthrough `off`. */
export function ruleFlag(clause: Clause): Flag {
  return storedFlag('rule-flag', {
    fallthrough: 'off',
    rules: [
      {
        id: 'r1',
        description: '',
        clauses: [clause],
        variation: 'on',
        rollout: null,
        track_events: false,
      },
    ],
  })
}

/** Whether `clause` matches `context` (evaluated through a one-rule flag). */
export function clauseMatches(
  clause: Clause,
  context: EvaluationContext,
  segments: Segment[] = [],
): boolean {
  const result: ResolutionDetails = evaluateFlag(
    snapshotOf([ruleFlag(clause)], segments),
    'rule-flag',
    context,
  )
  if (result.reason === 'ERROR') throw new Error(String(result.error_message))
  return result.reason === 'RULE_MATCH'
}

/** The bucket computed independently of the implementation: whole SHA-1 digest mod 100000. */
export function referenceBucket(flagKey: string, kind: string, key: string): number {
  const hex = createHash('sha1').update(`${flagKey}:${kind}:${key}`, 'utf8').digest('hex')
  return Number(BigInt(`0x${hex}`) % 100000n)
}

/** A service on `store` with a settable clock (2026-11-21T12:00Z) that records its audit operations. */
export function setup(store: FlagStore = memoryFlagStore()) {
  const operations: Operation[] = []
  let now = Date.parse('2026-11-21T12:00:00Z')
  const clock = { now: () => now }
  const service = new FlagService({
    store,
    clock,
    report: (operation) => operations.push(operation),
  })
  return {
    service,
    store,
    operations,
    clock,
    advance: (ms: number) => (now += ms),
  }
}
