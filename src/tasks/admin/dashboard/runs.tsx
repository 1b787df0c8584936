/**
 * The View tab: what is failing, how much, since when — metric cards (totals by status, success
 * rate, P95 overall), the throughput chart, P95 per function — then the run table with its
 * filters (range, queue, status, search), pages, bulk retry of the selected rows, retry, cancel
 * or deletion of every run the filters match, and live rows.
 */
import type { FastifyRequest } from 'fastify'
import {
  DataTable,
  FilterSelect,
  FilterSubmit,
  Empty,
  FormError,
  ListPager,
  SearchBox,
  TimeCell,
  Truncated,
  domId,
  formatDuration,
  pageParam,
  param,
  TableHead,
} from '../../../ui/index.js'
import type { TaskMetrics } from '../../metrics-report.js'
import type { TaskPage } from '../../stores/ports.js'
import { TASK_STATUSES, type TaskStatus } from '../../status.js'
import { windowStart } from '../serialize.js'
import { bucketSeries, ThroughputChart } from './chart.js'
import {
  Duration,
  Lineage,
  offersRetry,
  ProgressBar,
  RetrySelectionForm,
  StatusBadge,
  type RetryWording,
} from './parts.js'
import { parseRunSearch, type RunSearch } from './search.js'
import { WINDOWS, windowLabel, windowParam, type TaskDashboard } from './view.js'

/** Rows per page of the run table. */
export const RUNS_PER_PAGE = 50

/**
 * Matching records counted past the current page, at most: the pager then says "of ≥ N" over
 * a large history instead of counting all of it on every render.
 */
export const RUNS_COUNTED_AHEAD = 1000

const RANGES = [...WINDOWS, 'all'] as const

/** The filters of the run table, as the URL carries them. */
export interface RunFilters {
  range: string
  queue: string
  status: string
  search: string
  page: number
}

/** Reads the filters from the query (unknown values fall back to their defaults). */
export function runFilters(request: FastifyRequest): RunFilters {
  const status = param(request, 'status')
  return {
    range: windowParam(param(request, 'range'), RANGES, '24h'),
    queue: param(request, 'queue').slice(0, 255),
    status: (TASK_STATUSES as readonly string[]).includes(status) ? status : '',
    search: param(request, 'q').slice(0, 1000),
    page: pageParam(request),
  }
}

/** The filters as query values (defaults left out). */
export function runQuery(filters: RunFilters, page = filters.page) {
  return {
    range: filters.range === '24h' ? undefined : filters.range,
    queue: filters.queue,
    status: filters.status,
    q: filters.search,
    page: page === 1 ? undefined : page,
  }
}

/**
 * The page of runs for `filters`. A search with a problem (an unknown status, a malformed tag)
 * lists nothing: the list under its message must not look like the answer to it.
 */
export async function loadRuns(
  dashboard: TaskDashboard,
  filters: RunFilters,
): Promise<{ page: TaskPage; search: RunSearch }> {
  const search = parseRunSearch(filters.search)
  if (search.problems.length > 0) {
    return { page: { items: [], total: 0, page: 1, per_page: RUNS_PER_PAGE }, search }
  }
  const { manager, now } = dashboard.context
  const page = await manager.listStoredTasks({
    status: search.status ?? ((filters.status || undefined) as TaskStatus | undefined),
    funcName: search.funcName,
    queue: search.queue ?? (filters.queue || undefined),
    q: search.q,
    tags: search.tags,
    since: windowStart(filters.range, now()),
    page: filters.page,
    perPage: RUNS_PER_PAGE,
    countLimit: (filters.page - 1) * RUNS_PER_PAGE + RUNS_COUNTED_AHEAD,
  })
  return { page, search }
}

