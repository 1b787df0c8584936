/**
 * The flag evaluator: pure, synchronous, no I/O, never throws.
 *
 * Order (docs/feature-flags.md, "Evaluation"): 1. disabled → off_variation, OFF; 2. prerequisites in list order, depth ≤ 10 —
 * the first one that does not serve its required variation → off_variation,
 * PREREQUISITE_FAIL; 3. individual targets → TARGET_MATCH; 4. rules top to bottom, first
 * match → RULE_MATCH; 5. fallthrough → FALLTHROUGH. Prerequisites come first so that a
 * dependent flag can never be on, even for targeted keys, while what it depends on is off.
 *
 * Results are the frozen objects prepared by `compile.ts`; a successful evaluation allocates
 * nothing. An unknown flag gives DEFAULT, anything unexpected gives ERROR; both carry a null
 * value that the caller replaces with its default.
 */
import { bucketFor, bucketForKey, pickRolloutIndex } from './bucketing.js'
import type {
  CompiledClause,
  CompiledFlag,
  CompiledRollout,
  CompiledSegment,
  CompiledServe,
} from './compile.js'
import { makeResult } from './compile.js'
import { MAX_PREREQUISITE_DEPTH, type EvaluationContext, type ResolutionDetails } from './model.js'

/** The compiled flags and segments an evaluation reads (the replica). */
export interface FlagSnapshot {
  readonly flags: ReadonlyMap<string, CompiledFlag>
  readonly segments: ReadonlyMap<string, CompiledSegment>
}

/** Result for an unknown flag key: DEFAULT, caller's default (null here). */
export const FLAG_NOT_FOUND_RESULT = makeResult(null, null, 'DEFAULT', {
  error_code: 'FLAG_NOT_FOUND',
  error_message: 'flag not found',
})
const DEPTH_EXCEEDED = makeResult(null, null, 'ERROR', {
  error_code: 'GENERAL',
  error_message: `prerequisite chain deeper than ${MAX_PREREQUISITE_DEPTH}`,
})
const KEY_MISSING = makeResult(null, null, 'ERROR', {
  error_code: 'TARGETING_KEY_MISSING',
  error_message: 'a percentage rollout needs a context key',
})
const EMPTY_CONTEXT = Object.freeze({}) as EvaluationContext
const BUCKET_CACHE_LIMIT = 2048

/** Evaluates the flag `key` for `context`; DEFAULT when the snapshot has no such flag. */
export function evaluateFlag(
  snapshot: FlagSnapshot,
  key: string,
  context: EvaluationContext | null | undefined,
): ResolutionDetails {
  const flag = snapshot.flags.get(key)
  if (flag === undefined) return FLAG_NOT_FOUND_RESULT
  return evaluateCompiled(snapshot, flag, context ?? EMPTY_CONTEXT, 0)
}

/** Evaluates a compiled flag at prerequisite `depth` (0 for the flag asked for). Never throws. */
export function evaluateCompiled(
  snapshot: FlagSnapshot,
  flag: CompiledFlag,
  context: EvaluationContext,
  depth: number,
): ResolutionDetails {
  try {
    return evaluateSteps(snapshot, flag, context, depth)
  } catch (error) {
    return makeResult(null, null, 'ERROR', { error_code: 'GENERAL', error_message: String(error) })
  }
}

