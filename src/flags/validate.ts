/**
 * Validation of writes: structural checks against the TypeBox input schemas, normalisation
 * (defaults, rule ids, timestamps), and the checks that need other records — prerequisite
 * flags and their variations, segments named by `in_segment`, prerequisite cycles and the
 * depth limit. Every check runs before anything is stored, so a rejected write changes nothing.
 */
import { randomUUID } from 'node:crypto'
import { jsonDepthExceeds, MAX_JSON_DEPTH } from '../common/json-depth.js'
import { ValidationError } from '../core/errors.js'
import { parseDateTime, toIso } from '../core/time.js'
import { FlagPrerequisiteCycleError } from './errors.js'
import { compilePattern } from './linear-regex.js'
import {
  FLAG_METADATA_LIMITS,
  MAX_PREREQUISITE_DEPTH,
  RESERVED_METADATA_PREFIX,
  segmentsOf,
  type Clause,
  type Flag,
  type FlagInput,
  type Segment,
  type SegmentInput,
  type ScheduledChange,
} from './model.js'

let checks: Promise<typeof import('./input-check.js')> | null = null

/** The compiled input checks, loaded with the first write (TypeBox stays off the start-up path). */
function inputChecks(): Promise<typeof import('./input-check.js')> {
  checks ??= import('./input-check.js')
  return checks
}

/** Fields a merge patch (PATCH or a scheduled `update`) may not change. */
const IMMUTABLE_FIELDS = ['key', 'type'] as const

function schemaError(
  what: string,
  errors: readonly { instancePath: string; message: string }[],
): ValidationError {
  // anyOf failures list one error per branch; keep the first message per field.
  const seen = new Set<string>()
  const details = errors
    .filter((error) => !seen.has(error.instancePath) && seen.add(error.instancePath))
    .map((error) => ({ field: error.instancePath || '/', message: error.message }))
  const first = details[0]
  const summary = first === undefined ? 'invalid' : `${first.field} ${first.message}`
  return new ValidationError(`Invalid ${what}: ${summary}.`, { details })
}

/**
 * Rejects input nested deeper than {@link MAX_JSON_DEPTH} (a JSON variation value, a merge
 * patch) before anything walks it recursively and overflows the stack.
 */
export function checkDepth(input: unknown, what: string): void {
  if (jsonDepthExceeds(input, MAX_JSON_DEPTH))
    throw new ValidationError(`Invalid ${what}: nested deeper than ${MAX_JSON_DEPTH} levels.`, {
      details: [{ field: '/', message: `nested deeper than ${MAX_JSON_DEPTH} levels` }],
    })
}

/** Who writes and when, for the timestamps of a normalised record. */
export interface WriteStamp {
  /** Epoch milliseconds. */
  now: number
  actor: string
}

/** Checks a flag input against the schema and fills every default. Throws {@link ValidationError}. */
export async function normalizeFlag(
  input: unknown,
  stamp: WriteStamp,
  existing: Flag | null,
): Promise<Flag> {
  checkDepth(input, 'flag')
  const { flagInputCheck } = await inputChecks()
  if (!flagInputCheck.Check(input)) throw schemaError('flag', flagInputCheck.Errors(input))
  const flag: FlagInput = input
  const now = toIso(stamp.now)
  return {
    key: flag.key,
    name: flag.name,
    description: flag.description ?? '',
    type: flag.type,
    tags: [...(flag.tags ?? [])],
    variations: flag.variations.map((variation) => ({
      name: variation.name,
      value: structuredClone(variation.value),
      description: variation.description ?? '',
    })),
    off_variation: flag.off_variation,
    fallthrough:
      typeof flag.fallthrough === 'string'
        ? flag.fallthrough
        : flag.fallthrough.map((entry) => ({ ...entry })),
    enabled: flag.enabled ?? true,
    prerequisites: (flag.prerequisites ?? []).map((prerequisite) => ({ ...prerequisite })),
    targets: Object.fromEntries(
      Object.entries(flag.targets ?? {}).map(([variation, keys]) => [variation, [...keys]]),
    ),
    rules: (flag.rules ?? []).map((rule) => ({
      id: rule.id ?? randomUUID(),
      description: rule.description ?? '',
      clauses: rule.clauses.map((clause) => ({
        ...clause,
        values: structuredClone(clause.values),
        negate: clause.negate ?? false,
      })),
      variation: rule.variation ?? null,
      rollout: rule.rollout?.map((entry) => ({ ...entry })) ?? null,
      track_events: rule.track_events ?? false,
    })),
    scheduled_changes: (flag.scheduled_changes ?? []).map(normalizeScheduledChange),
    status: flag.status ?? 'ACTIVE',
    temporary: flag.temporary ?? true,
    maintainer: flag.maintainer ?? null,
    metadata: normalizeMetadata(flag.metadata),
    created_at: existing?.created_at ?? now,
    updated_at: now,
    created_by: existing?.created_by ?? flag.created_by ?? stamp.actor,
  }
}

