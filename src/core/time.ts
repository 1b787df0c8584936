/**
 * Datetimes on the wire: ISO 8601 in UTC with milliseconds and an explicit `+00:00` offset
 * (every timestamp on the wire), e.g. `2026-11-21T21:00:00.123+00:00`. Inputs accept a `Date` or any ISO 8601
 * string with a date and time; anything else is a {@link ValidationError}.
 */
import { ValidationError } from './errors.js'

/** Formats epoch milliseconds as `YYYY-MM-DDTHH:mm:ss.sss+00:00`. */
export function toIso(epochMs: number): string {
  return new Date(epochMs).toISOString().replace('Z', '+00:00')
}

const isoDateTime = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?$/i

/**
 * Parses a `Date` or ISO 8601 datetime into epoch milliseconds. A string without an offset is
 * read as UTC (never as the server's local time, which would differ between machines).
 */
export function parseDateTime(value: Date | string, field = 'datetime'): number {
  if (value instanceof Date) {
    const ms = value.getTime()
    if (Number.isNaN(ms)) throw invalid(field, String(value))
    return ms
  }
  if (typeof value !== 'string' || !isoDateTime.test(value.trim())) throw invalid(field, value)
  let text = value.trim().replace(' ', 'T')
  if (!/(Z|[+-]\d{2}:?\d{2})$/i.test(text)) text += 'Z'
  const ms = Date.parse(text)
  if (Number.isNaN(ms)) throw invalid(field, value)
  return ms
}

/** Like {@link parseDateTime} but passes `null`/`undefined` through. */
export function parseOptionalDateTime(
  value: Date | string | null | undefined,
  field: string,
): number | null {
  return value === null || value === undefined ? null : parseDateTime(value, field)
}

const DURATION_UNIT_MS = { m: 60_000, h: 3_600_000, d: 86_400_000 } as const

/** The form of a duration: a positive whole number of minutes, hours or days (`30m`, `4h`). */
export const DURATION_PATTERN = '^[1-9][0-9]{0,5}[mhd]$'

/** Parses a duration such as `30m`, `1h` or `2d` into milliseconds, or throws. */
export function parseDuration(value: string, field = 'duration'): number {
  const match = typeof value === 'string' ? /^([1-9][0-9]{0,5})([mhd])$/.exec(value) : null
  if (match === null) {
    throw new ValidationError(
      `Invalid ${field} ${JSON.stringify(value)}: expected a duration such as 30m, 1h or 2d.`,
      { details: [{ field, message: 'expected a duration such as 30m, 1h or 2d' }] },
    )
  }
  return Number(match[1]) * DURATION_UNIT_MS[match[2] as keyof typeof DURATION_UNIT_MS]
}

function invalid(field: string, value: unknown): ValidationError {
  return new ValidationError(
    `Invalid ${field} ${JSON.stringify(value)}: expected an ISO 8601 datetime such as 2026-12-01T04:00:00Z.`,
    { details: [{ field, message: 'expected an ISO 8601 datetime' }] },
  )
}

const httpDate =
  /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d{2} (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{4} \d{2}:\d{2}:\d{2} GMT$/

/** Parses an RFC 9110 IMF-fixdate (`Sat, 01 Jan 2028 00:00:00 GMT`) into epoch ms, or throws. */
export function parseHttpDate(value: string, field: string): number {
  const ms = typeof value === 'string' && httpDate.test(value) ? Date.parse(value) : Number.NaN
  if (Number.isNaN(ms)) {
    throw new ValidationError(
      `Invalid ${field} ${JSON.stringify(value)}: expected an HTTP-date such as "Sat, 01 Jan 2028 00:00:00 GMT".`,
      { details: [{ field, message: 'expected an HTTP-date (IMF-fixdate)' }] },
    )
  }
  return ms
}
