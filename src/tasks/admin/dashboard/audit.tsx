/**
 * The Audit tab (only with auth): every write through the task admin — logins, retries,
 * cancels, bulk retries, replays, queue changes, history deletions — newest first.
 */
import { DataTable, Empty, Pager, Time, Truncated } from '../../../ui/index.js'
import type { TaskAuditEntry } from '../../stores/ports.js'
import { detailUrl } from './detail.js'
import type { TaskDashboard } from './view.js'

/** Entries per page. */
export const AUDIT_PER_PAGE = 50

/** The audit table. */
export function AuditTable(props: {
  dashboard: TaskDashboard
  entries: readonly TaskAuditEntry[]
  page: number
  total: number
}): JSX.Element {
  const { dashboard } = props
  const now = dashboard.context.now()
  return (
    <div
      id="audit"
      data-live={props.page === 1 ? 'task' : undefined}
      data-live-url={dashboard.url('/dashboard/audit/table', { page: props.page })}
      data-live-highlight
    >
      <DataTable
        caption="Task audit log, newest first"
        columns={['When', 'Action', 'Task', 'Actor', { label: 'Detail', hideNarrow: true }]}
        empty={
          props.entries.length === 0 && (
            <Empty title="No audit entries yet.">
              <p>Logins and every change made here or through the API are recorded.</p>
            </Empty>
          )
        }
      >
        {props.entries.map((entry) => (
          <tr id={`audit-${entry.id}`}>
            <td>
              <Time at={entry.timestamp} now={now} />
            </td>
            <td class="mono" safe>
              {entry.action}
            </td>
            <td>
              {entry.task_id === null ? (
                <span class="muted">—</span>
              ) : (
                <a class="mono" href={detailUrl(dashboard, entry.task_id)} safe>
                  {entry.task_id}
                </a>
              )}
            </td>
            <td safe>{entry.actor}</td>
            <td class="hide-narrow">
              <Truncated text={JSON.stringify(entry.detail)} class="mono" />
            </td>
          </tr>
        ))}
      </DataTable>
      <Pager
        page={props.page}
        perPage={AUDIT_PER_PAGE}
        total={props.total}
        href={(page) => dashboard.url('/dashboard/audit', { page: page === 1 ? undefined : page })}
      />
    </div>
  )
}