/**
 * Checks what the schema cannot say about a flag's metadata (key length, the reserved prefix,
 * finite numbers) and returns a copy. The path of the first bad entry is `/metadata/<key>`.
 */
function normalizeMetadata(
  metadata: FlagInput['metadata'],
): Record<string, string | number | boolean> {
  // Defined through fromEntries, never assigned: a key such as `__proto__` stays an entry.
  const entries: [string, string | number | boolean][] = []
  for (const [key, value] of Object.entries(metadata ?? {})) {
    const field = `/metadata/${key}`
    let problem: string | null = null
    if (key.length === 0 || key.length > FLAG_METADATA_LIMITS.maxKeyLength)
      problem = `key must have 1 to ${FLAG_METADATA_LIMITS.maxKeyLength} characters`
    else if (key.startsWith(RESERVED_METADATA_PREFIX))
      problem = `keys starting with "${RESERVED_METADATA_PREFIX}" are reserved for switchyard`
    else if (typeof value === 'number' && !Number.isFinite(value))
      problem = 'must be a finite number'
    if (problem !== null)
      throw new ValidationError(`Invalid flag: ${field} ${problem}.`, {
        details: [{ field, message: problem }],
      })
    entries.push([key, value])
  }
  return Object.fromEntries(entries)
}

function normalizeScheduledChange(
  change: NonNullable<FlagInput['scheduled_changes']>[number],
  index: number,
): ScheduledChange {
  const path = `/scheduled_changes/${index}`
  const at = toIso(parseDateTime(change.at, `${path}/at`))
  const patch = change.patch ?? undefined
  if (change.action === 'update') {
    if (patch === undefined)
      throw new ValidationError(`Invalid flag: ${path} is an update without a patch.`, {
        details: [{ field: `${path}/patch`, message: 'required when action is update' }],
      })
    for (const field of [...IMMUTABLE_FIELDS, 'scheduled_changes'])
      if (Object.hasOwn(patch, field))
        throw new ValidationError(`Invalid flag: ${path}/patch may not change ${field}.`, {
          details: [{ field: `${path}/patch/${field}`, message: 'cannot be changed by a patch' }],
        })
  } else if (patch !== undefined) {
    throw new ValidationError(`Invalid flag: ${path} has a patch but action ${change.action}.`, {
      details: [{ field: `${path}/patch`, message: 'only allowed when action is update' }],
    })
  }
  return {
    id: change.id ?? randomUUID(),
    at,
    action: change.action,
    patch: patch === undefined ? null : structuredClone(patch),
  }
}

/** Checks a segment input against the schema and fills every default. */
export async function normalizeSegment(
  input: unknown,
  stamp: WriteStamp,
  existing: Segment | null,
): Promise<Segment> {
  checkDepth(input, 'segment')
  const { segmentInputCheck } = await inputChecks()
  if (!segmentInputCheck.Check(input)) throw schemaError('segment', segmentInputCheck.Errors(input))
  const segment: SegmentInput = input
  const now = toIso(stamp.now)
  // The lists may overlap: membership checks `excluded` first, so an excluded key is out even
  // when it is also included (a way to carve exceptions out of a long include list).
  const included = new Set(segment.included ?? [])
  return {
    key: segment.key,
    name: segment.name,
    description: segment.description ?? '',
    included: [...included],
    excluded: [...new Set(segment.excluded ?? [])],
    rules: (segment.rules ?? []).map((rule) => ({
      id: rule.id ?? randomUUID(),
      description: rule.description ?? '',
      clauses: rule.clauses.map((clause) => ({
        ...clause,
        values: structuredClone(clause.values),
        negate: clause.negate ?? false,
      })),
    })),
    tags: [...(segment.tags ?? [])],
    created_at: existing?.created_at ?? now,
    updated_at: now,
  }
}

/** Rejects a patch that changes an immutable field (`key`, `type`). */
export function checkImmutable(before: Flag, after: Record<string, unknown>): void {
  for (const field of IMMUTABLE_FIELDS) {
    if (after[field] !== before[field])
      throw new ValidationError(`Invalid patch: ${field} cannot change.`, {
        details: [{ field: `/${field}`, message: 'cannot be changed' }],
      })
  }
}

/**
 * Checks a flag's references against the other records: every prerequisite names an existing
 * flag and one of its variations; every segment named by a clause exists.
 */
export function checkReferences(
  flag: Flag,
  flags: ReadonlyMap<string, Flag>,
  segments: ReadonlySet<string>,
): void {
  flag.prerequisites.forEach((prerequisite, index) => {
    const required = flags.get(prerequisite.flag_key)
    const path = `/prerequisites/${index}`
    if (required === undefined)
      throw new ValidationError(
        `Invalid flag: prerequisite ${JSON.stringify(prerequisite.flag_key)} does not exist.`,
        { details: [{ field: `${path}/flag_key`, message: 'names no flag' }] },
      )
    if (!required.variations.some((variation) => variation.name === prerequisite.variation))
      throw new ValidationError(
        `Invalid flag: prerequisite ${prerequisite.flag_key} has no variation ${JSON.stringify(prerequisite.variation)}.`,
        { details: [{ field: `${path}/variation`, message: 'names no variation of that flag' }] },
      )
  })
  for (const key of segmentsOf(flag)) {
    if (!segments.has(key))
      throw new ValidationError(`Invalid flag: segment ${JSON.stringify(key)} does not exist.`, {
        details: [{ field: '/rules', message: `in_segment names the unknown segment ${key}` }],
      })
  }
}

