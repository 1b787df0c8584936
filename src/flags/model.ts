/**
 * The data model of feature flags and segments, as TypeBox schemas with the spec's snake_case
 * field names. One schema gives the TypeScript type, the runtime check of every write and the
 * OpenAPI description of the admin API.
 *
 * Two families of schemas exist: `*InputSchema` accepts what a caller may send (fields with a
 * default may be omitted), and the stored schemas (`FlagSchema`, `SegmentSchema`) describe the
 * normalised record with every field present, which is what stores hold and events carry.
 */
import { Type, type Static } from 'typebox'

/** The flag value types of the spec. */
export const FLAG_TYPES = ['boolean', 'string', 'integer', 'float', 'json'] as const
/** A flag value type. */
export type FlagType = (typeof FLAG_TYPES)[number]

/** The 21 clause operators of the spec, exactly as written there. */
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
/** Longest allowed chain of prerequisites (edges), spec "prerequisite depth". */
export const MAX_PREREQUISITE_DEPTH = 10

/** Flag and segment keys: letters, digits, `.`, `_`, `-`; they appear in URLs and audit labels. */
export const KEY_PATTERN = '^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$'

const Key = Type.String({ pattern: KEY_PATTERN })
const Name = Type.String({ minLength: 1, maxLength: 200 })
const Tags = Type.Array(Type.String({ maxLength: 100 }), { maxItems: 100 })
const Timestamp = Type.String({ minLength: 1 })

/** A variation: a named value a flag can serve. */
export const VariationSchema = Type.Object(
  {
    name: Name,
    value: Type.Unknown(),
    description: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
)

/** One entry of a percentage rollout. */
export const RolloutEntrySchema = Type.Object(
  {
    variation: Name,
    weight: Type.Integer({ minimum: 0, maximum: ROLLOUT_TOTAL }),
  },
  { additionalProperties: false },
)

/** A clause: `attribute operator values`, values ORed, optionally negated. */
export const ClauseSchema = Type.Object(
  {
    attribute: Type.String({ minLength: 1 }),
    operator: Type.Enum(OPERATORS),
    values: Type.Array(Type.Unknown(), { minItems: 1 }),
    negate: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
)

const Rollout = Type.Array(RolloutEntrySchema, { minItems: 1 })

/** A targeting rule as a caller sends it (`id` generated when absent). */
export const RuleInputSchema = Type.Object(
  {
    id: Type.Optional(Type.String({ minLength: 1 })),
    description: Type.Optional(Type.String()),
    clauses: Type.Array(ClauseSchema),
    variation: Type.Optional(Type.Union([Name, Type.Null()])),
    rollout: Type.Optional(Type.Union([Rollout, Type.Null()])),
    track_events: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
)

/** A prerequisite: flag `flag_key` must serve `variation`. */
export const PrerequisiteSchema = Type.Object(
  { flag_key: Key, variation: Name },
  { additionalProperties: false },
)

/**
 * A scheduled change (the spec names the list only; this shape is switchyard's): at `at`
 * (ISO 8601) the flag is enabled, disabled, or updated with `patch`, a JSON merge patch
 * (RFC 7396) that may not change `key`, `type` or `scheduled_changes`.
 */
export const ScheduledChangeInputSchema = Type.Object(
  {
    id: Type.Optional(Type.String({ minLength: 1 })),
    at: Type.String({ minLength: 1 }),
    action: Type.Union([Type.Literal('enable'), Type.Literal('disable'), Type.Literal('update')]),
    patch: Type.Optional(Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()])),
  },
  { additionalProperties: false },
)

/** A flag as a caller sends it to `saveFlag`. */
export const FlagInputSchema = Type.Object(
  {
    key: Key,
    name: Name,
    description: Type.Optional(Type.String()),
    type: Type.Enum(FLAG_TYPES),
    tags: Type.Optional(Tags),
    variations: Type.Array(VariationSchema, { minItems: 2 }),
    off_variation: Name,
    fallthrough: Type.Union([Name, Rollout]),
    enabled: Type.Optional(Type.Boolean()),
    prerequisites: Type.Optional(Type.Array(PrerequisiteSchema)),
    targets: Type.Optional(Type.Record(Type.String(), Type.Array(Type.String()))),
    rules: Type.Optional(Type.Array(RuleInputSchema)),
    scheduled_changes: Type.Optional(Type.Array(ScheduledChangeInputSchema)),
    status: Type.Optional(Type.Enum(FLAG_STATUSES)),
    temporary: Type.Optional(Type.Boolean()),
    maintainer: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    created_at: Type.Optional(Timestamp),
    updated_at: Type.Optional(Timestamp),
    created_by: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
)

/** A segment rule as a caller sends it; its clauses are ANDed, a segment's rules ORed. */
export const SegmentRuleInputSchema = Type.Object(
  {
    id: Type.Optional(Type.String({ minLength: 1 })),
    description: Type.Optional(Type.String()),
    clauses: Type.Array(ClauseSchema, { minItems: 1 }),
  },
  { additionalProperties: false },
)

/** A segment as a caller sends it to `saveSegment`. */
export const SegmentInputSchema = Type.Object(
  {
    key: Key,
    name: Name,
    description: Type.Optional(Type.String()),
    included: Type.Optional(Type.Array(Type.String())),
    excluded: Type.Optional(Type.Array(Type.String())),
    rules: Type.Optional(Type.Array(SegmentRuleInputSchema)),
    tags: Type.Optional(Tags),
    created_at: Type.Optional(Timestamp),
    updated_at: Type.Optional(Timestamp),
  },
  { additionalProperties: false },
)

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
 * The evaluation context of the spec. Named fields and the items of `attributes` are
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

/** Why an evaluation produced its value (spec "Reason values"). */
export type Reason =
  'OFF' | 'TARGET_MATCH' | 'RULE_MATCH' | 'FALLTHROUGH' | 'PREREQUISITE_FAIL' | 'ERROR' | 'DEFAULT'

/**
 * Machine-readable cause of an `ERROR` or `DEFAULT` result (a switchyard extension; the
 * codes are OpenFeature's, so the provider passes them through unchanged).
 */
export type EvaluationErrorCode =
  'FLAG_NOT_FOUND' | 'TARGETING_KEY_MISSING' | 'TYPE_MISMATCH' | 'PARSE_ERROR' | 'GENERAL'

/** The result of an evaluation (spec "Resolution details"); unset members are null. */
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
}
