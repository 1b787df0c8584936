/**
 * Time arguments of `ctl`: `--until` durations (`2h`, `30m`, `1d`, or an ISO 8601 datetime) and
 * `--start`/`--end` ISO datetimes, validated before any request is made; and the relative times
 * of the Since column.
 */
import { parseDateTime, toIso } from '../core/time.js'
import { UsageError } from './errors.js'

const UNIT_MS = { m: 60_000, h: 3_600_000, d: 86_400_000 } as const

/** Converts `--until` to an ISO datetime: `<n>m`, `<n>h`, `<n>d` from now, or an ISO datetime. */
export function parseUntil(value: string, now = Date.now()): string {
  const match = /^(\d{1,6})([mhd])$/.exec(value.trim())
  if (match !== null) {
    const amount = Number(match[1])
    if (amount === 0) throw new UsageError(`--until ${value}: the duration must be positive.`)
    return toIso(now + amount * UNIT_MS[match[2] as keyof typeof UNIT_MS])
  }
  try {
    return toIso(parseDateTime(value, '--until'))
  } catch {
    throw new UsageError(
      `Invalid --until ${JSON.stringify(value)}: expected a duration such as 2h, 30m or 1d, or an ISO 8601 datetime such as 2026-12-01T04:00:00Z.`,
    )
  }
}

/** Validates an ISO 8601 datetime option and returns it in the wire form. */
export function parseIsoOption(value: string, option: string): string {
  try {
    return toIso(parseDateTime(value, option))
  } catch {
    throw new UsageError(
      `Invalid ${option} ${JSON.stringify(value)}: expected an ISO 8601 datetime such as 2026-12-01T04:00:00Z.`,
    )
  }
}

/** `startup`, `just now`, `5m ago`, `3h ago`, `2d ago` (or `in 5m` for future times). */
export function relativeTime(iso: string | null, now = Date.now()): string {
  if (iso === null || iso === '') return ''
  if (iso === 'startup') return 'startup'
  const at = Date.parse(iso)
  if (Number.isNaN(at)) return iso
  const delta = now - at
  const magnitude = Math.abs(delta)
  let text: string
  if (magnitude < 60_000) return delta >= 0 ? 'just now' : 'in <1m'
  else if (magnitude < 3_600_000) text = `${Math.floor(magnitude / 60_000)}m`
  else if (magnitude < 86_400_000) text = `${Math.floor(magnitude / 3_600_000)}h`
  else text = `${Math.floor(magnitude / 86_400_000)}d`
  return delta >= 0 ? `${text} ago` : `in ${text}`
}
