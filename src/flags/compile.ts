/**
 * Compiling flags and segments into the form the evaluator walks.
 *
 * Everything that can be decided when a flag is saved is decided here, once: variation names
 * become frozen result objects (so an evaluation returns a shared, immutable
 * {@link ResolutionDetails} and allocates nothing), regexes are built, `in` lists become Sets,
 * semvers are parsed, rollouts become cumulative weights. Compiling checks everything a flag
 * can get wrong on its own and throws {@link ValidationError}; checks that need other records
 * (prerequisite flags, segments, cycles) live in `validate.ts`.
 */
import { ValidationError } from '../core/errors.js'
import { bucketPrefix, type BucketPrefix } from './bucketing.js'
import { FlagPrerequisiteCycleError } from './errors.js'
import {
  NAMED_CONTEXT_FIELDS,
  ROLLOUT_TOTAL,
  type Clause,
  type EvaluationContext,
  type EvaluationErrorCode,
  type Flag,
  type FlagMetadata,
  type FlagType,
  type Reason,
  type ResolutionDetails,
  type RolloutEntry,
  type Segment,
} from './model.js'
import { buildValueTest, isNegativeOperator, type ValueTest } from './operators.js'

/** Reads one attribute from a context. */
export type AttributeReader = (context: EvaluationContext) => unknown

/** A compiled clause. */
export interface CompiledClause {
  readonly read: AttributeReader
  /** Positive test; null for segment clauses. */
  readonly test: ValueTest | null
  /** Segment keys of `in_segment` / `not_in_segment`; null otherwise. */
  readonly segments: readonly string[] | null
  /** True for negative operators (complement of the positive test). */
  readonly complement: boolean
  readonly negate: boolean
}

/** A rollout: cumulative weights and the result served for each entry. */
export interface CompiledRollout {
  readonly cumulative: readonly number[]
  readonly results: readonly ResolutionDetails[]
}

/** What a rule or the fallthrough serves: a fixed result or a rollout. */
export interface CompiledServe {
  readonly result: ResolutionDetails | null
  readonly rollout: CompiledRollout | null
}

/** A compiled targeting rule. */
export interface CompiledRule extends CompiledServe {
  readonly clauses: readonly CompiledClause[]
}

/** A compiled prerequisite. */
export interface CompiledPrerequisite {
  readonly flagKey: string
  readonly variation: string
  /** off_variation with reason PREREQUISITE_FAIL and this prerequisite's key. */
  readonly failResult: ResolutionDetails
}

/** A flag ready for evaluation. */
export interface CompiledFlag {
  readonly flag: Flag
  readonly key: string
  readonly type: FlagType
  readonly enabled: boolean
  readonly offResult: ResolutionDetails
  readonly prerequisites: readonly CompiledPrerequisite[]
  /** Context key to TARGET_MATCH result. */
  readonly targets: ReadonlyMap<string, ResolutionDetails>
  readonly rules: readonly CompiledRule[]
  readonly fallthrough: CompiledServe
  /** `"<key>:"`, the start of every bucketing string. */
  readonly bucketPrefix: BucketPrefix
  /** `"<key>:user:"`, the start for the default kind. */
  readonly userBucketPrefix: BucketPrefix
  /** Buckets of recent context keys of kind `user` (bounded); null when the flag has no rollout. */
  readonly bucketCache: Map<string, number> | null
}

/** A segment ready for membership checks. */
export interface CompiledSegment {
  readonly segment: Segment
  readonly included: ReadonlySet<string>
  readonly excluded: ReadonlySet<string>
  /** Rules (ORed), each a list of clauses (ANDed). */
  readonly rules: readonly (readonly CompiledClause[])[]
}

/**
 * Results served by a percentage rollout, and fallthrough results of flags without any
 * targeting (no prerequisites, targets or rules). The OpenFeature provider reports these as
 * `SPLIT` and `STATIC`; the engine's own reasons (RULE_MATCH, FALLTHROUGH) do not distinguish them.
 */
export const rolloutResults = new WeakSet<ResolutionDetails>()
/** See {@link rolloutResults}. */
export const staticResults = new WeakSet<ResolutionDetails>()

/** The metadata of results that have no flag behind them (unknown flag, errors). */
export const NO_METADATA: FlagMetadata = Object.freeze({})

