/**
 * The `diff` of an audit entry: what an update changed, as `{<field>: [before, after]}` over
 * the top-level fields of the record, only those whose values differ (nested objects and
 * arrays are compared by value, so a rebuilt but equal rule list is no change).
 *
 * Why it is bounded: entries are kept in every store and sent over webhooks, and a flag's
 * rules or a segment's member list can be large. A value whose JSON is longer than
 * {@link DIFF_VALUE_LIMIT} characters is replaced by that JSON cut to the limit and ended
 * with `…`; at most {@link DIFF_FIELD_LIMIT} fields are kept (in field order), the rest are
 * counted under `…` as `[n, null]` — `n` fields left out.
 */
import { isDeepStrictEqual } from 'node:util'

/** Changed fields of a record: each one's value before and after the update. */
export type AuditDiff = Record<string, [unknown, unknown]>

/** Longest JSON text of one kept value, in characters. */
export const DIFF_VALUE_LIMIT = 1000

/** Most fields one diff keeps. */
export const DIFF_FIELD_LIMIT = 50

/** The key under which a cut diff counts the fields it left out. */
export const DIFF_OMITTED_KEY = '…'

/**
 * The changed top-level fields between `before` and `after` (a field absent on one side is
 * `null` there). Fields named in `ignore` (bookkeeping such as `updated_at`) never appear.
 * Returns undefined when nothing differs, so callers can leave the field out of the entry.
 */
export function auditDiff(
  before: object | null | undefined,
  after: object | null | undefined,
  ignore: readonly string[] = [],
): AuditDiff | undefined {
  const old = (before ?? {}) as Record<string, unknown>
  const next = (after ?? {}) as Record<string, unknown>
  const fields = new Set([...Object.keys(old), ...Object.keys(next)])
  const diff: AuditDiff = {}
  let kept = 0
  let omitted = 0
  for (const field of fields) {
    if (ignore.includes(field)) continue
    const from = Object.hasOwn(old, field) ? (old[field] ?? null) : null
    const to = Object.hasOwn(next, field) ? (next[field] ?? null) : null
    if (isDeepStrictEqual(from, to)) continue
    if (kept === DIFF_FIELD_LIMIT) {
      omitted += 1
      continue
    }
    diff[field] = [bounded(from), bounded(to)]
    kept += 1
  }
  if (omitted > 0) diff[DIFF_OMITTED_KEY] = [omitted, null]
  return kept === 0 ? undefined : diff
}

/**
 * One diff value as a short text for a table cell: strings bare (`""` when empty), anything
 * else as JSON, cut to `width` characters with `…`.
 */
export function shortDiffValue(value: unknown, width = 40): string {
  const text =
    typeof value === 'string'
      ? value === ''
        ? '""'
        : value
      : ((JSON.stringify(value) as string | undefined) ?? 'null')
  return text.length <= width ? text : `${text.slice(0, width - 1)}…`
}

/** `{diff}` to spread into an operation, or nothing when there is no diff. */
export function diffField(diff: AuditDiff | undefined): { diff?: AuditDiff } {
  return diff === undefined ? {} : { diff }
}

/**
 * `value` as JSON would carry it (a function or undefined becomes null), or — past
 * {@link DIFF_VALUE_LIMIT} characters — the string, or the JSON text, cut and ended with `…`.
 */
function bounded(value: unknown): unknown {
  if (typeof value === 'string')
    return value.length <= DIFF_VALUE_LIMIT ? value : `${value.slice(0, DIFF_VALUE_LIMIT)}…`
  const text = JSON.stringify(value) as string | undefined
  if (text === undefined) return null
  return text.length <= DIFF_VALUE_LIMIT ? JSON.parse(text) : `${text.slice(0, DIFF_VALUE_LIMIT)}…`
}
