/**
 * Task records: list (newest first, filters, search, pages), detail, retry, cancel, bulk
 * retry, cancel and deletion (by ids or by filter), retry of failed tasks in a window, history
 * deletion. Every write is audited.
 */
import { TaskNotFoundError } from '../../errors.js'
import { cancelTask, retryFailed, retryTask } from '../actions.js'
import { runBulk, taskQueryOf } from '../bulk.js'
import { audit, type TaskAdminContext, type TaskAdminInstance } from '../context.js'
import { BulkBody, HistoryQuery, ListQuery, RetryFailedQuery, TaskIdParams } from '../schemas.js'
import { serializeTask } from '../serialize.js'

const UNIT_MS = { min: 60_000, hour: 3_600_000, day: 86_400_000 } as const

/** Registers the record endpoints. */
export function recordRoutes(app: TaskAdminInstance, context: TaskAdminContext): void {
  const { manager } = context
  const withArgs = context.displayFuncArgs

  app.get('/', { schema: { querystring: ListQuery } }, async (request) => {
    const query = request.query
    const page = await manager.listStoredTasks({
      ...taskQueryOf(query, context.now()),
      ...(query.flow === undefined ? {} : { flow: query.flow }),
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
    const newId = await retryTask(context, request, request.params.task_id)
    const task = await manager.getStoredTask(newId)
    return reply
      .code(201)
      .send(task === undefined ? { task_id: newId } : serializeTask(task, withArgs))
  })

  app.post('/:task_id/cancel', { schema: { params: TaskIdParams } }, async (request) => {
    const id = request.params.task_id
    const record = await cancelTask(context, request, id)
    const task = await manager.getStoredTask(id)
    return task === undefined ? record : serializeTask(task, withArgs)
  })

  // Retry and cancel are an operator's; deletion destroys history: admins only.
  const bulk = { schema: { body: BulkBody } } as const
  app.post('/bulk-retry', bulk, (request) => runBulk(context, request, 'retry', request.body))
  app.post('/bulk-cancel', bulk, (request) => runBulk(context, request, 'cancel', request.body))
  app.post('/bulk-delete', { ...bulk, config: { role: 'admin' } }, (request) =>
    runBulk(context, request, 'delete', request.body),
  )

  app.post('/retry-failed', { schema: { querystring: RetryFailedQuery } }, (request) =>
    retryFailed(context, request, request.query.since ?? 'all', request.query.func_name),
  )

  // Deleting history destroys the record of what happened: admins only.
  const historyRoute = { schema: { querystring: HistoryQuery }, config: { role: 'admin' } } as const
  app.delete('/history', historyRoute, async (request) => {
    const { value, unit } = request.query
    const deleted = await manager.deleteHistory(context.now() - value * UNIT_MS[unit])
    await audit(context, request, 'history_delete', null, { value, unit, deleted })
    return { deleted }
  })
}
