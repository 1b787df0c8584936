/**
 * Task records: list (newest first, filters, search, pages), detail, retry, cancel, bulk retry,
 * retry of failed tasks in a window, history deletion. Every write is audited.
 */
import {
  QueueFullError,
  TaskArgumentError,
  TaskNotCancellableError,
  TaskNotFoundError,
  TaskNotRegisteredError,
  TaskNotRetryableError,
} from '../../errors.js'
import { audit, type TaskAdminContext, type TaskAdminInstance } from '../context.js'
import {
  BulkRetryBody,
  HistoryQuery,
  ListQuery,
  RetryFailedQuery,
  TaskIdParams,
} from '../schemas.js'
import { serializeTask, windowStart } from '../serialize.js'

/** Outcome of one id of a bulk retry. */
type Outcome = 'dispatched' | 'not_found' | 'not_retryable' | 'not_registered' | 'rejected'

/** Most failed tasks one `retry-failed` call re-enqueues. */
const RETRY_FAILED_LIMIT = 10_000

const UNIT_MS = { min: 60_000, hour: 3_600_000, day: 86_400_000 } as const

/** Registers the record endpoints. */
export function recordRoutes(app: TaskAdminInstance, context: TaskAdminContext): void {
  const { manager } = context
  const withArgs = context.displayFuncArgs

  app.get('/', { schema: { querystring: ListQuery } }, async (request) => {
    const query = request.query
    const tags = (query.tag === undefined ? [] : [query.tag].flat()).map((tag) => {
      const at = tag.indexOf('=')
      return [tag.slice(0, at), tag.slice(at + 1)] as const
    })
    const page = await manager.listStoredTasks({
      status: query.status,
      funcName: query.func_name,
      queue: query.queue,
      since: windowStart(query.since, context.now()),
      q: query.q,
      tags,
      page: query.page,
      perPage: query.per_page,
    })
    return { ...page, items: page.items.map((task) => serializeTask(task, withArgs)) }
  })

  app.get('/:task_id', { schema: { params: TaskIdParams } }, async (request) => {
    const task = await manager.getStoredTask(request.params.task_id)
    if (task === undefined) {
      throw new TaskNotFoundError(`No task ${JSON.stringify(request.params.task_id)}.`)
    }
    return serializeTask(task, withArgs)
  })

  app.post('/:task_id/retry', { schema: { params: TaskIdParams } }, async (request, reply) => {
    const id = request.params.task_id
    const newId = await manager.retryTask(id)
    await audit(context, request, 'retry', id, { new_task_id: newId })
    const task = await manager.getStoredTask(newId)
    return reply
      .code(201)
      .send(task === undefined ? { task_id: newId } : serializeTask(task, withArgs))
  })

  app.post('/:task_id/cancel', { schema: { params: TaskIdParams } }, async (request) => {
    const id = request.params.task_id
    let record
    try {
      record = manager.cancel(id)
    } catch (error) {
      if (!(error instanceof TaskNotFoundError)) throw error
      // Not this process's: another instance's record, or none.
      const stored = await manager.getTask(id)
      if (stored === undefined) throw error
      throw new TaskNotCancellableError(
        stored.status === 'pending' || stored.status === 'running'
          ? `Task ${id} runs on another instance; cancel it there.`
          : `Task ${id} is ${stored.status}; only pending or running tasks can be cancelled.`,
        { status: stored.status },
      )
    }
    await audit(context, request, 'cancel', id, { status: record.status })
    const task = await manager.getStoredTask(id)
    return task === undefined ? record : serializeTask(task, withArgs)
  })

  /** Retries each id; an id that cannot be retried is an outcome, not an error. */
  const retryAll = async (ids: readonly string[]) => {
    const results: { task_id: string; new_task_id: string | null; outcome: Outcome }[] = []
    for (const id of new Set(ids)) {
      let outcome: Outcome = 'dispatched'
      let newId: string | null = null
      try {
        newId = await manager.retryTask(id)
      } catch (error) {
        if (error instanceof TaskNotFoundError) outcome = 'not_found'
        else if (error instanceof TaskNotRetryableError || error instanceof TaskArgumentError) {
          outcome = 'not_retryable'
        } else if (error instanceof TaskNotRegisteredError) outcome = 'not_registered'
        else if (error instanceof QueueFullError) outcome = 'rejected'
        else throw error
      }
      results.push({ task_id: id, new_task_id: newId, outcome })
    }
    const dispatched = results.filter((result) => result.outcome === 'dispatched').length
    return { dispatched, skipped: results.length - dispatched, results }
  }

  app.post('/bulk-retry', { schema: { body: BulkRetryBody } }, async (request) => {
    const result = await retryAll(request.body.task_ids)
    await audit(context, request, 'bulk_retry', null, {
      task_ids: result.results.map((r) => r.task_id),
      dispatched: result.dispatched,
      skipped: result.skipped,
    })
    return result
  })

  app.post('/retry-failed', { schema: { querystring: RetryFailedQuery } }, async (request) => {
    const { since = 'all', func_name: funcName } = request.query
    const ids: string[] = []
    const from = windowStart(since, context.now())
    for (let page = 1; ids.length < RETRY_FAILED_LIMIT; page++) {
      const chunk = await manager.listTasks({
        status: 'failed',
        since: from,
        funcName,
        page,
        perPage: 500,
      })
      ids.push(...chunk.items.map((record) => record.task_id))
      if (chunk.items.length < 500) break
    }
    const result = await retryAll(ids.slice(0, RETRY_FAILED_LIMIT))
    await audit(context, request, 'retry_failed', null, {
      since,
      func_name: funcName ?? null,
      dispatched: result.dispatched,
      skipped: result.skipped,
    })
    return result
  })

  app.delete('/history', { schema: { querystring: HistoryQuery } }, async (request) => {
    const { value, unit } = request.query
    const deleted = await manager.deleteHistory(context.now() - value * UNIT_MS[unit])
    await audit(context, request, 'history_delete', null, { value, unit, deleted })
    return { deleted }
  })
}
