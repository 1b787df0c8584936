/**
 * The views over the manager: metrics (with a per-minute series from `since`), the task audit,
 * queues (config and counts) with live changes and pauses, schedules with their pauses and
 * runs on demand, and workers.
 */
import { TaskValidationError } from '../../errors.js'
import { DEFAULT_PER_PAGE } from '../../task-query.js'
import { toIso } from '../../time.js'
import { runSchedule, setQueuePaused, setSchedulePaused, updateQueue } from '../actions.js'
import { type TaskAdminContext, type TaskAdminInstance } from '../context.js'
import {
  AuditQuery,
  MetricsQuery,
  QueueGroupsQuery,
  QueueParams,
  QueuePatchBody,
  ScheduleParams,
} from '../schemas.js'
import { scheduleRows, type ScheduleRow } from '../schedule-rows.js'
import { serializeAudit, serializeTask, serializeWorker } from '../serialize.js'

/** Registers the overview endpoints. */
export function overviewRoutes(app: TaskAdminInstance, context: TaskAdminContext): void {
  const { manager } = context

  app.get('/metrics', { schema: { querystring: MetricsQuery } }, async (request) => {
    const since = request.query.since
    if (since !== undefined && !Number.isFinite(Date.parse(since))) {
      throw new TaskValidationError('since must be an ISO datetime, e.g. 2026-11-21T20:00:00Z.', {
        details: [{ field: 'since', message: 'expected an ISO datetime' }],
      })
    }
    return manager.metrics(since === undefined ? {} : { since })
  })

  app.get('/audit', { schema: { querystring: AuditQuery } }, async (request) => {
    const page = await context.data.listAudit(
      request.query.page ?? 1,
      request.query.per_page ?? DEFAULT_PER_PAGE,
    )
    return { ...page, items: page.items.map(serializeAudit) }
  })

  app.get('/queues', () => manager.queueStats())

  app.get(
    '/queues/:name/groups',
    { schema: { params: QueueParams, querystring: QueueGroupsQuery } },
    async (request) => {
      const name = request.params.name
      return { queue: name, ...(await manager.queueGroups(name, request.query.limit ?? 20)) }
    },
  )

  app.get('/workers', async () => (await manager.listWorkers()).map(serializeWorker))

  app.patch(
    '/queues/:name',
    { schema: { params: QueueParams, body: QueuePatchBody } },
    async (request) => {
      const name = request.params.name
      const config = await updateQueue(context, request, name, request.body)
      return manager.queueStats().find((queue) => queue.name === name) ?? { name, ...config }
    },
  )

  // Operator actions (the default role of a write): every instance of the store obeys them.
  for (const [action, paused] of [
    ['pause', true],
    ['resume', false],
  ] as const) {
    app.post(`/queues/:name/${action}`, { schema: { params: QueueParams } }, (request) =>
      setQueuePaused(context, request, request.params.name, paused),
    )
    app.post(
      `/schedules/:name/${action}`,
      { schema: { params: ScheduleParams } },
      async (request) => {
        const name = request.params.name
        await setSchedulePaused(context, request, name, paused)
        const { schedules } = await scheduleRows(manager, name)
        return serializeScheduleRow(schedules[0] as ScheduleRow)
      },
    )
  }

  app.post(
    '/schedules/:name/run',
    { schema: { params: ScheduleParams } },
    async (request, reply) => {
      const taskId = await runSchedule(context, request, request.params.name)
      const task = await manager.getStoredTask(taskId)
      return reply
        .code(201)
        .send(
          task === undefined ? { task_id: taskId } : serializeTask(task, context.displayFuncArgs),
        )
    },
  )

  app.get('/schedules', async () => {
    const { schedules, oneOffArmed } = await scheduleRows(manager)
    return { schedules: schedules.map(serializeScheduleRow), one_off_armed: oneOffArmed }
  })
}

/** A schedule row on the wire: times as ISO strings. */
function serializeScheduleRow(row: ScheduleRow) {
  return { ...row, next_run: row.next_run === null ? null : toIso(row.next_run) }
}