/** Builds an immutable result object. */
export function makeResult(
  value: unknown,
  variation: string | null,
  reason: Reason,
  extra: {
    rule_id?: string
    prerequisite_key?: string
    error_message?: string
    error_code?: EvaluationErrorCode
    metadata?: FlagMetadata
  } = {},
): ResolutionDetails {
  return Object.freeze({
    value,
    variation,
    reason,
    rule_id: extra.rule_id ?? null,
    prerequisite_key: extra.prerequisite_key ?? null,
    error_message: extra.error_message ?? null,
    error_code: extra.error_code ?? null,
    metadata: extra.metadata ?? NO_METADATA,
  })
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value)
    for (const item of Object.values(value)) deepFreeze(item)
  }
  return value
}

function invalid(field: string, message: string): never {
  throw new ValidationError(`Invalid flag: ${field} ${message}.`, {
    details: [{ field, message }],
  })
}

/** Whether `value` fits a flag of `type`. */
export function valueFitsType(type: FlagType, value: unknown): boolean {
  switch (type) {
    case 'boolean':
      return typeof value === 'boolean'
    case 'string':
      return typeof value === 'string'
    case 'integer':
      return typeof value === 'number' && Number.isSafeInteger(value)
    case 'float':
      return typeof value === 'number' && Number.isFinite(value)
    case 'json':
      return value !== null && typeof value === 'object' && isJson(value)
  }
}

/** True for values that survive JSON unchanged (what every store and the wire can carry). */
function isJson(value: unknown): boolean {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return true
  if (typeof value === 'number') return Number.isFinite(value)
  if (Array.isArray(value)) return value.every(isJson)
  if (typeof value !== 'object' || Object.getPrototypeOf(value) !== Object.prototype) return false
  return Object.values(value).every(isJson)
}

/** The reader of a clause attribute: named context fields first, else `attributes[name]`. */
export function attributeReader(name: string): AttributeReader {
  switch (name) {
    case 'key':
      return (context) => context.key
    case 'kind':
      return (context) => context.kind ?? 'user'
    case 'email':
      return (context) => context.email
    case 'ip':
      return (context) => context.ip
    case 'country':
      return (context) => context.country
    case 'app_version':
      return (context) => context.app_version
    default:
      if (NAMED_CONTEXT_FIELDS.has(name)) throw new Error(`unhandled named field ${name}`)
      // Own members only: a context's attributes are a plain object from the caller, and an
      // attribute named `constructor` or `toString` must read as absent, not as a function.
      return (context) => {
        const attributes = context.attributes
        return attributes !== undefined && Object.hasOwn(attributes, name)
          ? attributes[name]
          : undefined
      }
  }
}

/** Compiles one clause; `path` names it in error details (e.g. `/rules/0/clauses/1`). */
export function compileClause(clause: Clause, path: string): CompiledClause {
  const segmentOperator = clause.operator === 'in_segment' || clause.operator === 'not_in_segment'
  let segments: string[] | null = null
  if (segmentOperator) {
    segments = clause.values.map((value, index) => {
      if (typeof value !== 'string') invalid(`${path}/values/${index}`, 'must be a segment key')
      return value
    })
  }
  return {
    read: attributeReader(clause.attribute),
    test: segmentOperator ? null : buildValueTest(clause.operator, clause.values, `${path}/values`),
    segments,
    complement: isNegativeOperator(clause.operator),
    negate: clause.negate ?? false,
  }
}

function compileRollout(
  entries: readonly RolloutEntry[],
  path: string,
  resultOf: (variation: string, path: string) => ResolutionDetails,
): CompiledRollout {
  let sum = 0
  const cumulative: number[] = []
  const results = entries.map((entry, index) => {
    sum += entry.weight
    cumulative.push(sum)
    return resultOf(entry.variation, `${path}/${index}/variation`)
  })
  if (sum !== ROLLOUT_TOTAL) invalid(path, `weights sum to ${sum}, not ${ROLLOUT_TOTAL}`)
  for (const result of results) rolloutResults.add(result)
  return { cumulative, results }
}

