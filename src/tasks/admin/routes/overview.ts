/**
 * The views over the manager: metrics (with a per-minute series from `since`), the task audit,
 * queues (config and counts) with live changes, and schedules.
 */
import { TaskValidationError } from '../../errors.js'
import { DEFAULT_PER_PAGE } from '../../task-query.js'
import { toIso } from '../../time.js'
import { audit, type TaskAdminContext, type TaskAdminInstance } from '../context.js'
import { AuditQuery, MetricsQuery, QueueParams, QueuePatchBody } from '../schemas.js'
import { serializeAudit } from '../serialize.js'

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

  app.patch(
    '/queues/:name',
    { schema: { params: QueueParams, body: QueuePatchBody } },
    async (request) => {
      const name = request.params.name
      const config = await manager.updateQueueConfig(name, request.body)
      await audit(context, request, 'queue_update', null, { queue: name, ...config })
      return manager.queueStats().find((queue) => queue.name === name) ?? { name, ...config }
    },
  )

  app.get('/schedules', async () => {
    const schedules = await Promise.all(
      manager.listSchedules().map(async (schedule) => {
        const recent = await manager.listTasks({ funcName: schedule.name, perPage: 10 })
        const last = recent.items.find((record) => record.source === 'scheduled') ?? null
        return {
          name: schedule.name,
          trigger: schedule.trigger,
          next_run: schedule.next_run === null ? null : toIso(schedule.next_run),
          last_status: last?.status ?? null,
          last_task_id: last?.task_id ?? null,
        }
      }),
    )
    return { schedules, one_off_armed: await manager.countScheduled() }
  })
}
