/**
 * The dashboard's pages and the fragments they refresh: View (metrics and runs), the task
 * detail, Tasks, Schedules, Queues, Workers, Dead Letters and Audit.
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import { param, pageParam, sendHtml } from '../../../ui/index.js'
import { TaskNotFoundError } from '../../errors.js'
import { TaskAdminNotFoundError } from '../errors.js'
import type { TaskAdminInstance } from '../context.js'
import { TaskIdParams } from '../schemas.js'
import { scheduleRows } from '../schedule-rows.js'
import { windowStart } from '../serialize.js'
import { AuditTable, AUDIT_PER_PAGE } from './audit.js'
import {
  DEAD_LETTERS_PER_PAGE,
  DeadLetters,
  ReplayDialog,
  deadLetterFilters,
  type DeadLetterFilters,
} from './dead-letters.js'
import { MissingTask, TaskDetail } from './detail.js'
import { flowOf } from './flow-tree.js'
import { isGrouped, QueuesTable, TAB_GROUP_ROWS } from './queues.js'
import { WorkersTable } from './workers.js'
import { SchedulesView, TasksTable } from './registry-tabs.js'
import type { GroupCounts } from '../../stores/ports.js'
import { bucketWidth } from './chart.js'
import { MetricsCache } from './metrics-cache.js'
import {
  MetricsLoading,
  MetricsPanel,
  type RangeMetrics,
  RunFilterForm,
  RunRow,
  RunsTable,
  RUNS_COUNTED_AHEAD,
  loadRuns,
  metricsStart,
  runFilters,
  type RunFilters,
} from './runs.js'
import { failedTaskIds, RETRY_FAILED_LIMIT } from '../actions.js'
import { PAGE, type TabId, type TaskDashboard } from './view.js'

/**
 * Most retried failures of a range counted for the failed card; past it the card leaves out
 * this many (the count stays one short read of the store's index of retried records).
 */
const RETRIED_COUNT_LIMIT = 100_000

/**
 * How old (ms) the View tab's metrics may be when shown: the cache's TTL. A page open on the
 * tab shows figures at most about this old (plus one read) after any change.
 */
const METRICS_MAX_AGE_MS = 1_000

/** A task id as the API accepts it. */
const TASK_ID = /^[A-Za-z0-9._:-]{1,128}$/