/** Compiles a (structurally valid, normalised) flag; throws {@link ValidationError}. */
export function compileFlag(flag: Flag): CompiledFlag {
  const values = new Map<string, unknown>()
  flag.variations.forEach((variation, index) => {
    if (values.has(variation.name))
      invalid(`/variations/${index}/name`, `repeats the name ${JSON.stringify(variation.name)}`)
    if (!valueFitsType(flag.type, variation.value))
      invalid(`/variations/${index}/value`, `does not fit the flag type ${flag.type}`)
    values.set(variation.name, deepFreeze(variation.value))
  })
  const valueOf = (name: string, path: string): unknown => {
    if (!values.has(name)) invalid(path, `names no variation (${JSON.stringify(name)})`)
    return values.get(name)
  }
  const offValue = valueOf(flag.off_variation, '/off_variation')
  // Records stored before flags had metadata have none: they evaluate with an empty one.
  const stored = flag.metadata as Flag['metadata'] | undefined
  const metadata: FlagMetadata = stored === undefined ? NO_METADATA : Object.freeze({ ...stored })
  const offResult = makeResult(offValue, flag.off_variation, 'OFF', { metadata })

  const prerequisites = flag.prerequisites.map((prerequisite) => {
    // A flag that requires itself is a prerequisite cycle of length one, answered like longer ones.
    if (prerequisite.flag_key === flag.key) throw new FlagPrerequisiteCycleError([flag.key])
    return {
      flagKey: prerequisite.flag_key,
      variation: prerequisite.variation,
      failResult: makeResult(offValue, flag.off_variation, 'PREREQUISITE_FAIL', {
        prerequisite_key: prerequisite.flag_key,
        metadata,
      }),
    }
  })

  const targets = new Map<string, ResolutionDetails>()
  for (const [variation, keys] of Object.entries(flag.targets)) {
    const result = makeResult(
      valueOf(variation, `/targets/${variation}`),
      variation,
      'TARGET_MATCH',
      { metadata },
    )
    keys.forEach((contextKey, index) => {
      const previous = targets.get(contextKey)
      if (previous !== undefined && previous.variation !== variation)
        invalid(
          `/targets/${variation}/${index}`,
          `lists ${JSON.stringify(contextKey)}, already targeted to ${String(previous.variation)}`,
        )
      targets.set(contextKey, result)
    })
  }

  const ruleIds = new Set<string>()
  const rules = flag.rules.map((rule, index): CompiledRule => {
    const path = `/rules/${index}`
    if (ruleIds.has(rule.id)) invalid(`${path}/id`, `repeats the rule id ${rule.id}`)
    ruleIds.add(rule.id)
    const hasVariation = rule.variation !== null
    if (hasVariation === (rule.rollout !== null))
      invalid(path, 'must have exactly one of variation and rollout')
    const resultOf = (variation: string, at: string) =>
      makeResult(valueOf(variation, at), variation, 'RULE_MATCH', { rule_id: rule.id, metadata })
    return {
      clauses: rule.clauses.map((clause, at) => compileClause(clause, `${path}/clauses/${at}`)),
      result: rule.variation === null ? null : resultOf(rule.variation, `${path}/variation`),
      rollout:
        rule.rollout === null ? null : compileRollout(rule.rollout, `${path}/rollout`, resultOf),
    }
  })

  const fallthroughOf = (variation: string, at: string) =>
    makeResult(valueOf(variation, at), variation, 'FALLTHROUGH', { metadata })
  const fallthrough: CompiledServe =
    typeof flag.fallthrough === 'string'
      ? { result: fallthroughOf(flag.fallthrough, '/fallthrough'), rollout: null }
      : { result: null, rollout: compileRollout(flag.fallthrough, '/fallthrough', fallthroughOf) }

  const hasRollout = fallthrough.rollout !== null || rules.some((rule) => rule.rollout !== null)
  if (fallthrough.result !== null && prerequisites.length + targets.size + rules.length === 0)
    staticResults.add(fallthrough.result)
  return {
    flag,
    key: flag.key,
    type: flag.type,
    enabled: flag.enabled,
    offResult,
    prerequisites,
    targets,
    rules,
    fallthrough,
    bucketPrefix: bucketPrefix(`${flag.key}:`),
    userBucketPrefix: bucketPrefix(`${flag.key}:user:`),
    bucketCache: hasRollout ? new Map() : null,
  }
}

/** Compiles a (structurally valid, normalised) segment; throws {@link ValidationError}. */
export function compileSegment(segment: Segment): CompiledSegment {
  const rules = segment.rules.map((rule, index) =>
    rule.clauses.map((clause, at) => {
      const path = `/rules/${index}/clauses/${at}`
      if (clause.operator === 'in_segment' || clause.operator === 'not_in_segment')
        throw new ValidationError(
          `Invalid segment: ${path} uses ${clause.operator}; segments cannot nest.`,
          {
            details: [{ field: `${path}/operator`, message: 'segments cannot reference segments' }],
          },
        )
      return compileClause(clause, path)
    }),
  )
  return {
    segment,
    included: new Set(segment.included),
    excluded: new Set(segment.excluded),
    rules,
  }
}
