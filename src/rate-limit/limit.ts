/**
 * Limit strings of route rate limits: the parser lives in src/common (the task manager's
 * rate-limited queues take the same strings); here it answers with route control's
 * {@link ValidationError}.
 */
import { ValidationError } from '../core/errors.js'
import { readLimit, UNLIMITED, type Limit } from '../common/rate-limits/limit.js'

export { LIMIT_FORM, MAX_PERIOD_MS, UNLIMITED, type Limit } from '../common/rate-limits/limit.js'

/**
 * Parses a limit string; throws {@link ValidationError} (field `limit`) on anything else.
 *
 * @example
 * parseLimit('100/minute')   // { text: '100/minute', count: 100, periodMs: 60000 }
 * parseLimit('10/5 seconds') // { text: '10/5 seconds', count: 10, periodMs: 5000 }
 */
export function parseLimit(input: unknown, field = 'limit'): Limit {
  const limit = readLimit(input, field)
  if ('message' in limit) {
    throw new ValidationError(limit.message, { details: [{ field, message: limit.detail }] })
  }
  return limit
}

/** Parses a tier value: a limit string, or `unlimited` (returned as null). */
export function parseTierLimit(input: unknown, field: string): Limit | null {
  if (typeof input === 'string' && input.trim().toLowerCase() === UNLIMITED) return null
  return parseLimit(input, field)
}
