/**
 * The flags and segments part of a plan. Every entry is normalised and compiled as a write
 * would be, then the references of the flags as they will be after the whole document is
 * applied (prerequisites, segments, cycles, depth) are checked together, so a document that
 * adds a segment and the flag using it is valid while one that prunes a segment a kept flag
 * uses is not.
 *
 * Writes run in an order each step accepts on its own: segments first, then flags with their
 * prerequisites before them, then deletions of flags (dependents first) and of segments.
 */
import { isDeepStrictEqual } from 'node:util'
import { auditDiff } from '../core/audit-diff.js'
import { compileFlag, compileSegment } from '../flags/compile.js'
import type { Flag, Segment } from '../flags/model.js'
import type { FlagService } from '../flags/service.js'
import {
  checkPatterns,
  checkPrerequisiteGraph,
  checkReferences,
  normalizeFlag,
  normalizeSegment,
} from '../flags/validate.js'
import type { ConfigDocument } from './document.js'
import { flagForm, segmentForm } from './forms.js'
import type { PlanStep } from './plan-types.js'
import type { Problems } from './problems.js'

/** What the flag part of a plan works on. */
export interface FlagPlanInput {
  flags: FlagService | undefined
  doc: ConfigDocument
  prune: boolean
  now: number
  problems: Problems
}

type Entry = Record<string, unknown> & { key: string }

/** Plans the `flags` and `segments` sections; resolves the steps in the order they must run. */
export async function planFlags(input: FlagPlanInput): Promise<PlanStep[]> {
  const { doc, problems } = input
  if (doc.flags === undefined && doc.segments === undefined) return []
  const service = input.flags
  if (service === undefined) {
    for (const section of ['flags', 'segments'] as const)
      if ((doc[section]?.length ?? 0) > 0)
        problems.add(`/${section}`, 'the flag subsystem is not available on this server')
    return []
  }
  const stamp = { now: input.now, actor: 'system' }
  const existingFlags = new Map((await service.listFlags()).map((flag) => [flag.key, flag]))
  const existingSegments = new Map(
    (await service.listSegments()).map((segment) => [segment.key, segment]),
  )

  const segmentIndex = indexEntries(doc.segments, 'segments', problems)
  const desiredSegments = new Map<string, Segment>()
  for (const [key, index] of segmentIndex) {
    const entry = doc.segments?.[index] as Entry
    const existing = existingSegments.get(key) ?? null
    try {
      const segment = await normalizeSegment(withRuleIds(entry, existing), stamp, existing)
      compileSegment(segment)
      checkPatterns(segment.rules)
      desiredSegments.set(key, segment)
    } catch (error) {
      problems.fromError(`/segments/${index}`, error)
    }
  }
  const flagIndex = indexEntries(doc.flags, 'flags', problems)
  const desiredFlags = new Map<string, Flag>()
  for (const [key, index] of flagIndex) {
    const entry = doc.flags?.[index] as Entry
    const existing = existingFlags.get(key) ?? null
    try {
      const flag = await normalizeFlag(withRuleIds(entry, existing), stamp, existing)
      compileFlag(flag)
      checkPatterns(flag.rules)
      desiredFlags.set(key, flag)
    } catch (error) {
      problems.fromError(`/flags/${index}`, error)
    }
  }

  // The records as they will be once the document is applied.
  const pruneFlags = input.prune && doc.flags !== undefined
  const pruneSegments = input.prune && doc.segments !== undefined
  const targetSegments = new Map(existingSegments)
  const deletedSegments = pruneSegments
    ? [...existingSegments.keys()].filter((key) => !segmentIndex.has(key))
    : []
  for (const key of deletedSegments) targetSegments.delete(key)
  for (const [key, segment] of desiredSegments) targetSegments.set(key, segment)
  const targetFlags = new Map(existingFlags)
  const deletedFlags = pruneFlags
    ? [...existingFlags.keys()].filter((key) => !flagIndex.has(key))
    : []
  for (const key of deletedFlags) targetFlags.delete(key)
  for (const [key, flag] of desiredFlags) targetFlags.set(key, flag)
  const segmentKeys = new Set(targetSegments.keys())
  for (const [key, flag] of targetFlags) {
    const index = flagIndex.get(key)
    // An entry that failed its own checks has said what is wrong with it already.
    if (index !== undefined && !desiredFlags.has(key)) continue
    const base = index === undefined ? '/flags' : `/flags/${index}`
    const prefix = index === undefined ? `flag ${key} (kept, not in the document)` : undefined
    try {
      checkReferences(flag, targetFlags, segmentKeys)
      checkPrerequisiteGraph(flag, targetFlags)
    } catch (error) {
      problems.fromError(base, error, prefix === undefined ? {} : { prefix, field: base })
    }
  }

  const steps: PlanStep[] = []
  for (const [key, segment] of desiredSegments) {
    const current = existingSegments.get(key)
    const form = segmentForm(segment)
    if (current !== undefined && isDeepStrictEqual(segmentForm(current), form)) continue
    steps.push({
      change: {
        op: current === undefined ? 'create' : 'update',
        kind: 'segment',
        key,
        ...diffOf(current === undefined ? undefined : segmentForm(current), form),
      },
      run: (actor) => service.saveSegment(form, actor),
    })
  }
  const changedFlags = [...desiredFlags.values()].filter((flag) => {
    const current = existingFlags.get(flag.key)
    return current === undefined || !isDeepStrictEqual(flagForm(current), flagForm(flag))
  })
  for (const flag of prerequisitesFirst(changedFlags, targetFlags)) {
    const current = existingFlags.get(flag.key)
    const form = flagForm(flag)
    steps.push({
      change: {
        op: current === undefined ? 'create' : 'update',
        kind: 'flag',
        key: flag.key,
        ...diffOf(current === undefined ? undefined : flagForm(current), form),
      },
      run: (actor) => service.saveFlag(form, actor),
    })
  }
  const doomed = deletedFlags.flatMap((key) => existingFlags.get(key) ?? [])
  for (const flag of prerequisitesFirst(doomed, existingFlags).reverse()) {
    steps.push({
      change: { op: 'delete', kind: 'flag', key: flag.key },
      run: (actor) => service.deleteFlag(flag.key, actor),
    })
  }
  for (const key of deletedSegments) {
    steps.push({
      change: { op: 'delete', kind: 'segment', key },
      run: (actor) => service.deleteSegment(key, actor),
    })
  }
  return steps
}

