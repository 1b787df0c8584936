/**
 * The dashboard's writes, each through the same action as the JSON API (validated, audited):
 * retry and cancel of one task, retry of selected rows, replay of a window's failed tasks, a
 * queue's live config and pause, and a schedule's pause and run now. Every answer says what happened (a toast; per-item counts for bulk
 * actions) and asks the page to refresh what changed.
 */
import type { FastifyReply } from 'fastify'
import { sendHtml, trigger, type Toast } from '../../../ui/index.js'
import { QueueNotFoundError, TaskValidationError } from '../../errors.js'
import {
  bulkRetry,
  cancelTask,
  retryFailed,
  retryTask,
  runSchedule,
  setQueuePaused,
  setSchedulePaused,
  updateQueue,
  type BulkRetryResult,
} from '../actions.js'
import type { TaskAdminInstance } from '../context.js'
import { scheduleRows } from '../schedule-rows.js'
import { QueueParams, ScheduleParams, TaskIdParams } from '../schemas.js'
import { DEAD_LETTER_WINDOWS } from './dead-letters.js'
import { TaskDetail, detailUrl } from './detail.js'
import { flowOf } from './flow-tree.js'
import { isGrouped, parseQueueForm, QueueRow, queueFields, type QueueForm } from './queues.js'
import { SchedulesView } from './registry-tabs.js'
import { PAGE, type TaskDashboard } from './view.js'

const TASK_ID = /^[A-Za-z0-9._:-]{1,128}$/
/** Most rows one "Retry selected" takes (the bulk-retry API's limit). */
const MAX_SELECTED = 500

/** The form fields of a request body (urlencoded), never from the prototype. */
function fieldsOf(body: unknown): Map<string, unknown> {
  return new Map(typeof body === 'object' && body !== null ? Object.entries(body) : [])
}

/** The toast of a bulk retry: how many were dispatched, how many skipped and why. */
export function bulkToast(result: BulkRetryResult): Toast {
  const skipped = new Map<string, number>()
  for (const item of result.results) {
    if (item.outcome !== 'dispatched')
      skipped.set(item.outcome, (skipped.get(item.outcome) ?? 0) + 1)
  }
  const why = [...skipped].map(([outcome, n]) => `${n} ${outcome.replace('_', ' ')}`).join(', ')
  const message =
    `Retried ${result.dispatched} task${result.dispatched === 1 ? '' : 's'}` +
    (result.skipped === 0 ? '.' : `; skipped ${result.skipped} (${why}).`)
  return { message, kind: result.dispatched === 0 && result.skipped > 0 ? 'error' : 'success' }
}

