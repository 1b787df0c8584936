/**
 * The Tasks tab (every registered function with its config) and the Schedules tab (periodic
 * entries with their trigger, next run and last status; one-off entries only as a count).
 */
import { Badge, DataTable, Empty, TimeCell } from '../../../ui/index.js'
import type { TaskHandle } from '../../registry.js'
import type { ScheduleRow } from '../schedule-rows.js'
import { detailUrl } from './detail.js'
import { StatusBadge } from './parts.js'
import { runQuery, type RunFilters } from './runs.js'
import type { TaskDashboard } from './view.js'

const ALL_RUNS: RunFilters = { range: 'all', queue: '', status: '', search: '', page: 1 }

/** A link to the runs of one function. */
function RunsLink(props: { dashboard: TaskDashboard; name: string }): JSX.Element {
  return (
    <a
      class="key"
      href={props.dashboard.url(
        '/dashboard',
        runQuery({ ...ALL_RUNS, search: `func:${props.name}` }),
      )}
      safe
    >
      {props.name}
    </a>
  )
}

/** The Tasks tab's table. */
export function TasksTable(props: {
  dashboard: TaskDashboard
  tasks: readonly TaskHandle[]
  schedules: ReadonlyMap<string, string>
}): JSX.Element {
  const { dashboard } = props
  return (
    <DataTable
      caption="Registered task functions"
      columns={[
        'Function',
        { label: 'Retries', numeric: true },
        { label: 'Delay', numeric: true, hideNarrow: true },
        { label: 'Backoff', numeric: true, hideNarrow: true },
        'Executor',
        'Queue',
        { label: 'Priority', numeric: true, hideNarrow: true },
        { label: 'Persist', hideNarrow: true },
        'Schedule',
      ]}
      empty={
        props.tasks.length === 0 && (
          <Empty title="No task functions are registered.">
            <p>
              Register one with <code>manager.task(options, fn)</code>.
            </p>
          </Empty>
        )
      }
    >
      {props.tasks.map((task) => {
        const d = task.definition
        return (
          <tr>
            <td>
              <RunsLink dashboard={dashboard} name={d.name} />
            </td>
            <td class="num">{d.retries}</td>
            <td class="num hide-narrow" safe>
              {`${d.delay} s`}
            </td>
            <td class="num hide-narrow" safe>
              {`×${d.backoff}`}
            </td>
            <td>{d.executor}</td>
            <td safe>{d.queue ?? 'default'}</td>
            <td class="num hide-narrow" safe>
              {d.priority === null ? '—' : String(d.priority)}
            </td>
            <td class="hide-narrow">{d.persist ? 'yes' : 'no'}</td>
            <td safe>{props.schedules.get(d.name) ?? '—'}</td>
          </tr>
        )
      })}
    </DataTable>
  )
}

/**
 * The Schedules tab's content; with `actions` (operators), each schedule has Pause / Resume and
 * Run now buttons.
 */
export function SchedulesView(props: {
  dashboard: TaskDashboard
  schedules: readonly ScheduleRow[]
  oneOffArmed: number
  actions?: boolean
}): JSX.Element {
  const { dashboard } = props
  const actionUrl = (name: string, verb: string) =>
    dashboard.url(`/dashboard/schedules/${encodeURIComponent(name)}/${verb}`)
  const now = dashboard.context.now()
  return (
    <div
      id="schedules"
      data-live="task"
      data-live-url={dashboard.url('/dashboard/schedules/table')}
    >
      <p class="counts">
        <span class="count">
          <strong>{props.schedules.length}</strong>
          <span>periodic schedules</span>
        </span>
        <span class="count">
          <strong>{props.oneOffArmed}</strong>
          <span>one-off runs armed</span>
        </span>
      </p>
      <DataTable
        caption="Periodic schedules"
        columns={['Function', 'Trigger', 'State', 'Next run', 'Last run', 'Last status']}
        empty={
          props.schedules.length === 0 && (
            <Empty title="No periodic schedules.">
              <p>
                Add one with <code>manager.schedule(trigger, fn)</code>.
              </p>
            </Empty>
          )
        }
      >
        {props.schedules.map((schedule) => (
          <tr>
            <td>
              <RunsLink dashboard={dashboard} name={schedule.name} />
            </td>
            <td class="mono" safe>
              {schedule.trigger}
            </td>
            <td>
              <span class="row-actions">
                {schedule.paused ? (
                  <Badge tone="warn" label="paused" title="No slot fires on any instance" />
                ) : (
                  <Badge tone="ok" label="active" />
                )}
                {props.actions === true ? (
                  <>
                    <button
                      class="btn btn-small"
                      type="button"
                      hx-post={actionUrl(schedule.name, schedule.paused ? 'resume' : 'pause')}
                      hx-target="#schedules"
                      hx-swap="outerHTML"
                      aria-label={`${schedule.paused ? 'Resume' : 'Pause'} schedule ${schedule.name}`}
                    >
                      {schedule.paused ? 'Resume' : 'Pause'}
                    </button>
                    <button
                      class="btn btn-small"
                      type="button"
                      hx-post={actionUrl(schedule.name, 'run')}
                      hx-target="#schedules"
                      hx-swap="outerHTML"
                      hx-confirm={`Run ${schedule.name} now?`}
                      aria-label={`Run now: ${schedule.name}`}
                    >
                      Run now
                    </button>
                  </>
                ) : (
                  ''
                )}
              </span>
            </td>
            <TimeCell at={schedule.next_run} now={now} empty="never" />
            <TimeCell at={schedule.last_run_at} now={now} empty="never" />
            <td>
              {schedule.last_status === null || schedule.last_task_id === null ? (
                <span class="muted">not run yet</span>
              ) : (
                <a href={detailUrl(dashboard, schedule.last_task_id)}>
                  <StatusBadge status={schedule.last_status} />
                </a>
              )}
            </td>
          </tr>
        ))}
      </DataTable>
    </div>
  )
}