/** One row of the run table (also the live row fragment). */
export function RunRow(props: {
  dashboard: TaskDashboard
  task: TaskPage['items'][number]
  now: number
  /** False for a viewer: no selection column. */
  actions: boolean
}): JSX.Element {
  const { dashboard, task, now } = props
  const record = task.record
  const id = record.task_id
  const retryable = offersRetry(record)
  return (
    <tr id={domId('run', id)} data-live="task" data-live-key={id}>
      {props.actions ? (
        <td class="select">
          {retryable ? (
            <input
              type="checkbox"
              name="task_ids"
              value={id}
              aria-label={`Select ${record.func_name} ${id} for retry`}
            />
          ) : (
            ''
          )}
        </td>
      ) : (
        ''
      )}
      <td>
        <StatusBadge status={record.status} />
        <ProgressBar record={record} />
      </td>
      <td>
        <a class="key" href={dashboard.url(`/dashboard/task/${encodeURIComponent(id)}`)} safe>
          {record.func_name}
        </a>
        <div class="mono muted" safe>
          {id}
        </div>
        <Lineage
          record={record}
          href={(taskId) => dashboard.url(`/dashboard/task/${encodeURIComponent(taskId)}`)}
        />
        {record.error === null ? '' : <Truncated text={record.error} class="error-text" />}
      </td>
      <td class="hide-narrow" safe>
        {record.queue}
      </td>
      <td class="hide-narrow">{record.source}</td>
      <TimeCell at={record.created_at} now={now} />
      <TimeCell at={record.start_time} now={now} hideNarrow />
      <td class="num">
        <Duration record={record} />
      </td>
      <td class="num hide-narrow">{record.retries_used}</td>
      {dashboard.context.displayFuncArgs ? (
        <td class="hide-narrow">
          <Truncated text={task.args === null ? '(encrypted)' : JSON.stringify(task.args)} />
        </td>
      ) : (
        ''
      )}
    </tr>
  )
}

/** The run table retries failed or interrupted tasks. */
const RETRY_WORDING: RetryWording = {
  staleNotice:
    'New changes arrived while you were selecting; they show after the retry or a reload.',
  confirm: 'Retry the selected failed or interrupted tasks?',
  submitLabel: 'Retry selected',
}

/** The run table with its pager and the bulk-retry form; follows the stream on page 1. */
export function RunsTable(props: {
  dashboard: TaskDashboard
  filters: RunFilters
  page: TaskPage | null
  search: RunSearch | null
  error?: string
  /** False for a viewer: no selection and no retry button. */
  actions: boolean
}): JSX.Element {
  const { dashboard, filters, page, actions } = props
  const now = dashboard.context.now()
  const columns = [
    ...(actions ? [{ label: 'Select' }] : []),
    'Status',
    'Function',
    { label: 'Queue', hideNarrow: true },
    { label: 'Source', hideNarrow: true },
    'Created',
    { label: 'Started', hideNarrow: true },
    { label: 'Duration', numeric: true },
    { label: 'Retries', numeric: true, hideNarrow: true },
    ...(dashboard.context.displayFuncArgs ? [{ label: 'Arguments', hideNarrow: true }] : []),
  ]
  const problems = props.search?.problems ?? []
  return (
    <div
      id="runs"
      data-live-fallback={filters.page === 1 ? 'task' : undefined}
      data-live-url={dashboard.url('/dashboard/runs', runQuery(filters))}
      data-live-row-url={dashboard.url('/dashboard/runs/row')}
      data-live-highlight
    >
      <FormError message={props.error} />
      {problems.length === 0 ? (
        ''
      ) : (
        <div role="alert">
          <ul class="form-error">
            {problems.map((problem) => (
              <li safe>{problem}</li>
            ))}
          </ul>
        </div>
      )}
      {actions && page !== null && page.items.length > 0 ? (
        <SelectAllMatching dashboard={dashboard} filters={filters} />
      ) : (
        ''
      )}
      <RetrySelectionForm
        action={dashboard.url('/dashboard/bulk-retry')}
        wording={RETRY_WORDING}
        hasRows={page !== null && page.items.length > 0}
        actions={actions}
      >
        <DataTable
          caption="Task runs, newest first"
          columns={columns}
          empty={
            (page === null || page.items.length === 0) && (
              <Empty title={`No tasks match in ${windowLabel(filters.range)}.`}>
                <p>
                  {filters.range === 'all' ? (
                    'Tasks appear here as soon as they are enqueued.'
                  ) : (
                    <a
                      href={dashboard.url('/dashboard', runQuery({ ...filters, range: 'all' }, 1))}
                    >
                      Show all time
                    </a>
                  )}
                </p>
              </Empty>
            )
          }
        >
          {(page?.items ?? []).map((task) => (
            <RunRow dashboard={dashboard} task={task} now={now} actions={actions} />
          ))}
        </DataTable>
      </RetrySelectionForm>
      <ListPager
        list={page}
        perPage={RUNS_PER_PAGE}
        href={(number) => dashboard.url('/dashboard', runQuery(filters, number))}
      />
    </div>
  )
}

