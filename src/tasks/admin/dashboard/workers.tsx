/**
 * The Workers tab: the task-manager instances sharing the store, live ones and those that died
 * within the hour, each with its host, pid, queues and what it was running at its last
 * heartbeat. A task's detail links here ("Ran on"): each row's anchor is the instance id.
 */
import { Badge, DataTable, Empty, Time, TimeCell } from '../../../ui/index.js'
import type { WorkerInfo } from '../../workers.js'
import { detailUrl, workerAnchor } from './detail.js'
import type { TaskDashboard } from './view.js'

/** What a worker runs: the named tasks linked to their detail, and how many more. */
function RunningCell(props: { dashboard: TaskDashboard; worker: WorkerInfo }): JSX.Element {
  const { worker } = props
  if (worker.running === 0) return <td class="muted">nothing</td>
  const more = worker.running - worker.running_tasks.length
  return (
    <td>
      {worker.running_tasks.map((task) => (
        <div>
          <a href={detailUrl(props.dashboard, task.task_id)} safe>
            {task.func_name}
          </a>{' '}
          <span class="mono muted" safe>
            {task.task_id}
          </span>
        </div>
      ))}
      {more > 0 ? <div class="muted" safe>{`and ${more} more`}</div> : ''}
    </td>
  )
}

/** The Workers tab's content; reloads with task changes and every 10 s (heartbeats age). */
export function WorkersTable(props: {
  dashboard: TaskDashboard
  workers: readonly WorkerInfo[]
}): JSX.Element {
  const { dashboard, workers } = props
  const now = dashboard.context.now()
  const live = workers.filter((worker) => worker.alive).length
  const liveUrl = dashboard.url('/dashboard/workers/table')
  return (
    <div
      id="workers"
      data-live="task"
      data-live-url={liveUrl}
      hx-get={liveUrl}
      hx-trigger="every 10s"
      hx-swap="outerHTML"
    >
      <p class="counts">
        <span class="count">
          <strong>{live}</strong>
          <span>alive</span>
        </span>
        <span class="count">
          <strong>{workers.length - live}</strong>
          <span>stopped or lost in the last hour</span>
        </span>
      </p>
      <DataTable
        caption="Workers"
        columns={[
          'Instance',
          'State',
          'Host',
          { label: 'PID', numeric: true, hideNarrow: true },
          { label: 'Started', hideNarrow: true },
          'Last seen',
          'Queues',
          'Running',
        ]}
        empty={
          workers.length === 0 && (
            <Empty title="No workers have reported in the last hour.">
              <p>Each task manager reports here about every 5 seconds once it has started.</p>
            </Empty>
          )
        }
      >
        {workers.map((worker) => (
          <tr id={workerAnchor(worker.id)}>
            <td class="mono" safe>
              {worker.id}
            </td>
            <td>
              {worker.alive ? (
                <Badge tone="ok" label="alive" />
              ) : (
                <Badge
                  tone="plain"
                  label="dead"
                  title="Shut down, or no heartbeat for 15 s or more"
                />
              )}
            </td>
            <td safe>{worker.host}</td>
            <td class="num hide-narrow">{worker.pid}</td>
            <TimeCell at={worker.started_at} now={now} hideNarrow />
            <td>
              <Time at={worker.last_seen} now={now} />
            </td>
            <td safe>{worker.queues.join(', ')}</td>
            <RunningCell dashboard={dashboard} worker={worker} />
          </tr>
        ))}
      </DataTable>
    </div>
  )
}
