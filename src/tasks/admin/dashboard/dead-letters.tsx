/**
 * The Dead Letters tab: failed tasks of a window (1h, 6h, 24h, 7d, all), newest first, with
 * their errors; "Replay window" retries every failed task of the window after a confirmation
 * that names how many, and row checkboxes with "Replay selected" retry a chosen few.
 */
import type { FastifyRequest } from 'fastify'
import {
  DataTable,
  DialogContent,
  Empty,
  Pager,
  TimeCell,
  Truncated,
  pageParam,
  param,
} from '../../../ui/index.js'
import type { TaskPage } from '../../stores/ports.js'
import { detailUrl } from './detail.js'
import { Lineage, offersRetry, RetrySelectionForm, type RetryWording } from './parts.js'
import { WINDOWS, windowLabel, windowParam, type TaskDashboard } from './view.js'

/** The windows of the tab. */
export const DEAD_LETTER_WINDOWS = [...WINDOWS, 'all'] as const

/** Rows per page. */
export const DEAD_LETTERS_PER_PAGE = 50

/** The window and page of the tab, and whether retried tasks are shown. */
export interface DeadLetterFilters {
  window: string
  page: number
  /** Show failed tasks that were retried already (left out by default: their retry is the news). */
  retried: boolean
}

/** Reads the tab's window (default 24h), page and `retried=1`. */
export function deadLetterFilters(request: FastifyRequest): DeadLetterFilters {
  return {
    window: windowParam(param(request, 'window'), DEAD_LETTER_WINDOWS, '24h'),
    page: pageParam(request),
    retried: param(request, 'retried') === '1',
  }
}

const phrase = (window: string) =>
  window === 'all' ? 'ever' : `in the last ${windowLabel(window)}`

/** The tab's wording for the selection form: here a retry of failed tasks is a replay. */
const REPLAY_WORDING: RetryWording = {
  staleNotice:
    'New failures arrived while you were selecting; they show after the replay or a reload.',
  confirm: 'Replay the selected failed tasks?',
  submitLabel: 'Replay selected',
}

/** What the tab shows: one page of failed tasks in the chosen window. */
interface DeadLettersProps {
  dashboard: TaskDashboard
  filters: DeadLetterFilters
  page: TaskPage
  /** False for a viewer: no replay button, no selection. */
  actions: boolean
}

/** The tab's content: the window selector, the replay actions and the table. */
export function DeadLetters(props: DeadLettersProps): JSX.Element {
  const { dashboard, filters, page, actions } = props
  const now = dashboard.context.now()
  const query = (values: Partial<DeadLetterFilters>) => {
    const merged = { ...filters, ...values }
    return {
      window: merged.window === '24h' ? undefined : merged.window,
      page: merged.page === 1 ? undefined : merged.page,
      retried: merged.retried ? '1' : undefined,
    }
  }
  const wider = DEAD_LETTER_WINDOWS[DEAD_LETTER_WINDOWS.indexOf(filters.window as '24h') + 1]
  return (
    <div
      id="dead-letters"
      data-live="task"
      data-live-url={dashboard.url('/dashboard/dead-letters/table', query({}))}
      data-live-highlight
    >
      <div class="filters">
        <nav class="tabs" aria-label="Window">
          {DEAD_LETTER_WINDOWS.map((window) => (
            <a
              href={dashboard.url('/dashboard/dead-letters', query({ window, page: 1 }))}
              aria-current={window === filters.window ? 'page' : undefined}
            >
              {window}
            </a>
          ))}
        </nav>
        <a
          class="btn"
          href={dashboard.url(
            '/dashboard/dead-letters',
            query({ retried: !filters.retried, page: 1 }),
          )}
          aria-pressed={filters.retried ? 'true' : 'false'}
          role="button"
        >
          {filters.retried ? 'Hide retried' : 'Show retried'}
        </a>
        {actions ? (
          <button
            class="btn btn-primary"
            type="button"
            hx-get={dashboard.url('/dashboard/dead-letters/replay', { window: filters.window })}
            hx-target="#ui-dialog-body"
            disabled={page.total === 0}
          >
            Replay window…
          </button>
        ) : (
          ''
        )}
      </div>
      <RetrySelectionForm
        action={dashboard.url('/dashboard/bulk-retry')}
        wording={REPLAY_WORDING}
        hasRows={page.items.length > 0}
        actions={actions}
      >
        <DataTable
          caption={`Failed tasks ${phrase(filters.window)}`}
          columns={[
            ...(actions ? [{ label: 'Select' }] : []),
            'Function',
            'Error',
            'Ended',
            { label: 'Retries', numeric: true, hideNarrow: true },
            { label: 'Queue', hideNarrow: true },
          ]}
          empty={
            page.items.length === 0 && (
              <Empty title={`No failed tasks ${phrase(filters.window)}.`}>
                {wider === undefined ? (
                  <p>Nothing has failed.</p>
                ) : (
                  <p>
                    <a
                      href={dashboard.url(
                        '/dashboard/dead-letters',
                        query({ window: wider, page: 1 }),
                      )}
                      safe
                    >
                      {`Look at ${wider === 'all' ? 'all time' : `the last ${windowLabel(wider)}`}`}
                    </a>
                  </p>
                )}
              </Empty>
            )
          }
        >
          {page.items.map(({ record }) => (
            <tr>
              {actions ? (
                <td class="select">
                  {offersRetry(record) ? (
                    <input
                      type="checkbox"
                      name="task_ids"
                      value={record.task_id}
                      aria-label={`Select ${record.func_name} ${record.task_id} for replay`}
                    />
                  ) : (
                    ''
                  )}
                </td>
              ) : (
                ''
              )}
              <td>
                <a class="key" href={detailUrl(dashboard, record.task_id)} safe>
                  {record.func_name}
                </a>
                <div class="mono muted" safe>
                  {record.task_id}
                </div>
                <Lineage record={record} href={(taskId) => detailUrl(dashboard, taskId)} />
              </td>
              <td>
                <Truncated text={record.error ?? ''} class="error-text" />
              </td>
              <TimeCell at={record.end_time} now={now} />
              <td class="num hide-narrow">{record.retries_used}</td>
              <td class="hide-narrow" safe>
                {record.queue}
              </td>
            </tr>
          ))}
        </DataTable>
      </RetrySelectionForm>
      <Pager
        page={page.page}
        perPage={DEAD_LETTERS_PER_PAGE}
        total={page.total}
        totalCapped={page.total_capped}
        href={(number) => dashboard.url('/dashboard/dead-letters', query({ page: number }))}
      />
    </div>
  )
}

/** The confirmation of "Replay window": names how many tasks it retries. */
export function ReplayDialog(props: {
  dashboard: TaskDashboard
  window: string
  count: number
  capped: boolean
}): JSX.Element {
  const { dashboard, window, count } = props
  const what = `${count}${props.capped ? '+' : ''} failed task${count === 1 ? '' : 's'}`
  return (
    <DialogContent title="Replay window">
      <form hx-post={dashboard.url('/dashboard/dead-letters/replay')} hx-swap="none">
        <input type="hidden" name="window" value={window} />
        <p safe>
          {count === 0
            ? `There are no failed tasks ${phrase(window)}.`
            : `Retry ${what} ${phrase(window)}? Each runs again as a new task.`}
        </p>
        <div class="form-actions">
          <button class="btn btn-primary" type="submit" disabled={count === 0} safe>
            {count === 0 ? 'Nothing to replay' : `Retry ${what}`}
          </button>
          <button class="btn" type="button" data-dialog-close>
            Cancel
          </button>
        </div>
      </form>
    </DialogContent>
  )
}