/** The filter form of the run table. */
export function RunFilterForm(props: {
  dashboard: TaskDashboard
  filters: RunFilters
  queues: readonly string[]
}): JSX.Element {
  const { dashboard, filters } = props
  return (
    <form class="filters" method="get" action={dashboard.url('/dashboard')} role="search">
      <SearchBox
        value={filters.search}
        label="Search runs"
        placeholder="id prefix, function, status:failed tag:region=eu"
      />
      <FilterSelect
        id="range-filter"
        name="range"
        label="Range"
        value={filters.range}
        options={RANGES.map((range) => ({
          value: range,
          label: range === 'all' ? 'All time' : `Last ${windowLabel(range)}`,
        }))}
      />
      <FilterSelect
        id="queue-filter"
        name="queue"
        label="Queue"
        value={filters.queue}
        any="Any queue"
        options={props.queues.map((queue) => ({ value: queue, label: queue }))}
      />
      <FilterSelect
        id="status-filter"
        name="status"
        label="Status"
        value={filters.status}
        any="Any status"
        options={TASK_STATUSES.map((status) => ({ value: status, label: status }))}
      />
      <FilterSubmit hintClass="muted hide-narrow" />
    </form>
  )
}

function percent(rate: number): string {
  return `${(rate * 100).toFixed(rate >= 0.999 || rate === 0 ? 0 : 1)}%`
}

function seconds(value: number | null): string {
  return value === null ? '—' : formatDuration(value * 1000)
}

/** Most functions listed in the P95 table (the busiest first). */
const MAX_FUNCTIONS = 12

/** A range's metrics as the panel shows them. */
export interface RangeMetrics extends TaskMetrics {
  /**
   * Failures created in the range that were retried since: the failed card leaves them out, as
   * Dead Letters does (their retry is what needs watching).
   */
  retried_failed: number
}