/** Registers the actions. */
export function actionRoutes(app: TaskAdminInstance, dashboard: TaskDashboard): void {
  const { context } = dashboard
  const refresh = (reply: FastifyReply, toast: Toast) =>
    trigger(reply, { 'ui-toast': toast, 'ui-refresh': { type: 'task' }, 'ui-close-dialog': true })

  app.post('/dashboard/bulk-retry', PAGE, async (request, reply) => {
    const raw = fieldsOf(request.body).get('task_ids')
    const ids = (Array.isArray(raw) ? raw : raw === undefined ? [] : [raw]).filter(
      (id): id is string => typeof id === 'string',
    )
    if (ids.length === 0) throw new TaskValidationError('Select at least one task to retry.')
    if (ids.length > MAX_SELECTED || !ids.every((id) => TASK_ID.test(id))) {
      throw new TaskValidationError(`Select at most ${MAX_SELECTED} tasks with valid ids.`)
    }
    const result = await bulkRetry(context, request, ids)
    return refresh(reply, bulkToast(result)).status(200).send('')
  })

  app.post('/dashboard/dead-letters/replay', PAGE, async (request, reply) => {
    const window = fieldsOf(request.body).get('window')
    if (
      typeof window !== 'string' ||
      !(DEAD_LETTER_WINDOWS as readonly string[]).includes(window)
    ) {
      throw new TaskValidationError(`window must be one of ${DEAD_LETTER_WINDOWS.join(', ')}.`)
    }
    const result = await retryFailed(context, request, window, undefined)
    return refresh(reply, bulkToast(result)).status(200).send('')
  })

  const taskRoute = { ...PAGE, schema: { ...PAGE.schema, params: TaskIdParams } }

  app.post('/dashboard/task/:task_id/retry', taskRoute, async (request, reply) => {
    const id = request.params.task_id
    const newId = await retryTask(context, request, id)
    // The new run's page says where it came from (a toast that survives the navigation).
    const next = `${detailUrl(dashboard, newId)}?retried_from=${encodeURIComponent(id)}`
    return reply.status(200).header('hx-redirect', next).send('')
  })

  app.post('/dashboard/task/:task_id/cancel', taskRoute, async (request, reply) => {
    const id = request.params.task_id
    await cancelTask(context, request, id)
    const task = await context.manager.getStoredTask(id)
    trigger(reply, { 'ui-toast': { message: `Cancelled task ${id}.`, kind: 'success' } })
    if (task === undefined) return reply.status(200).send('')
    const flow = await flowOf(context.manager, task)
    return sendHtml(reply, <TaskDetail dashboard={dashboard} task={task} actions flow={flow} />)
  })

  app.post(
    '/dashboard/queues/:name',
    { ...PAGE, schema: { ...PAGE.schema, params: QueueParams } },
    async (request, reply) => {
      const name = request.params.name
      const stats = () => context.manager.queueStats().find((queue) => queue.name === name)
      const current = stats()
      if (current === undefined) throw new QueueNotFoundError(`No queue ${JSON.stringify(name)}.`)
      const action = dashboard.url(`/dashboard/queues/${encodeURIComponent(name)}`)
      const fields = fieldsOf(request.body)
      const grouped = isGrouped(current)
      const parsed = parseQueueForm(request.body, grouped)
      if (!parsed.ok) {
        const typed = (field: string) => {
          const value = fields.get(field)
          return typeof value === 'string' ? value.slice(0, 100) : ''
        }
        const form: QueueForm = { errors: parsed.errors }
        for (const field of queueFields(grouped)) form[field] = typed(field)
        return sendHtml(
          reply,
          <QueueRow queue={current} action={action} actions form={form} />,
          422,
        )
      }
      await updateQueue(context, request, name, parsed.change)
      trigger(reply, { 'ui-toast': { message: `Queue ${name} updated.`, kind: 'success' } })
      return sendHtml(reply, <QueueRow queue={stats() ?? current} action={action} actions />)
    },
  )
  const queueRoute = { ...PAGE, schema: { ...PAGE.schema, params: QueueParams } }
  const scheduleRoute = { ...PAGE, schema: { ...PAGE.schema, params: ScheduleParams } }
  const schedulesView = async () => {
    const { schedules, oneOffArmed } = await scheduleRows(context.manager)
    return (
      <SchedulesView
        dashboard={dashboard}
        schedules={schedules}
        oneOffArmed={oneOffArmed}
        actions
      />
    )
  }
  for (const [verb, paused] of [
    ['pause', true],
    ['resume', false],
  ] as const) {
    const done = paused ? 'paused' : 'resumed'
    app.post(`/dashboard/queues/:name/${verb}`, queueRoute, async (request, reply) => {
      const name = request.params.name
      const queue = await setQueuePaused(context, request, name, paused)
      const action = dashboard.url(`/dashboard/queues/${encodeURIComponent(name)}`)
      trigger(reply, { 'ui-toast': { message: `Queue ${name} ${done}.`, kind: 'success' } })
      return sendHtml(reply, <QueueRow queue={queue} action={action} actions />)
    })
    app.post(`/dashboard/schedules/:name/${verb}`, scheduleRoute, async (request, reply) => {
      const name = request.params.name
      await setSchedulePaused(context, request, name, paused)
      trigger(reply, { 'ui-toast': { message: `Schedule ${name} ${done}.`, kind: 'success' } })
      return sendHtml(reply, await schedulesView())
    })
  }

  app.post('/dashboard/schedules/:name/run', scheduleRoute, async (request, reply) => {
    const name = request.params.name
    const taskId = await runSchedule(context, request, name)
    trigger(reply, {
      'ui-toast': { message: `Schedule ${name} started: task ${taskId}.`, kind: 'success' },
    })
    return sendHtml(reply, await schedulesView())
  })
}
