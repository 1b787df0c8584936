/**
 * Bulk actions of the task console: retry, cancel or delete many tasks in one request — the
 * ids given, or every record matching a filter (the run list's filters) — shared by the JSON
 * API and the dashboard, and audited once per request with the count and the filter.
 *
 * Why the matching ids are read before anything is changed: the list is paged newest first by
 * offset, and the action itself moves records in and out of the filter (a retry adds pending
 * records, a delete removes rows), so acting page by page would skip or revisit records. The
 * ids are kept, at most `bulkLimit` of them (default {@link BULK_MATCH_LIMIT}); records are read and acted on a page
 * at a time, so memory stays bounded whatever the history holds.
 */
import type { FastifyRequest } from 'fastify'
import { TaskError, TaskValidationError } from '../errors.js'
import type { StoredTask } from '../record.js'
import { RETRYABLE_STATUSES, TERMINAL_STATUSES, type TaskStatus } from '../status.js'
import { MAX_PER_PAGE } from '../stores/ports.js'
import type { TaskQuery } from '../task-query.js'
import { bulkRetry, retryEach, type BulkRetryResult } from './actions.js'
import { audit, type TaskAdminContext } from './context.js'
import { BulkLimitError, BulkTargetError } from './error-classes.js'
import { windowStart } from './serialize.js'

/** Default most records one bulk action by filter acts on; a filter matching more is refused. */
export const BULK_MATCH_LIMIT = 100_000

/** The `bulkLimit` option: a positive integer, default {@link BULK_MATCH_LIMIT}. */
export function bulkLimitOf(value: number | undefined): number {
  if (value === undefined) return BULK_MATCH_LIMIT
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new TaskValidationError('bulkLimit must be a positive integer.')
  }
  return value
}

/** Most ids one bulk action by `task_ids` takes. */
export const BULK_IDS_LIMIT = 500

/** A bulk action. */
export type BulkAction = 'retry' | 'cancel' | 'delete'

/** The filter of a bulk action: the run list's query without its paging. */
export interface BulkFilter {
  status?: TaskStatus
  func_name?: string
  queue?: string
  /** A window back from now: `<N>h`, `<N>d` or `all`. */
  since?: string
  /** A task-id prefix or an exact function name. */
  q?: string
  /** `key=value` exact tag matches, all of which must hold. */
  tag?: string | string[]
  /** True: only retried records; false: only records not retried. */
  retried?: boolean
}

/** What a bulk action acts on: exactly one of the two. */
export interface BulkTarget {
  task_ids?: string[]
  filter?: BulkFilter
}

/** The answer of a bulk action. */
export interface BulkResult {
  /** Records the ids or the filter named (distinct ids; records matching the filter). */
  matched: number
  /** Records the action applied to. */
  done: number
  /** Matched records it did not apply to (not found, wrong status, refused). */
  skipped: number
}

/** The manager's query of a list filter (`since` from `now`; tags from `key=value`). */
export function taskQueryOf(filter: BulkFilter, now: number): TaskQuery {
  const tags = (filter.tag === undefined ? [] : [filter.tag].flat()).map((tag) => {
    const at = tag.indexOf('=')
    return [tag.slice(0, at), tag.slice(at + 1)] as const
  })
  return {
    status: filter.status,
    funcName: filter.func_name,
    queue: filter.queue,
    since: windowStart(filter.since, now),
    q: filter.q,
    tags,
    ...(filter.retried === undefined ? {} : { retried: filter.retried }),
  }
}

/** How many records match `filter`, counted up to `limit` (`capped` when more match). */
export async function countMatching(
  context: TaskAdminContext,
  filter: BulkFilter,
  limit = context.bulkLimit,
): Promise<{ count: number; capped: boolean }> {
  const page = await context.manager.listStoredTasks({
    ...taskQueryOf(filter, context.now()),
    page: 1,
    perPage: 1,
    countLimit: limit,
  })
  const capped = page.total_capped === true || page.total > limit
  return { count: Math.min(page.total, limit), capped }
}

/** A matched record: its id and the status it had when matched. */
interface Match {
  id: string
  status: TaskStatus | null
  /** The record as listed (a retry starts from it instead of reading it again). */
  task?: StoredTask
}

