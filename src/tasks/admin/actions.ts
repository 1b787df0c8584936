/**
 * The task admin's writes — retry, cancel, bulk retry, retry of the failed tasks in a window,
 * queue changes and pauses, schedule pauses and runs —
 * shared by the JSON API and the dashboard, so both validate, audit and fail the same way.
 */
import type { FastifyRequest } from 'fastify'
import {
  QueueFullError,
  TaskError,
  TaskNotCancellableError,
  TaskNotFoundError,
  TaskNotRegisteredError,
} from '../errors.js'
import type { QueueConfig, QueueStats } from '../queues/queue.js'
import type { ScheduleInfo } from '../schedules.js'
import type { StoredTask, TaskRecord } from '../record.js'
import { audit, type TaskAdminContext } from './context.js'
import { windowStart } from './serialize.js'

/** Outcome of one id of a bulk retry. */
export type RetryOutcome =
  'dispatched' | 'not_found' | 'not_retryable' | 'not_registered' | 'rejected'

/** The answer of a bulk retry: the counts of every bulk action, and what happened per id. */
export interface BulkRetryResult {
  /** Distinct ids asked for. */
  matched: number
  /** Ids retried (the same as `dispatched`). */
  done: number
  dispatched: number
  skipped: number
  results: { task_id: string; new_task_id: string | null; outcome: RetryOutcome }[]
}

/** Most failed tasks one "retry the failed tasks of a window" re-enqueues. */
export const RETRY_FAILED_LIMIT = 10_000

/** Retries a finished task; resolves the new task's id. The retry is audited. */
export async function retryTask(
  context: TaskAdminContext,
  request: FastifyRequest,
  taskId: string,
): Promise<string> {
  const newId = await context.manager.retryTask(taskId)
  await audit(context, request, 'retry', taskId, { new_task_id: newId })
  return newId
}

/**
 * Cancels a pending or running task — of this process, or with a durable store of any instance
 * (the stored record comes back still `pending`/`running`; that instance aborts the task
 * within a second); resolves its record. A finished one is a `TaskNotCancellableError`.
 */
export async function cancelTask(
  context: TaskAdminContext,
  request: FastifyRequest,
  taskId: string,
): Promise<TaskRecord> {
  const { manager } = context
  let record
  try {
    record = await manager.cancel(taskId)
  } catch (error) {
    if (!(error instanceof TaskNotFoundError)) throw error
    // Without a durable store: a finished record kept by the seam, or none.
    const stored = await manager.getTask(taskId)
    if (stored === undefined) throw error
    throw new TaskNotCancellableError(
      `Task ${taskId} is ${stored.status}; only pending or running tasks can be cancelled.`,
      { status: stored.status },
    )
  }
  await audit(context, request, 'cancel', taskId, { status: record.status })
  return record
}

/**
 * The outcome of an error of a single retry: whatever it refuses (not found, wrong status,
 * already retried, function gone, queue full) is an outcome, not a failure; anything else
 * (the store is down) is thrown on.
 */
function outcomeOf(error: unknown): RetryOutcome {
  if (error instanceof TaskNotFoundError) return 'not_found'
  if (error instanceof TaskNotRegisteredError) return 'not_registered'
  if (error instanceof QueueFullError) return 'rejected'
  if (error instanceof TaskError && error.statusCode < 500) return 'not_retryable'
  throw error
}

/** Tasks one call of {@link retryEach} retries together (one claim in the store). */
const RETRY_CHUNK = 500

/**
 * Retries each id (distinct), {@link RETRY_CHUNK} at a time: the retries of a chunk share one
 * claim in the store and their writes share batches. `known`: records just listed, by id.
 */
export async function retryEach(
  context: TaskAdminContext,
  ids: readonly string[],
  known?: ReadonlyMap<string, StoredTask>,
): Promise<BulkRetryResult['results']> {
  const results: BulkRetryResult['results'] = []
  for (let at = 0; at < ids.length; at += RETRY_CHUNK) {
    const answers = await context.manager.retryTasks(ids.slice(at, at + RETRY_CHUNK), known)
    for (const answer of answers) {
      results.push(
        'error' in answer
          ? { task_id: answer.task_id, new_task_id: null, outcome: outcomeOf(answer.error) }
          : { task_id: answer.task_id, new_task_id: answer.new_task_id, outcome: 'dispatched' },
      )
    }
  }
  return results
}

