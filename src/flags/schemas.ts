/**
 * TypeBox schemas of feature flags and segments, with snake_case field names (as on the wire): one
 * schema gives the TypeScript type (see `./model.ts`), the runtime check of every write and the
 * OpenAPI description of the admin API.
 *
 * `*InputSchema` accepts what a caller may send (fields with a default may be omitted).
 *
 * Built with `./schema-builders.ts` (TypeBox's results without loading TypeBox): this module is
 * part of the package's root import.
 */
import { Type } from './schema-builders.js'
import {
  FLAG_METADATA_LIMITS,
  FLAG_TYPES,
  OPERATORS,
  FLAG_STATUSES,
  ROLLOUT_TOTAL,
  KEY_PATTERN,
} from './model.js'

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
 * A scheduled change (this shape is switchyard's): at `at`
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

/**
 * A flag's metadata: up to 32 entries of a string (≤ 256 characters), a finite number or a
 * boolean, keys of 1 to 64 characters not starting with `switchyard.` (reserved for the
 * details switchyard adds; the key checks are in `validate.ts`).
 */
export const FlagMetadataSchema = Type.Record(
  Type.String(),
  Type.Union([
    Type.String({ maxLength: FLAG_METADATA_LIMITS.maxStringLength }),
    Type.Number(),
    Type.Boolean(),
  ]),
  {
    maxProperties: FLAG_METADATA_LIMITS.maxKeys,
    description:
      'Free-form facts every evaluation returns: string (≤ 256 characters), number or boolean values; ≤ 32 keys of 1 to 64 characters, none starting with "switchyard."',
  },
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
    metadata: Type.Optional(FlagMetadataSchema),
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