/**
 * Checks the prerequisite graph after `flag` replaces its previous version: throws
 * {@link FlagPrerequisiteCycleError} naming the cycle (`[a, b, a]`) when the write closes one,
 * and {@link ValidationError} when a chain through the flag would exceed the depth limit.
 * The graph without the write is acyclic (every earlier write passed this check), so any new
 * cycle passes through `flag`.
 */
export function checkPrerequisiteGraph(flag: Flag, flags: ReadonlyMap<string, Flag>): void {
  const edges = (key: string): string[] =>
    (key === flag.key ? flag : flags.get(key))?.prerequisites.map((p) => p.flag_key) ?? []

  const path: string[] = [flag.key]
  const visited = new Set<string>()
  const findBack = (key: string): boolean => {
    for (const next of edges(key)) {
      if (next === flag.key) {
        path.push(next)
        return true
      }
      if (visited.has(next)) continue
      visited.add(next)
      path.push(next)
      if (findBack(next)) return true
      path.pop()
    }
    return false
  }
  if (findBack(flag.key)) throw new FlagPrerequisiteCycleError(path)

  const down = new Map<string, string[]>()
  const longestDown = (key: string): string[] => {
    const known = down.get(key)
    if (known !== undefined) return known
    let best: string[] = [key]
    for (const next of edges(key)) {
      const chain = longestDown(next)
      if (chain.length + 1 > best.length) best = [key, ...chain]
    }
    down.set(key, best)
    return best
  }
  const dependents = new Map<string, string[]>()
  for (const other of [...flags.values(), flag]) {
    if (other.key === flag.key && other !== flag) continue
    for (const prerequisite of other.prerequisites) {
      const list = dependents.get(prerequisite.flag_key) ?? []
      list.push(other.key)
      dependents.set(prerequisite.flag_key, list)
    }
  }
  const up = new Map<string, string[]>()
  const longestUp = (key: string): string[] => {
    const known = up.get(key)
    if (known !== undefined) return known
    let best: string[] = [key]
    for (const previous of dependents.get(key) ?? []) {
      const chain = longestUp(previous)
      if (chain.length + 1 > best.length) best = [...chain, key]
    }
    up.set(key, best)
    return best
  }
  const chain = [...longestUp(flag.key), ...longestDown(flag.key).slice(1)]
  const depth = chain.length - 1
  if (depth > MAX_PREREQUISITE_DEPTH)
    throw new ValidationError(
      `Invalid flag: prerequisite chain ${chain.join(' -> ')} has depth ${depth}; the limit is ${MAX_PREREQUISITE_DEPTH}.`,
      {
        details: [
          {
            field: '/prerequisites',
            message: `chain depth ${depth} exceeds ${MAX_PREREQUISITE_DEPTH}`,
          },
        ],
      },
    )
}

/** A `matches` / `not_matches` pattern the linear-time engine refuses, and why. */
export interface PatternRefusal {
  /** JSON pointer of the value: `/rules/<i>/clauses/<j>/values/<k>`. */
  readonly field: string
  /** Follows "the regular expression": "uses a backreference (\1), which …". */
  readonly reason: string
}

/**
 * Every regular expression of the rules' `matches` / `not_matches` clauses that the
 * linear-time engine refuses (see linear-regex.ts), in rule, clause and value order.
 */
export function patternRefusals(
  rules: readonly { clauses: readonly Clause[] }[],
): PatternRefusal[] {
  const refusals: PatternRefusal[] = []
  rules.forEach((rule, ruleIndex) => {
    rule.clauses.forEach((clause, clauseIndex) => {
      if (clause.operator !== 'matches' && clause.operator !== 'not_matches') return
      clause.values.forEach((value, valueIndex) => {
        if (typeof value !== 'string') return // compileClause names the wrong type
        const { refusal } = compilePattern(value)
        if (refusal !== null)
          refusals.push({
            field: `/rules/${ruleIndex}/clauses/${clauseIndex}/values/${valueIndex}`,
            reason: refusal,
          })
      })
    })
  })
  return refusals
}

/**
 * Checks that the linear-time engine can run every regular expression of a flag's or
 * segment's `matches` / `not_matches` clauses; throws {@link ValidationError} naming the first
 * refused value (`/rules/<i>/clauses/<j>/values/<k>`) and the construct at fault.
 */
export function checkPatterns(rules: readonly { clauses: readonly Clause[] }[]): void {
  const [first] = patternRefusals(rules)
  if (first === undefined) return
  const message = `the regular expression ${first.reason}`
  throw new ValidationError(`Invalid clause values at ${first.field}: ${message}.`, {
    details: [{ field: first.field, message }],
  })
}