/** The entries' keys and their indexes; a key given twice is a problem. */
function indexEntries(
  entries: readonly { key: string }[] | undefined,
  section: string,
  problems: Problems,
): Map<string, number> {
  const index = new Map<string, number>()
  ;(entries ?? []).forEach((entry, at) => {
    if (index.has(entry.key))
      problems.add(
        `/${section}/${at}/key`,
        `${entry.key} is already given at /${section}/${String(index.get(entry.key))}`,
      )
    else index.set(entry.key, at)
  })
  return index
}

/**
 * The entry with the ids of its rules (and a flag's scheduled changes) taken from the record
 * it replaces, position by position, where the entry gives none: an id would otherwise be
 * generated anew by every apply, and a document without ids would never be applied.
 */
function withRuleIds(entry: Entry, existing: Flag | Segment | null): Entry {
  if (existing === null) return entry
  const copy = structuredClone(entry)
  fillIds(copy.rules, existing.rules)
  if ('scheduled_changes' in existing) fillIds(copy.scheduled_changes, existing.scheduled_changes)
  return copy
}

function fillIds(list: unknown, existing: readonly { id: string }[]): void {
  if (!Array.isArray(list)) return
  list.forEach((item: unknown, index) => {
    const id = existing[index]?.id
    if (id !== undefined && item !== null && typeof item === 'object' && !Object.hasOwn(item, 'id'))
      (item as { id?: string }).id = id
  })
}

/** The flags ordered so that each comes after the ones among them it requires. */
function prerequisitesFirst(flags: readonly Flag[], all: ReadonlyMap<string, Flag>): Flag[] {
  const pending = new Map(flags.map((flag) => [flag.key, flag]))
  const ordered: Flag[] = []
  const visiting = new Set<string>()
  const visit = (flag: Flag): void => {
    if (!pending.has(flag.key) || visiting.has(flag.key)) return
    visiting.add(flag.key)
    for (const prerequisite of (all.get(flag.key) ?? flag).prerequisites) {
      const required = pending.get(prerequisite.flag_key)
      if (required !== undefined) visit(required)
    }
    pending.delete(flag.key)
    ordered.push(flag)
  }
  for (const flag of flags) visit(flag)
  return ordered
}

function diffOf(
  before: object | undefined,
  after: object,
): { diff?: Record<string, [unknown, unknown]> } {
  if (before === undefined) return {}
  const diff = auditDiff(before, after)
  return diff === undefined ? {} : { diff }
}
