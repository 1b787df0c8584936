/**
 * "Select all matching this filter" on the Runs view: a button that opens the action dialog
 * with the number of records the run table's filters match (counted before anything is done),
 * and from there Retry, Cancel or — for admins — Delete of all of them, through the same bulk
 * actions as the JSON API (validated, limited, audited once). The answer is a toast with the
 * counts, and the table refreshes.
 */
import type { FastifyRequest } from 'fastify'
import { DialogContent, sendHtml, trigger, type QueryValues } from '../../../ui/index.js'
import { roleAllows } from '../../../common/roles.js'
import { TaskValidationError } from '../../errors.js'
import { countMatching, runBulk, type BulkAction, type BulkFilter } from '../bulk.js'
import type { TaskAdminInstance } from '../context.js'
import { runFilters, runQuery, type RunFilters } from './runs.js'
import { parseRunSearch } from './search.js'
import { PAGE, type TaskDashboard } from './view.js'

/** The verbs of the actions, for buttons and toasts. */
const VERBS: Record<BulkAction, { button: string; past: string }> = {
  retry: { button: 'Retry', past: 'Retried' },
  cancel: { button: 'Cancel', past: 'Cancelled' },
  delete: { button: 'Delete', past: 'Deleted' },
}

/** The bulk filter of the run table's filters; a search with problems is refused. */
export function bulkFilterOf(filters: RunFilters): BulkFilter {
  const search = parseRunSearch(filters.search)
  if (search.problems.length > 0) {
    throw new TaskValidationError(`Fix the search first: ${search.problems.join(' ')}`)
  }
  const filter: BulkFilter = { since: filters.range }
  const status = search.status ?? (filters.status || undefined)
  if (status !== undefined) filter.status = status as BulkFilter['status']
  if (search.funcName !== undefined) filter.func_name = search.funcName
  const queue = search.queue ?? (filters.queue || undefined)
  if (queue !== undefined) filter.queue = queue
  if (search.q !== undefined) filter.q = search.q
  if (search.tags.length > 0) filter.tag = search.tags.map(([key, value]) => `${key}=${value}`)
  return filter
}

/** Whether the request's principal may delete history (an admin). */
function canDelete(request: FastifyRequest): boolean {
  const role = request.taskAdmin?.role
  return role !== undefined && roleAllows(role, 'admin')
}

/** The dialog: how many records match, and the actions on all of them. */
function BulkConfirm(props: {
  dashboard: TaskDashboard
  filters: RunFilters
  count: number
  capped: boolean
  limit: number
  admin: boolean
}): JSX.Element {
  const { dashboard, filters, count } = props
  const query = runQuery(filters, 1) as QueryValues
  const noun = `task${count === 1 ? '' : 's'}`
  const actions: BulkAction[] = props.admin ? ['retry', 'cancel', 'delete'] : ['retry', 'cancel']
  return (
    <DialogContent title="Act on every matching task">
      {props.capped ? (
        <p role="alert" safe>
          {`More than ${props.limit} tasks match this filter: narrow it (a status, a function, a shorter range) to act on them.`}
        </p>
      ) : (
        <>
          <p data-bulk-count={String(count)} safe>
            {`${count} ${noun} match this filter. Retry applies to the failed and interrupted ones, cancel to the pending and running ones${props.admin ? ', delete to the finished ones' : ''}; the others are skipped.`}
          </p>
          <div class="form-actions">
            {count === 0
              ? ''
              : actions.map((action) => (
                  <button
                    type="button"
                    class={action === 'delete' ? 'btn btn-danger' : 'btn btn-primary'}
                    data-action={`bulk-${action}`}
                    hx-post={dashboard.url(`/dashboard/bulk/${action}`, query)}
                    hx-swap="none"
                    safe
                  >
                    {`${VERBS[action].button} ${count} ${noun}`}
                  </button>
                ))}
            <button type="button" class="btn" data-dialog-close>
              Keep as they are
            </button>
          </div>
        </>
      )}
    </DialogContent>
  )
}

/** Registers the dialog and the three actions. */
export function bulkRoutes(app: TaskAdminInstance, dashboard: TaskDashboard): void {
  const { context } = dashboard

  app.get(
    '/dashboard/bulk',
    { ...PAGE, config: { ...PAGE.config, role: 'operator' } },
    async (request, reply) => {
      const filters = runFilters(request)
      const { count, capped } = await countMatching(context, bulkFilterOf(filters))
      return sendHtml(
        reply,
        <BulkConfirm
          dashboard={dashboard}
          filters={filters}
          count={count}
          capped={capped}
          limit={context.bulkLimit}
          admin={canDelete(request)}
        />,
      )
    },
  )

  for (const action of ['retry', 'cancel', 'delete'] as const) {
    const config = action === 'delete' ? { ...PAGE.config, role: 'admin' as const } : PAGE.config
    app.post(`/dashboard/bulk/${action}`, { ...PAGE, config }, async (request, reply) => {
      // The run table's filters travel in the URL, as on the page.
      const filters = runFilters(request)
      const result = await runBulk(context, request, action, { filter: bulkFilterOf(filters) })
      const message =
        `${VERBS[action].past} ${result.done} of ${result.matched} matching task${result.matched === 1 ? '' : 's'}` +
        (result.skipped === 0 ? '.' : `; skipped ${result.skipped}.`)
      trigger(reply, {
        'ui-toast': {
          message,
          kind: result.done === 0 && result.skipped > 0 ? 'error' : 'success',
        },
        'ui-refresh': { type: 'task' },
        'ui-close-dialog': true,
      })
      return reply.status(200).send('')
    })
  }
}