/** The records matching `filter`, newest first; refuses more than the mount's `bulkLimit`. */
async function matchingRecords(context: TaskAdminContext, filter: BulkFilter): Promise<Match[]> {
  const limit = context.bulkLimit
  const { capped } = await countMatching(context, filter, limit)
  if (capped) {
    throw new BulkLimitError(
      `The filter matches more than ${limit} tasks; narrow it (status, function, queue, window) and act in parts.`,
      { limit },
    )
  }
  const query = taskQueryOf(filter, context.now())
  const seen = new Map<string, Match>()
  for (let page = 1; seen.size < limit; page++) {
    const chunk = await context.manager.listStoredTasks({ ...query, page, perPage: MAX_PER_PAGE })
    // A record enqueued meanwhile shifts the pages: the one seen twice counts once.
    for (const task of chunk.items) {
      const id = task.record.task_id
      if (!seen.has(id)) seen.set(id, { id, status: task.record.status, task })
    }
    if (chunk.items.length < MAX_PER_PAGE) break
  }
  return [...seen.values()].slice(0, limit)
}

/** Whether a single retry or cancel refused the id (an outcome, not a failure of the request). */
function refused(error: unknown): boolean {
  return error instanceof TaskError && error.statusCode < 500
}

/** Cancels each pending or running task; others count as skipped. */
async function cancelAll(context: TaskAdminContext, matches: readonly Match[]): Promise<number> {
  let done = 0
  for (const { id, status } of matches) {
    // A terminal status never changes: nothing to ask the manager.
    if (status !== null && TERMINAL_STATUSES.has(status)) continue
    try {
      await context.manager.cancel(id)
      done++
    } catch (error) {
      // Not found, finished meanwhile (TASK_NOT_CANCELLABLE): skipped.
      if (!refused(error)) throw error
    }
  }
  return done
}

/** Retries each id the single retry accepts; the others count as skipped. */
async function retryMatches(context: TaskAdminContext, matches: readonly Match[]): Promise<number> {
  // A finished record that is not retryable never becomes so.
  const candidates = matches.filter(
    ({ status }) =>
      status === null || !TERMINAL_STATUSES.has(status) || RETRYABLE_STATUSES.has(status),
  )
  const known = new Map<string, StoredTask>()
  for (const { id, task } of candidates) if (task !== undefined) known.set(id, task)
  const results = await retryEach(
    context,
    candidates.map(({ id }) => id),
    known,
  )
  return results.filter(({ outcome }) => outcome === 'dispatched').length
}

/** Deletes the finished records among the matches, a page at a time. */
async function deleteMatches(
  context: TaskAdminContext,
  matches: readonly Match[],
): Promise<number> {
  let done = 0
  for (let at = 0; at < matches.length; at += MAX_PER_PAGE) {
    const ids = matches
      .slice(at, at + MAX_PER_PAGE)
      .filter((match) => match.status === null || TERMINAL_STATUSES.has(match.status))
      .map((match) => match.id)
    if (ids.length > 0) done += await context.manager.deleteTasks(ids)
  }
  return done
}

/** Checks that exactly one of `task_ids` and `filter` is given. */
export function checkTarget(target: BulkTarget): void {
  const byIds = target.task_ids !== undefined
  const byFilter = target.filter !== undefined
  if (byIds === byFilter) {
    throw new BulkTargetError(
      'Give either "task_ids" (a list of ids) or "filter" (the run list\'s filters), not both.',
    )
  }
}

/** Runs `action` over the target; audits once as `bulk_<action>`. */
export async function runBulk(
  context: TaskAdminContext,
  request: FastifyRequest,
  action: BulkAction,
  target: BulkTarget,
): Promise<BulkResult | BulkRetryResult> {
  checkTarget(target)
  if (target.task_ids !== undefined && action === 'retry') {
    // By ids, a retry also answers per id, as it always did.
    return bulkRetry(context, request, target.task_ids)
  }
  const matches =
    target.task_ids === undefined
      ? await matchingRecords(context, target.filter ?? {})
      : [...new Set(target.task_ids)].map((id) => ({ id, status: null }))
  const act = { retry: retryMatches, cancel: cancelAll, delete: deleteMatches }[action]
  const done = await act(context, matches)
  const result = { matched: matches.length, done, skipped: matches.length - done }
  await audit(context, request, `bulk_${action}`, null, {
    ...(target.filter === undefined
      ? { task_ids: matches.map((m) => m.id) }
      : { filter: target.filter }),
    ...result,
  })
  return result
}
