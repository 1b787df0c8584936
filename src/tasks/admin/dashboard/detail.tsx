/**
 * The task detail: status, progress, timing, tags, the error with its stack trace, and the log
 * lines (levels, retry markers), with Retry or Cancel as the record allows. The panel follows
 * the stream for its task.
 */
import { Empty, Time, domId, formatDuration } from '../../../ui/index.js'
import type { StoredTask } from '../../record.js'
import {
  Lineage,
  LogLines,
  LongValue,
  offersRetry,
  ProgressBar,
  StatusBadge,
  Tags,
} from './parts.js'
import type { TaskDashboard } from './view.js'
import { FlowTree } from './flow-tree.js'
import type { TaskRecord } from '../../record.js'

/** The URL of a task's detail page. */
export function detailUrl(dashboard: TaskDashboard, taskId: string, suffix = ''): string {
  return dashboard.url(`/dashboard/task/${encodeURIComponent(taskId)}${suffix}`)
}

/** The DOM id of a worker's row on the Workers tab (the target of "Ran on" links). */
export function workerAnchor(workerId: string): string {
  return domId('worker', workerId)
}

/** The URL of a worker's row on the Workers tab. */
export function workerUrl(dashboard: TaskDashboard, workerId: string): string {
  return `${dashboard.url('/dashboard/workers')}#${workerAnchor(workerId)}`
}

/** The detail panel of one task (also the live fragment). */
export function TaskDetail(props: {
  dashboard: TaskDashboard
  task: StoredTask
  /** False for a viewer: no retry or cancel button. */
  actions: boolean
  /** The records of the task's flow (see `flowOf`), or null for a task outside any flow. */
  flow?: { records: TaskRecord[]; total: number } | null
}): JSX.Element {
  const { dashboard, task } = props
  const record = task.record
  const id = record.task_id
  const now = dashboard.context.now()
  const cancellable = record.status === 'pending' || record.status === 'running'
  return (
    <div
      id="task-detail"
      data-live="task"
      data-live-key={id}
      data-live-url={detailUrl(dashboard, id, '/panel')}
    >
      <div class="page-head">
        <h1>
          <span class="mono" safe>
            {record.func_name}
          </span>{' '}
          <StatusBadge status={record.status} />
        </h1>
        <div class="row-actions">
          {props.actions && offersRetry(record) ? (
            <button
              class="btn btn-primary"
              hx-post={detailUrl(dashboard, id, '/retry')}
              hx-confirm={`Retry ${record.func_name} (${id})?`}
            >
              Retry
            </button>
          ) : (
            ''
          )}
          {props.actions && cancellable ? (
            <button
              class="btn btn-danger"
              hx-post={detailUrl(dashboard, id, '/cancel')}
              hx-target="#task-detail"
              hx-swap="outerHTML"
              hx-confirm={`Cancel ${record.func_name} (${id})?`}
            >
              Cancel
            </button>
          ) : (
            ''
          )}
        </div>
      </div>
      {record.progress === null ? (
        ''
      ) : (
        <p>
          <ProgressBar record={record} />
        </p>
      )}
      <section class="panel" aria-labelledby="summary-title">
        <h2 id="summary-title">Summary</h2>
        <dl class="props">
          <dt>Task id</dt>
          <dd class="mono" safe>
            {id}
          </dd>
          <dt>Queue</dt>
          <dd safe>{record.queue}</dd>
          <dt>Executor</dt>
          <dd>{record.executor}</dd>
          <dt>Ran on</dt>
          <dd>
            {record.worker === undefined || record.worker === null ? (
              <span class="muted">{record.start_time === null ? 'not started' : 'unknown'}</span>
            ) : (
              <a class="mono" href={workerUrl(dashboard, record.worker)} safe>
                {record.worker}
              </a>
            )}
          </dd>
          <dt>Source</dt>
          <dd>
            {record.source}
            <Lineage record={record} href={(taskId) => detailUrl(dashboard, taskId)} />
          </dd>
          <dt>Priority</dt>
          <dd safe>{record.priority === null ? '—' : String(record.priority)}</dd>
          <dt>Created</dt>
          <dd>
            <Time at={record.created_at} now={now} />
          </dd>
          {record.expires_at === null ? (
            <></>
          ) : (
            <>
              <dt>Expires</dt>
              <dd>
                <Time at={record.expires_at} now={now} />
              </dd>
            </>
          )}
          <dt>Started</dt>
          <dd>
            <Time at={record.start_time} now={now} />
          </dd>
          <dt>Ended</dt>
          <dd>
            <Time at={record.end_time} now={now} />
          </dd>
          <dt>Duration</dt>
          <dd safe>{record.end_time === null ? '—' : formatDuration(record.duration * 1000)}</dd>
          <dt>Retries used</dt>
          <dd>{record.retries_used}</dd>
          <EnqueuedBy dashboard={dashboard} tags={record.tags} />
          <dt>Tags</dt>
          <dd>
            <Tags tags={record.tags} />
          </dd>
          <dt>Arguments</dt>
          <dd>
            {dashboard.context.displayFuncArgs ? (
              task.args === null ? (
                <span class="muted">encrypted</span>
              ) : (
                <LongValue text={JSON.stringify(task.args)} />
              )
            ) : (
              <span class="muted">
                Hidden: set <code>displayFuncArgs</code> to show them.
              </span>
            )}
          </dd>
          {record.status === 'success' ? (
            <>
              <dt>Result</dt>
              <dd>
                <ResultValue task={task} shown={dashboard.context.displayResults} />
              </dd>
            </>
          ) : (
            ''
          )}
        </dl>
      </section>
      {record.error === null && record.stacktrace === null ? (
        ''
      ) : (
        <section class="panel" aria-labelledby="error-title">
          <h2 id="error-title">Error</h2>
          {record.error === null ? (
            ''
          ) : (
            <p class="error-text" safe>
              {record.error}
            </p>
          )}
          {record.stacktrace === null ? (
            ''
          ) : (
            <details open>
              <summary>Stack trace</summary>
              <pre class="stack" safe>
                {record.stacktrace}
              </pre>
            </details>
          )}
        </section>
      )}
      {props.flow === undefined || props.flow === null ? (
        ''
      ) : (
        <FlowTree flow={props.flow} current={id} href={(taskId) => detailUrl(dashboard, taskId)} />
      )}
      <section class="panel" aria-labelledby="logs-title">
        <h2 id="logs-title">Logs</h2>
        <LogLines logs={record.logs} />
      </section>
    </div>
  )
}

