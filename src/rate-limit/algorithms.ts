/**
 * The counting algorithms of route rate limits. The pure functions live in src/common, shared
 * with the task manager's rate-limited queues; the validation of an algorithm name answers with
 * route control's own error type, so it stays here.
 */
import { ValidationError } from '../core/errors.js'
import { ALGORITHMS, type Algorithm } from '../common/rate-limits/algorithms.js'

export * from '../common/rate-limits/algorithms.js'

/** Validates an algorithm name (default `fixed_window`). */
export function parseAlgorithm(value: unknown): Algorithm {
  if (value === undefined || value === null) return 'fixed_window'
  if (typeof value === 'string' && (ALGORITHMS as readonly string[]).includes(value))
    return value as Algorithm
  throw new ValidationError(
    `Invalid algorithm ${JSON.stringify(value)}: expected one of ${ALGORITHMS.join(', ')}.`,
    { details: [{ field: 'algorithm', message: `expected one of ${ALGORITHMS.join(', ')}` }] },
  )
}
