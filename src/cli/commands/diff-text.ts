/**
 * How `ctl` prints what a change did: an audit entry's `diff`, or the fields one flag version
 * changed, as `field: before → after` (each value shortened, so a table row stays readable; the
 * whole values are in `--json`).
 */
import { shortDiffValue } from '../../core/audit-diff.js'

/** One value as printed (see {@link shortDiffValue}). */
const shortValue = (value: unknown): string => shortDiffValue(value)

/** `field: before → after, …` for a diff, or empty when there is none. */
export function diffText(diff: Readonly<Record<string, readonly unknown[]>> | undefined): string {
  if (diff === undefined) return ''
  return Object.entries(diff)
    .map(([field, [before, after]]) =>
      field === '…'
        ? `(${String(before)} more)`
        : `${field}: ${shortValue(before)} → ${shortValue(after)}`,
    )
    .join(', ')
}
