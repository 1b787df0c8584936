/**
 * The data model of feature flags and segments with snake_case field names (as on the wire): the
 * constants, and the types of inputs (from the TypeBox schemas in `./schemas.ts`) and of stored
 * records (every field present, which is what stores hold and events carry).
 *
 * Only types come from the schemas here: the evaluator and the stores need this module, and
 * TypeBox costs more to load than the rest of the engine, so it loads with the first write
 * (validation) or with the admin app, never on the request path.
 */
import type { Static } from 'typebox'
import type {
  VariationSchema,
  RolloutEntrySchema,
  ClauseSchema,
  PrerequisiteSchema,
  FlagInputSchema,
  SegmentInputSchema,
} from './schemas.js'

/** The flag value types. */
export const FLAG_TYPES = ['boolean', 'string', 'integer', 'float', 'json'] as const
/** A flag value type. */
export type FlagType = (typeof FLAG_TYPES)[number]

/** The 21 clause operators. */
export const OPERATORS = [
  'is',
  'is_not',
  'contains',
  'not_contains',
  'starts_with',
  'ends_with',
  'matches',
  'not_matches',
  'gt',
  'gte',
  'lt',
  'lte',
  'before',
  'after',
  'in',
  'not_in',
  'in_segment',
  'not_in_segment',
  'semver_eq',
  'semver_lt',
  'semver_gt',
] as const
/** A clause operator. */
export type Operator = (typeof OPERATORS)[number]

/** Flag lifecycle status values. */
export const FLAG_STATUSES = ['ACTIVE', 'INACTIVE', 'LAUNCHED', 'DEPRECATED', 'ARCHIVED'] as const

/** Sum every rollout list's weights must reach (100000 = 100 %). */
export const ROLLOUT_TOTAL = 100_000
/** Longest allowed chain of prerequisites (edges). */
export const MAX_PREREQUISITE_DEPTH = 10

/**
 * Bounds of a flag's `metadata`: free-form facts about a flag (an owner's version, a ticket, a
 * cost) that every evaluation returns. Bounded because every evaluation answer carries them.
 */
export const FLAG_METADATA_LIMITS = {
  /** Most entries. */
  maxKeys: 32,
  /** Longest key, in characters. */
  maxKeyLength: 64,
  /** Longest string value, in characters. */
  maxStringLength: 256,
} as const

/**
 * Key prefix reserved for the details switchyard itself adds to OpenFeature flag metadata
 * (`switchyard.reason`, `switchyard.rule_id`, `switchyard.prerequisite_key`); a flag's own
 * metadata may not use it.
 */
export const RESERVED_METADATA_PREFIX = 'switchyard.'

/** A flag's metadata: string, number or boolean values by key. */
export type FlagMetadata = Readonly<Record<string, string | number | boolean>>

/** Flag and segment keys: letters, digits, `.`, `_`, `-`; they appear in URLs and audit labels. */
export const KEY_PATTERN = '^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$'

/** A variation. */
export type Variation = Static<typeof VariationSchema>
/** A rollout entry; weights of one list sum to {@link ROLLOUT_TOTAL}. */
export type RolloutEntry = Static<typeof RolloutEntrySchema>
/** A clause. */
export type Clause = Static<typeof ClauseSchema>
/** A prerequisite. */
export type Prerequisite = Static<typeof PrerequisiteSchema>
/** A flag as accepted by `saveFlag`. */
export type FlagInput = Static<typeof FlagInputSchema>
/** A segment as accepted by `saveSegment`. */
export type SegmentInput = Static<typeof SegmentInputSchema>

/** A stored targeting rule: every field present. */
export interface Rule {
  id: string
  description: string
  clauses: Clause[]
  variation: string | null
  rollout: RolloutEntry[] | null
  track_events: boolean
}

