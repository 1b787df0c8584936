/**
 * The input of one scheduled change added through the API (`POST /api/flags/{key}/schedule`,
 * `FlagService.scheduleChange`): checked field by field so that each refusal names the field
 * the caller sent (`at`, `action`, `patch`), before the flag itself is validated with the new
 * change in its `scheduled_changes`.
 */
import { randomUUID } from 'node:crypto'
import { ValidationError } from '../core/errors.js'
import { parseDateTime, toIso } from '../core/time.js'
import type { ScheduledChange } from './model.js'

/** The pending scheduled changes one flag may hold; a schedule past it is refused. */
export const MAX_SCHEDULED_CHANGES = 50

/** Fields a scheduled `update` may not change (the identity of the flag and the schedule itself). */
const FIXED_FIELDS = ['key', 'type', 'scheduled_changes'] as const

const ACTIONS: ReadonlySet<string> = new Set(['enable', 'disable', 'update'])

const invalid = (field: string, message: string, text: string): ValidationError =>
  new ValidationError(text, { details: [{ field, message }] })

/**
 * Checks a scheduled change as a caller sends it (`{at, action, patch?}`) and returns the
 * stored form with a new id. `at` must be an ISO 8601 datetime after `now` (a change in the
 * past would apply at once, which is what enable / disable / PATCH are for); `update` needs a
 * `patch` object that leaves {@link FIXED_FIELDS} alone, and the other actions take none.
 */
export function scheduledChangeFromInput(input: unknown, now: number): ScheduledChange {
  if (input === null || typeof input !== 'object' || Array.isArray(input))
    throw invalid('', 'expected an object', 'A scheduled change must be a JSON object.')
  const body = input as Record<string, unknown>
  for (const field of Object.keys(body))
    if (field !== 'at' && field !== 'action' && field !== 'patch')
      throw invalid(field, 'unknown field', `Unknown field ${field} in a scheduled change.`)
  const { at, action, patch } = body
  if (typeof action !== 'string' || !ACTIONS.has(action))
    throw invalid(
      'action',
      'expected enable, disable or update',
      `A scheduled change's action must be enable, disable or update, got ${JSON.stringify(action ?? null)}.`,
    )
  if (typeof at !== 'string') throw invalid('at', 'required', 'A scheduled change needs `at`.')
  const when = parseDateTime(at, 'at')
  if (when <= now)
    throw invalid(
      'at',
      'must be in the future',
      `A scheduled change must be in the future; ${at} is not (now ${toIso(now)}).`,
    )
  if (action === 'update') {
    if (patch === undefined || patch === null || typeof patch !== 'object' || Array.isArray(patch))
      throw invalid(
        'patch',
        'required when action is update',
        'A scheduled update needs a patch: a JSON merge patch object.',
      )
    for (const field of FIXED_FIELDS)
      if (Object.hasOwn(patch, field))
        throw invalid(
          `patch/${field}`,
          'cannot be changed by a scheduled update',
          `A scheduled update may not change ${field}.`,
        )
  } else if (patch !== undefined && patch !== null) {
    throw invalid(
      'patch',
      'only allowed when action is update',
      `A scheduled ${action} takes no patch.`,
    )
  }
  return {
    id: randomUUID(),
    at: toIso(when),
    action: action as ScheduledChange['action'],
    patch: action === 'update' ? structuredClone(patch as Record<string, unknown>) : null,
  }
}