/** Retries each id; an id that cannot be retried is an outcome, not an error. */
async function retryAll(
  context: TaskAdminContext,
  ids: readonly string[],
): Promise<BulkRetryResult> {
  const results = await retryEach(context, [...new Set(ids)])
  const dispatched = results.filter((result) => result.outcome === 'dispatched').length
  const skipped = results.length - dispatched
  return { matched: results.length, done: dispatched, dispatched, skipped, results }
}

/** Retries the given tasks (audited once as `bulk_retry`). */
export async function bulkRetry(
  context: TaskAdminContext,
  request: FastifyRequest,
  taskIds: readonly string[],
): Promise<BulkRetryResult> {
  const result = await retryAll(context, taskIds)
  await audit(context, request, 'bulk_retry', null, {
    task_ids: result.results.map((r) => r.task_id),
    matched: result.matched,
    done: result.done,
    dispatched: result.dispatched,
    skipped: result.skipped,
  })
  return result
}

/**
 * The ids of the failed tasks of a window that were not retried yet (at most
 * {@link RETRY_FAILED_LIMIT}).
 */
export async function failedTaskIds(
  context: TaskAdminContext,
  since: string,
  funcName: string | undefined,
): Promise<string[]> {
  const ids: string[] = []
  const from = windowStart(since, context.now())
  for (let page = 1; ids.length < RETRY_FAILED_LIMIT; page++) {
    // Paged by offset over records a retry does not change meanwhile (this reads, retries later).
    const chunk = await context.manager.listTasks({
      status: 'failed',
      since: from,
      funcName,
      retried: false,
      page,
      perPage: 500,
    })
    for (const record of chunk.items) ids.push(record.task_id)
    if (chunk.items.length < 500) break
  }
  return ids.slice(0, RETRY_FAILED_LIMIT)
}

/** Retries the failed tasks of a window (audited once as `retry_failed`). */
export async function retryFailed(
  context: TaskAdminContext,
  request: FastifyRequest,
  since: string,
  funcName: string | undefined,
): Promise<BulkRetryResult> {
  const result = await retryAll(context, await failedTaskIds(context, since, funcName))
  await audit(context, request, 'retry_failed', null, {
    since,
    func_name: funcName ?? null,
    dispatched: result.dispatched,
    skipped: result.skipped,
  })
  return result
}

/** Changes a queue's config live (audited as `queue_update`); resolves the applied config. */
export async function updateQueue(
  context: TaskAdminContext,
  request: FastifyRequest,
  name: string,
  change: Partial<QueueConfig>,
): Promise<QueueConfig> {
  const config = await context.manager.updateQueueConfig(name, change)
  await audit(context, request, 'queue_update', null, { queue: name, ...config })
  return config
}

/**
 * Pauses (`paused` true) or resumes a queue on every instance of the store (audited as
 * `queue_pause` / `queue_resume`); resolves its stats. An unknown queue is a
 * `QueueNotFoundError` and changes nothing.
 */
export async function setQueuePaused(
  context: TaskAdminContext,
  request: FastifyRequest,
  name: string,
  paused: boolean,
): Promise<QueueStats> {
  const { manager } = context
  const stats = paused ? await manager.pauseQueue(name) : await manager.resumeQueue(name)
  await audit(context, request, paused ? 'queue_pause' : 'queue_resume', null, { queue: name })
  return stats
}

/**
 * Pauses (`paused` true) or resumes a periodic schedule on every instance of the store (audited
 * as `schedule_pause` / `schedule_resume`). An unknown schedule is a `ScheduleNotFoundError`
 * and changes nothing.
 */
export async function setSchedulePaused(
  context: TaskAdminContext,
  request: FastifyRequest,
  name: string,
  paused: boolean,
): Promise<ScheduleInfo> {
  const { manager } = context
  const info = paused ? await manager.pauseSchedule(name) : await manager.resumeSchedule(name)
  await audit(context, request, paused ? 'schedule_pause' : 'schedule_resume', null, {
    schedule: name,
  })
  return info
}

/**
 * Runs a periodic schedule's task now (`source: "manual"`, audited as `schedule_run` with the
 * new task id); resolves the id. An unknown schedule is a `ScheduleNotFoundError`.
 */
export async function runSchedule(
  context: TaskAdminContext,
  request: FastifyRequest,
  name: string,
): Promise<string> {
  const taskId = await context.manager.runSchedule(name)
  await audit(context, request, 'schedule_run', taskId, { schedule: name })
  return taskId
}