/** A stored scheduled change. */
export interface ScheduledChange {
  id: string
  /** ISO 8601 time (UTC, `+00:00`) at which the change applies. */
  at: string
  action: 'enable' | 'disable' | 'update'
  /** JSON merge patch for `update`; null otherwise. */
  patch: Record<string, unknown> | null
}

/** A stored flag: the normalised form of {@link FlagInput}, every field present. */
export interface Flag {
  key: string
  name: string
  description: string
  type: FlagType
  tags: string[]
  variations: { name: string; value: unknown; description: string }[]
  off_variation: string
  fallthrough: string | RolloutEntry[]
  enabled: boolean
  prerequisites: Prerequisite[]
  targets: Record<string, string[]>
  rules: Rule[]
  scheduled_changes: ScheduledChange[]
  status: (typeof FLAG_STATUSES)[number]
  temporary: boolean
  maintainer: string | null
  /** Free-form facts about the flag that every evaluation returns (see {@link FLAG_METADATA_LIMITS}). */
  metadata: Record<string, string | number | boolean>
  created_at: string
  updated_at: string
  created_by: string
}

/** A stored segment rule. */
export interface SegmentRule {
  id: string
  description: string
  clauses: Clause[]
}

/** A stored segment: every field present. */
export interface Segment {
  key: string
  name: string
  description: string
  included: string[]
  excluded: string[]
  rules: SegmentRule[]
  tags: string[]
  created_at: string
  updated_at: string
}

/**
 * The evaluation context. Named fields and the items of `attributes` are
 * addressed in clauses by name; a named field wins over an attribute of the same name.
 */
export interface EvaluationContext {
  /** The context key (targeting key). Targets, segments' lists and bucketing use it. */
  key: string
  /** Default `user`; part of the bucketing string. */
  kind?: string
  email?: string | null
  ip?: string | null
  country?: string | null
  app_version?: string | null
  attributes?: Readonly<Record<string, unknown>>
}

/** Names of the context fields that clauses read from the context itself, not `attributes`. */
export const NAMED_CONTEXT_FIELDS: ReadonlySet<string> = new Set([
  'key',
  'kind',
  'email',
  'ip',
  'country',
  'app_version',
])

/** Why an evaluation produced its value. */
export type Reason =
  'OFF' | 'TARGET_MATCH' | 'RULE_MATCH' | 'FALLTHROUGH' | 'PREREQUISITE_FAIL' | 'ERROR' | 'DEFAULT'

/**
 * Machine-readable cause of an `ERROR` or `DEFAULT` result (a switchyard extension; the
 * codes are OpenFeature's, so the provider passes them through unchanged).
 */
export type EvaluationErrorCode =
  'FLAG_NOT_FOUND' | 'TARGETING_KEY_MISSING' | 'TYPE_MISMATCH' | 'PARSE_ERROR' | 'GENERAL'

/** The result of an evaluation (its resolution details); unset members are null. */
export interface ResolutionDetails<T = unknown> {
  readonly value: T
  readonly variation: string | null
  readonly reason: Reason
  /** Set when reason is RULE_MATCH. */
  readonly rule_id: string | null
  /** Set when reason is PREREQUISITE_FAIL: the first prerequisite that failed. */
  readonly prerequisite_key: string | null
  /** Set when reason is ERROR. */
  readonly error_message: string | null
  /** Set when reason is ERROR or DEFAULT (extension). */
  readonly error_code: EvaluationErrorCode | null
  /** The evaluated flag's metadata (frozen; empty for an unknown flag or an error). */
  readonly metadata: FlagMetadata
}

/** Segment keys named by a flag's `in_segment` / `not_in_segment` clauses. */
export function segmentsOf(flag: Flag): Set<string> {
  const keys = new Set<string>()
  for (const rule of flag.rules)
    for (const clause of rule.clauses)
      if (clause.operator === 'in_segment' || clause.operator === 'not_in_segment')
        for (const value of clause.values) if (typeof value === 'string') keys.add(value)
  return keys
}
