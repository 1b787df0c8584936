/**
 * How `ctl` prints what a change did: an audit entry's `diff`, or the fields one flag version
 * changed, as `field: before → after` (each value shortened, so a table row stays readable; the
 * whole values are in `--json`).
 */

/** Longest printed value, in characters. */
const VALUE_WIDTH = 40

/** One value as printed: strings bare (`""` when empty), anything else as JSON, shortened. */
export function shortValue(value: unknown): string {
  const text =
    typeof value === 'string'
      ? value === ''
        ? '""'
        : value
      : ((JSON.stringify(value) as string | undefined) ?? 'null')
  return text.length <= VALUE_WIDTH ? text : `${text.slice(0, VALUE_WIDTH - 1)}…`
}

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
