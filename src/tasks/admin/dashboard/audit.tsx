/**
 * The Audit tab (only with auth): every write through the task admin — retries,
 * cancels, bulk retries, replays, queue changes, history deletions — newest first.
 */
import { Empty, LiveList, TimeCell, Truncated } from '../../../ui/index.js'
import type { TaskAuditEntry } from '../../stores/ports.js'
import { detailUrl } from './detail.js'
import type { TaskDashboard } from './view.js'

/** Entries per page. */
export const AUDIT_PER_PAGE = 50

/** The audit table, a {@link LiveList}: its first page follows the stream. */
export function AuditTable(props: {
  dashboard: TaskDashboard
  entries: readonly TaskAuditEntry[]
  page: number
  total: number
}): JSX.Element {
  const { dashboard, page } = props
  const now = dashboard.context.now()
  return (
    <LiveList
      id="audit"
      event="task"
      page={page}
      refreshUrl={dashboard.url('/dashboard/audit/table', { page })}
      error={undefined}
      caption="Task audit log, newest first"
      columns={['When', 'Action', 'Task', 'Actor', { label: 'Detail', hideNarrow: true }]}
      list={{ items: props.entries, page, total: props.total }}
      empty={
        <Empty title="No audit entries yet.">
          <p>Every change made here or through the API is recorded.</p>
        </Empty>
      }
      perPage={AUDIT_PER_PAGE}
      href={(to) => dashboard.url('/dashboard/audit', { page: to === 1 ? undefined : to })}
      row={(entry) => (
        <tr id={`audit-${entry.id}`}>
          <TimeCell at={entry.timestamp} now={now} />
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
      )}
    />
  )
}