/** Registers the tabs' pages and fragments. */
export function tabRoutes(app: TaskAdminInstance, dashboard: TaskDashboard): void {
  const { context } = dashboard
  const { manager } = context
  const html = (reply: FastifyReply, body: JSX.Element, status = 200) =>
    sendHtml(reply, body, status)
  /**
   * A tab whose content refreshes live: its page at `path` (the content under the tab's
   * heading, after `intro`) and the content alone at `{path}/table`.
   */
  const liveTab = (
    path: string,
    tab: { title: string; headingId: string; active: TabId; intro?: JSX.Element },
    content: (request: FastifyRequest) => JSX.Element,
  ) => {
    app.get(path, PAGE, async (request, reply) =>
      html(
        reply,
        dashboard.tabPage(request, {
          ...tab,
          children: (
            <>
              {(tab.intro ?? '') as 'safe'}
              {(await content(request)) as 'safe'}
            </>
          ),
        }),
      ),
    )
    app.get(`${path}/table`, PAGE, async (request, reply) => html(reply, await content(request)))
  }

  // ---- View: metrics and the run table ----------------------------------------------------
  /**
   * Failures created from `since` (all of them without) that were retried: counted through the
   * list's own `retried` filter, over the store's index of retried records.
   */
  const retriedFailures = async (since: number | undefined) =>
    (
      await manager.listStoredTasks({
        status: 'failed',
        retried: true,
        ...(since === undefined ? {} : { since }),
        perPage: 1,
        countLimit: RETRIED_COUNT_LIMIT,
      })
    ).total
  const metricsCache = new MetricsCache<RangeMetrics>(
    async (range) => {
      const now = context.now()
      const from = metricsStart(range, now)
      // Per chart bucket, from the store's roll-ups: the cost follows the range's hours.
      const [ranged, retried] = await Promise.all([
        manager.metrics({ since: from, step: bucketWidth(from, now) }),
        retriedFailures(range === 'all' ? undefined : from),
      ])
      // "All time": totals over everything, the chart over the last week.
      const metrics =
        range === 'all' ? { ...(await manager.metrics()), series: ranged.series } : ranged
      return { ...metrics, retried_failed: retried }
    },
    () => performance.now(),
    METRICS_MAX_AGE_MS,
  )
  /**
   * The panel with `metrics` read at `readAt`; shown for a request made at `askedAt`. A value
   * read before the request may miss the change that made the page ask: the panel then asks
   * again once the value is due, so the cards never lag a change by more than about the TTL.
   */
  const metricsPanel = (
    filters: RunFilters,
    metrics: RangeMetrics | null,
    readAt: number | null,
    askedAt: number,
  ) =>
    metrics === null || readAt === null ? (
      <MetricsLoading dashboard={dashboard} filters={filters} />
    ) : (
      <MetricsPanel
        dashboard={dashboard}
        filters={filters}
        metrics={metrics}
        from={metricsStart(filters.range, context.now())}
        recheckInMs={readAt < askedAt ? metricsCache.dueIn(readAt) + 50 : null}
      />
    )
  const runsOf = async (filters: RunFilters) => {
    try {
      return { ...(await loadRuns(dashboard, filters)), error: undefined }
    } catch (error) {
      const answer = toClientError(error)
      return { page: null, search: null, error: answer }
    }
  }

  app.get('/dashboard', PAGE, async (request, reply) => {
    const filters = runFilters(request)
    // The page never waits for a range's first metrics read: the panel then loads on its own.
    const askedAt = metricsCache.clock()
    const runs = await runsOf(filters)
    const metrics = metricsCache.peek(filters.range)
    const readAt = metricsCache.readAt(filters.range)
    const queues = manager.queueStats().map((queue) => queue.name)
    return html(
      reply,
      dashboard.page(request, {
        title: 'Runs',
        active: 'view',
        children: (
          <>
            {metricsPanel(filters, metrics, readAt, askedAt)}
            <section aria-labelledby="runs-title">
              <h2 id="runs-title">Runs</h2>
              <RunFilterForm dashboard={dashboard} filters={filters} queues={queues} />
              <RunsTable
                dashboard={dashboard}
                filters={filters}
                actions={dashboard.canAct(request)}
                {...runs}
              />
            </section>
          </>
        ),
      }),
    )
  })

  app.get('/dashboard/metrics', PAGE, async (request, reply) => {
    const filters = runFilters(request)
    const askedAt = metricsCache.clock()
    const { value, readAt } = await metricsCache.current(filters.range)
    return html(reply, metricsPanel(filters, value, readAt, askedAt))
  })

  app.get('/dashboard/runs', PAGE, async (request, reply) => {
    const filters = runFilters(request)
    return html(
      reply,
      <RunsTable
        dashboard={dashboard}
        filters={filters}
        actions={dashboard.canAct(request)}
        {...await runsOf(filters)}
      />,
    )
  })

  app.get('/dashboard/runs/row', PAGE, async (request, reply) => {
    const task = await storedTask(param(request, 'key'))
    // A record that is gone (history deleted) leaves its row as it was.
    if (task === undefined) return reply.status(204).send()
    return html(
      reply,
      <RunRow
        dashboard={dashboard}
        task={task}
        now={context.now()}
        actions={dashboard.canAct(request)}
      />,
    )
  })

  // ---- the task detail ----------------------------------------------------------------------
  const storedTask = async (id: string) =>
    TASK_ID.test(id) ? manager.getStoredTask(id) : undefined

  app.get(
    '/dashboard/task/:task_id',
    { ...PAGE, schema: { ...PAGE.schema, params: TaskIdParams } },
    async (request, reply) => {
      const id = request.params.task_id
      const task = await manager.getStoredTask(id)
      const retriedFrom = param(request, 'retried_from')
      return html(
        reply,
        dashboard.page(request, {
          title: task === undefined ? 'No such task' : `${task.record.func_name} ${id}`,
          active: 'view',
          flash: TASK_ID.test(retriedFrom)
            ? [{ message: `Retrying task ${retriedFrom} as this task.`, kind: 'success' }]
            : [],
          children:
            task === undefined ? (
              <MissingTask taskId={id} />
            ) : (
              <TaskDetail
                dashboard={dashboard}
                task={task}
                actions={dashboard.canAct(request)}
                flow={await flowOf(manager, task)}
              />
            ),
        }),
        task === undefined ? 404 : 200,
      )
    },
  )

  app.get(
    '/dashboard/task/:task_id/panel',
    { ...PAGE, schema: { ...PAGE.schema, params: TaskIdParams } },
    async (request, reply) => {
      const task = await manager.getStoredTask(request.params.task_id)
      if (task === undefined) {
        throw new TaskNotFoundError(`No task ${JSON.stringify(request.params.task_id)}.`)
      }
      return html(
        reply,
        <TaskDetail
          dashboard={dashboard}
          task={task}
          actions={dashboard.canAct(request)}
          flow={await flowOf(manager, task)}
        />,
      )
    },
  )

  // ---- Functions and Schedules---------------------------------------------------------------
  app.get('/dashboard/tasks', PAGE, async (request, reply) => {
    const schedules = new Map(manager.listSchedules().map((s) => [s.name, s.trigger]))
    return html(
      reply,
      dashboard.tabPage(request, {
        title: 'Functions',
        heading: 'Registered functions',
        headingId: 'tasks-title',
        active: 'tasks',
        children: (
          <>
            <TasksTable
              dashboard={dashboard}
              tasks={manager.registeredTasks()}
              schedules={schedules}
            />
          </>
        ),
      }),
    )
  })

  const schedulesView = async (request: FastifyRequest) => {
    const { schedules, oneOffArmed } = await scheduleRows(manager)
    return (
      <SchedulesView
        dashboard={dashboard}
        schedules={schedules}
        oneOffArmed={oneOffArmed}
        actions={dashboard.canAct(request)}
      />
    )
  }
  liveTab(
    '/dashboard/schedules',
    { title: 'Schedules', headingId: 'schedules-title', active: 'schedules' },
    schedulesView,
  )

  // ---- Queues -------------------------------------------------------------------------------
  const queuesTable = async (request: FastifyRequest) => {
    const queues = manager.queueStats()
    // Every grouped queue's groups, from the store (all instances' tasks), read together.
    const grouped = queues.filter(isGrouped)
    const counts = await Promise.all(
      grouped.map((queue) => manager.queueGroups(queue.name, TAB_GROUP_ROWS)),
    )
    return (
      <QueuesTable
        actions={dashboard.canAct(request)}
        queues={queues}
        groups={new Map(grouped.map((queue, at) => [queue.name, counts[at] as GroupCounts]))}
        liveUrl={dashboard.url('/dashboard/queues/table')}
        action={(name) => dashboard.url(`/dashboard/queues/${encodeURIComponent(name)}`)}
      />
    )
  }
  liveTab(
    '/dashboard/queues',
    {
      title: 'Queues',
      headingId: 'queues-title',
      active: 'queues',
      intro: (
        <p class="muted">
          Changes apply at once on every instance. Leave a field empty to keep it; type{' '}
          <code>unlimited</code> to remove the limit. A paused queue still accepts tasks, but no
          instance starts them until it is resumed; running tasks finish.
        </p>
      ),
    },
    queuesTable,
  )

  // ---- Workers ------------------------------------------------------------------------------
  liveTab(
    '/dashboard/workers',
    {
      title: 'Workers',
      headingId: 'workers-title',
      active: 'workers',
      intro: (
        <p class="muted">
          Every task manager sharing the store reports here about every 5 seconds. An instance is
          alive while its last report is at most 15 s old; one that shut down reads dead at once.
          Dead instances stay listed for an hour.
        </p>
      ),
    },
    async () => <WorkersTable dashboard={dashboard} workers={await manager.listWorkers()} />,
  )

  // ---- Dead Letters -------------------------------------------------------------------------
  const deadLetters = async (filters: DeadLetterFilters, actions: boolean) => {
    // Retried failures are left out by the store's own filter (pages and count alike), unless
    // asked for.
    const page = await manager.listStoredTasks({
      status: 'failed',
      since: windowStart(filters.window, context.now()),
      ...(filters.retried ? {} : { retried: false }),
      page: filters.page,
      perPage: DEAD_LETTERS_PER_PAGE,
      countLimit: (filters.page - 1) * DEAD_LETTERS_PER_PAGE + RUNS_COUNTED_AHEAD,
    })
    return <DeadLetters dashboard={dashboard} filters={filters} page={page} actions={actions} />
  }
  liveTab(
    '/dashboard/dead-letters',
    { title: 'Dead Letters', headingId: 'dead-title', active: 'dead-letters' },
    (request) => deadLetters(deadLetterFilters(request), dashboard.canAct(request)),
  )
  // The replay dialog only leads to a replay: operators and admins.
  const replayDialog = {
    config: { ...PAGE.config, role: 'operator' },
    schema: PAGE.schema,
  } as const
  app.get('/dashboard/dead-letters/replay', replayDialog, async (request, reply) => {
    const { window } = deadLetterFilters(request)
    const ids = await failedTaskIds(context, window, undefined)
    return html(
      reply,
      <ReplayDialog
        dashboard={dashboard}
        window={window}
        count={ids.length}
        capped={ids.length >= RETRY_FAILED_LIMIT}
      />,
    )
  })

  // ---- Audit (only with auth) ---------------------------------------------------------------
  const auditTable = async (request: FastifyRequest) => {
    if (!dashboard.authenticated) {
      throw new TaskAdminNotFoundError('The audit tab exists only when the task admin has auth.')
    }
    const page = pageParam(request)
    const result = await context.data.listAudit(page, AUDIT_PER_PAGE)
    return (
      <AuditTable dashboard={dashboard} entries={result.items} page={page} total={result.total} />
    )
  }
  liveTab(
    '/dashboard/audit',
    { title: 'Audit', headingId: 'audit-title', active: 'audit' },
    auditTable,
  )
}

/** The message of a list error a user can fix (a 4xx); anything else is thrown on. */
function toClientError(error: unknown): string {
  if (
    typeof error === 'object' &&
    error !== null &&
    'statusCode' in error &&
    typeof error.statusCode === 'number' &&
    error.statusCode < 500 &&
    error instanceof Error
  ) {
    return error.message
  }
  throw error
}
