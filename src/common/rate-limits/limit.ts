/**
 * Limit strings, parsed once: `<count>/<period>` or `<count>/<n> <period>`, periods `second`,
 * `minute`, `hour`, `day` with the short forms `s`/`sec`, `m`/`min`, `h`, `d` and plurals,
 * case-insensitive, for a period of at most one year (`365 days`). `unlimited` is accepted only
 * as a tier value. Parsing happens when a policy is defined, never per request, and a bad string
 * is rejected with a message that shows the accepted form, so nothing invalid is ever stored.
 *
 * Why in src/common: route rate limits and the task manager's rate-limited queues take the same
 * strings; each half wraps {@link readLimit} to throw its own validation error.
 */

/** A parsed limit: `count` requests per `periodMs`. */
export interface Limit {
  /** The limit string as given (trimmed), echoed in 429 bodies and headers. */
  readonly text: string
  readonly count: number
  readonly periodMs: number
}

/** The tier value that skips counting. */
export const UNLIMITED = 'unlimited'

const SECOND = 1000
/**
 * Period names in milliseconds. A Map, not an object literal: the name comes from the caller,
 * and an object would also answer for inherited names (`2/constructor` once passed as a limit
 * with a NaN period, never enforced, and broke the Redis script for every limit of a batch).
 */
const unitMs: ReadonlyMap<string, number> = new Map([
  ['s', SECOND],
  ['sec', SECOND],
  ['secs', SECOND],
  ['second', SECOND],
  ['seconds', SECOND],
  ['m', 60 * SECOND],
  ['min', 60 * SECOND],
  ['mins', 60 * SECOND],
  ['minute', 60 * SECOND],
  ['minutes', 60 * SECOND],
  ['h', 3600 * SECOND],
  ['hr', 3600 * SECOND],
  ['hrs', 3600 * SECOND],
  ['hour', 3600 * SECOND],
  ['hours', 3600 * SECOND],
  ['d', 86400 * SECOND],
  ['day', 86400 * SECOND],
  ['days', 86400 * SECOND],
])

/**
 * The longest period a limit may have: one year. Counters live as long as their period, so a
 * longer one would keep state for ages, and past ~2^53 ms the Redis script can no longer express
 * the expiry (the counter key would be written without one).
 */
export const MAX_PERIOD_MS = 365 * 86400 * SECOND

const form = /^(\d+)\s*\/\s*(?:(\d+)\s*)?([a-z]+)$/i

/** The accepted form, quoted in every rejection. */
export const LIMIT_FORM =
  '"<count>/<period>" or "<count>/<n> <period>" with period second, minute, hour or day (short forms s, sec, m, min, h, d; plurals allowed), e.g. "100/minute" or "10/5 seconds"'

/** Why a limit string was refused: the whole message, and the detail for the field. */
export interface LimitRefusal {
  readonly message: string
  readonly detail: string
}

/**
 * Parses a limit string, or says why it cannot: callers turn the refusal into their own error.
 *
 * @example
 * readLimit('100/minute')   // { text: '100/minute', count: 100, periodMs: 60000 }
 * readLimit('10/5 seconds') // { text: '10/5 seconds', count: 10, periodMs: 5000 }
 */
export function readLimit(input: unknown, field = 'limit'): Limit | LimitRefusal {
  const text = typeof input === 'string' ? input.trim() : ''
  const match = form.exec(text)
  const unit = match?.[3] === undefined ? undefined : unitMs.get(match[3].toLowerCase())
  const count = match === null ? Number.NaN : Number(match[1])
  const multiplier = match?.[2] === undefined ? 1 : Number(match[2])
  if (
    match === null ||
    unit === undefined ||
    !Number.isSafeInteger(count) ||
    count < 1 ||
    !Number.isSafeInteger(multiplier) ||
    multiplier < 1
  ) {
    const note =
      typeof input === 'string' && input.trim().toLowerCase() === UNLIMITED
        ? ' ("unlimited" is accepted only as a tier value)'
        : ''
    return {
      message: `Invalid ${field} ${JSON.stringify(input)}${note}: expected ${LIMIT_FORM}.`,
      detail: `expected ${LIMIT_FORM}`,
    }
  }
  const periodMs = unit * multiplier
  if (periodMs > MAX_PERIOD_MS) {
    const message = `period longer than one year (${MAX_PERIOD_MS / (86400 * SECOND)} days)`
    return {
      message: `Invalid ${field} ${JSON.stringify(input)}: ${message}.`,
      detail: `${message}; expected ${LIMIT_FORM}`,
    }
  }
  return { text, count, periodMs }
}