/**
 * The route that enqueued the task (its `route` tag, set by `request.backgroundTasks`): a link
 * to the route on the Routes page when the route-control admin shares the console, else its key.
 */
function EnqueuedBy(props: {
  dashboard: TaskDashboard
  tags: Readonly<Record<string, string>>
}): JSX.Element {
  if (!Object.hasOwn(props.tags, 'route')) return <></>
  const route = props.tags.route ?? ''
  const href = props.dashboard.routeUrl(route)
  return (
    <>
      <dt>Route</dt>
      <dd class="mono">
        {href === null ? (
          <span safe>{route}</span>
        ) : (
          <a href={href} title="This route on the Routes page" safe>
            {route}
          </a>
        )}
      </dd>
    </>
  )
}

/** A successful run's result, a hint naming `displayResults` when hidden, or why there is none. */
function ResultValue(props: { task: StoredTask; shown: boolean }): JSX.Element {
  const { task } = props
  if (!props.shown) {
    return (
      <span class="muted">
        Hidden: set <code>displayResults</code> to show it.
      </span>
    )
  }
  if (task.encrypted_args !== null) {
    return <span class="muted">Not recorded: the arguments are encrypted.</span>
  }
  if (task.result === undefined || task.result === null) {
    return <span class="muted">None recorded.</span>
  }
  return (
    <LongValue
      text={task.result}
      note={task.result_truncated === true ? ' … (cut at 64 KiB)' : undefined}
    />
  )
}

/** The detail of a task that does not exist (any more). */
export function MissingTask(props: { taskId: string }): JSX.Element {
  return (
    <div class="panel">
      <Empty title="No such task.">
        <p safe>{`Task ${props.taskId} does not exist, or its history was deleted.`}</p>
      </Empty>
    </div>
  )
}