/** The metric cards, the chart and P95 per function over the range; refreshed on every change. */
export function MetricsPanel(props: {
  dashboard: TaskDashboard
  filters: RunFilters
  metrics: RangeMetrics
  from: number
  /**
   * When set, the panel fetches itself again after this many ms: its figures may predate the
   * change that made the page ask for them (they came from the cache).
   */
  recheckInMs?: number | null
}): JSX.Element {
  const { dashboard, filters, metrics } = props
  const recheck = props.recheckInMs ?? null
  const liveUrl = dashboard.url('/dashboard/metrics', runQuery(filters, 1))
  const now = dashboard.context.now()
  const runs = (name: TaskStatus) => metrics.by_status[name]
  const finished = runs('success') + runs('failed')
  // The cards count what needs attention: a failure retried since is left out.
  const status = (name: TaskStatus) =>
    name === 'failed' ? Math.max(0, runs(name) - metrics.retried_failed) : runs(name)
  const statusLink = (name: string) =>
    dashboard.url('/dashboard', runQuery({ ...filters, status: name }, 1))
  const functions = Object.entries(metrics.by_function)
    .sort((a, b) => b[1].total - a[1].total)
    .slice(0, MAX_FUNCTIONS)
  return (
    <section
      id="run-metrics"
      aria-labelledby="metrics-title"
      data-live="task"
      data-live-url={liveUrl}
      hx-get={recheck === null ? undefined : liveUrl}
      hx-trigger={recheck === null ? undefined : `load delay:${Math.ceil(recheck)}ms`}
      hx-swap={recheck === null ? undefined : 'outerHTML'}
    >
      <h2 id="metrics-title" class="visually-hidden" safe>
        {`Metrics over ${windowLabel(filters.range)}`}
      </h2>
      <nav class="counts" aria-label="Tasks by status">
        <a class="count" href={statusLink('')}>
          <strong>{metrics.total}</strong>
          <span>All tasks</span>
        </a>
        {TASK_STATUSES.map((name) => (
          <a
            class={`count${name === 'failed' && status(name) > 0 ? ' count-bad' : ''}`}
            href={statusLink(name)}
            title={
              name === 'failed' && metrics.retried_failed > 0
                ? `${metrics.retried_failed} retried failures not counted`
                : undefined
            }
            aria-current={filters.status === name ? 'true' : undefined}
          >
            <strong>{status(name)}</strong>
            <span>{name}</span>
          </a>
        ))}
        <div class="count">
          <strong safe>{finished === 0 ? '—' : percent(metrics.success_rate)}</strong>
          <span>success rate</span>
        </div>
        <div class="count">
          <strong safe>{seconds(metrics.p95_duration_seconds)}</strong>
          <span>P95 duration</span>
        </div>
      </nav>
      <div class="metrics-grid">
        <div class="panel">
          <ThroughputChart buckets={bucketSeries(metrics.series ?? [], props.from, now)} />
        </div>
        {/* focusable: at phone width the table scrolls sideways, also by keyboard */}
        <div class="table-wrap" tabindex="0" role="region" aria-label="P95 duration per function">
          <table>
            <caption>P95 duration per function</caption>
            <TableHead
              columns={[
                'Function',
                { label: 'Runs', numeric: true },
                { label: 'Failed', numeric: true },
                { label: 'P95', numeric: true },
              ]}
            />
            <tbody>
              {functions.length === 0 ? (
                <tr>
                  <td colspan="4" class="muted">
                    No finished tasks in this range.
                  </td>
                </tr>
              ) : (
                functions.map(([name, figures]) => (
                  <tr>
                    <td class="key">
                      <a
                        href={dashboard.url(
                          '/dashboard',
                          runQuery({ ...filters, search: `func:${name}` }, 1),
                        )}
                        safe
                      >
                        {name}
                      </a>
                    </td>
                    <td class="num">{figures.total}</td>
                    <td class={figures.failed > 0 ? 'num bad' : 'num'}>{figures.failed}</td>
                    <td class="num" safe>
                      {seconds(figures.p95_duration_seconds)}
                    </td>
                  </tr>
                ))
              )}
            </tbody>
          </table>
        </div>
      </div>
    </section>
  )
}

/** The start of the metrics range: the window's start, or a week back for `all` (the chart). */
export function metricsStart(range: string, now: number): number {
  return windowStart(range === 'all' ? '7d' : range, now) ?? now
}

/** The metrics panel before its first read finished: it loads itself. */
export function MetricsLoading(props: { dashboard: TaskDashboard; filters: RunFilters }) {
  return (
    <section
      id="run-metrics"
      aria-label="Metrics"
      aria-busy="true"
      hx-get={props.dashboard.url('/dashboard/metrics', runQuery(props.filters, 1))}
      hx-trigger="load"
      hx-swap="outerHTML"
    >
      <p class="muted">Loading metrics…</p>
    </section>
  )
}

/** The "Select all matching" button above the run table (operators and admins only). */
export function SelectAllMatching(props: {
  dashboard: TaskDashboard
  filters: RunFilters
}): JSX.Element {
  const { dashboard, filters } = props
  return (
    <div class="form-actions">
      <button
        type="button"
        class="btn"
        data-action="bulk-select-all"
        hx-get={dashboard.url('/dashboard/bulk', runQuery(filters, 1))}
        hx-target="#ui-dialog-body"
      >
        Select all matching this filter…
      </button>
    </div>
  )
}