function evaluateSteps(
  snapshot: FlagSnapshot,
  flag: CompiledFlag,
  context: EvaluationContext,
  depth: number,
): ResolutionDetails {
  if (!flag.enabled) return flag.offResult

  const prerequisites = flag.prerequisites
  for (let index = 0; index < prerequisites.length; index++) {
    const prerequisite = prerequisites[index] as (typeof prerequisites)[number]
    if (depth >= MAX_PREREQUISITE_DEPTH) return DEPTH_EXCEEDED
    const required = snapshot.flags.get(prerequisite.flagKey)
    if (required === undefined) return prerequisite.failResult
    const result = evaluateCompiled(snapshot, required, context, depth + 1)
    if (result.reason === 'ERROR') return result
    if (result.variation !== prerequisite.variation) return prerequisite.failResult
  }

  const key = context.key
  if (typeof key === 'string' && flag.targets.size > 0) {
    const targeted = flag.targets.get(key)
    if (targeted !== undefined) return targeted
  }

  const rules = flag.rules
  for (let index = 0; index < rules.length; index++) {
    const rule = rules[index] as (typeof rules)[number]
    if (clausesMatch(snapshot, rule.clauses, context)) return serve(flag, rule, context)
  }
  return serve(flag, flag.fallthrough, context)
}

function serve(
  flag: CompiledFlag,
  what: CompiledServe,
  context: EvaluationContext,
): ResolutionDetails {
  if (what.result !== null) return what.result
  return serveRollout(flag, what.rollout as CompiledRollout, context)
}

function serveRollout(
  flag: CompiledFlag,
  rollout: CompiledRollout,
  context: EvaluationContext,
): ResolutionDetails {
  const key = context.key
  if (typeof key !== 'string') return KEY_MISSING
  const rawKind: unknown = context.kind
  const kind =
    typeof rawKind === 'string' ? rawKind : rawKind == null ? 'user' : JSON.stringify(rawKind)
  let bucket: number | undefined
  const cache = flag.bucketCache
  // Only the default kind is cached, so the cache key is the context key itself (no concatenation).
  if (cache !== null && kind === 'user') {
    bucket = cache.get(key)
    if (bucket === undefined) {
      bucket = bucketForKey(flag.userBucketPrefix, key)
      if (cache.size >= BUCKET_CACHE_LIMIT) cache.clear()
      cache.set(key, bucket)
    }
  } else {
    bucket = bucketFor(flag.bucketPrefix, kind, key)
  }
  return rollout.results[pickRolloutIndex(rollout.cumulative, bucket)] as ResolutionDetails
}

/** True when every clause matches (an empty list matches). */
export function clausesMatch(
  snapshot: FlagSnapshot,
  clauses: readonly CompiledClause[],
  context: EvaluationContext,
): boolean {
  for (let index = 0; index < clauses.length; index++) {
    if (!clauseMatches(snapshot, clauses[index] as CompiledClause, context)) return false
  }
  return true
}

function clauseMatches(
  snapshot: FlagSnapshot,
  clause: CompiledClause,
  context: EvaluationContext,
): boolean {
  let matched: boolean
  if (clause.test === null) {
    matched = inAnySegment(snapshot, clause.segments ?? [], context)
  } else {
    const value = clause.read(context)
    if (value === undefined || value === null) matched = false
    else if (Array.isArray(value)) matched = value.some(clause.test)
    else matched = clause.test(value)
  }
  if (clause.complement) matched = !matched
  return clause.negate ? !matched : matched
}

function inAnySegment(
  snapshot: FlagSnapshot,
  keys: readonly string[],
  context: EvaluationContext,
): boolean {
  for (let index = 0; index < keys.length; index++) {
    const segment = snapshot.segments.get(keys[index] as string)
    if (segment !== undefined && isSegmentMember(snapshot, segment, context)) return true
  }
  return false
}

/**
 * Segment membership, in this order: excluded → not a member; included → member; any
 * rule matches → member; otherwise not. A segment that is unknown (deleted, or not yet
 * replicated) has no members.
 */
export function isSegmentMember(
  snapshot: FlagSnapshot,
  segment: CompiledSegment,
  context: EvaluationContext,
): boolean {
  const key = context.key
  if (typeof key === 'string') {
    if (segment.excluded.has(key)) return false
    if (segment.included.has(key)) return true
  }
  const rules = segment.rules
  for (let index = 0; index < rules.length; index++) {
    if (clausesMatch(snapshot, rules[index] as readonly CompiledClause[], context)) return true
  }
  return false
}
