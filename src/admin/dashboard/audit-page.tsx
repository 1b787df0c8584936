/**
 * The Audit page: every state change, newest first, filtered by route, action, actor and
 * service (the same filters as `GET /api/audit`), 50 per page. The first page follows the
 * stream: a new entry appears on top, highlighted.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { shortDiffValue } from '../../core/audit-diff.js'
import type { AuditEntry } from '../../core/audit-entry.js'
import { loadOrError, type Loaded } from './answers.js'
import type { Page } from '../../core/pagination.js'
import {
  Empty,
  SearchBox,
  TimeCell,
  Truncated,
  sendHtml,
  PageHead,
  LiveList,
} from '../../ui/index.js'
import { RouteCell } from './route-cell.js'
import { knownService } from './routes-page.js'
import { PAGE, domId, pageParam, param, type Dashboard } from './view.js'

const PER_PAGE = 50

/** The filters of the audit view. */
interface AuditFilters {
  route: string
  action: string
  actor: string
  service: string | null
  page: number
}

function filtersOf(dashboard: Dashboard, request: FastifyRequest): AuditFilters {
  return {
    route: param(request, 'route').trim(),
    action: param(request, 'action').trim(),
    actor: param(request, 'actor').trim(),
    service: knownService(dashboard.admin.engine, request),
    page: pageParam(request),
  }
}

function query(filters: AuditFilters, page = filters.page) {
  return {
    route: filters.route,
    action: filters.action,
    actor: filters.actor,
    service: filters.service,
    page: page === 1 ? undefined : page,
  }
}

function change(entry: AuditEntry): string {
  if (entry.previous_status === null && entry.new_status === null) return ''
  return `${entry.previous_status ?? '—'} → ${entry.new_status ?? '—'}`
}

function AuditTable(props: {
  dashboard: Dashboard
  filters: AuditFilters
  /** The page of entries, or the API's message when it could not be read. */
  loaded: Loaded<Page<AuditEntry>>
}): JSX.Element {
  const { dashboard, filters, loaded } = props
  const now = Date.now()
  return (
    <LiveList
      id="audit-table"
      event="audit"
      page={filters.page}
      refreshUrl={dashboard.url('/audit/table', query(filters))}
      error={loaded.error}
      caption="Audit log, newest first"
      columns={[
        'When',
        'Route',
        'Action',
        'Change',
        'Actor',
        { label: 'Platform', hideNarrow: true },
        'Reason',
      ]}
      list={loaded.result}
      empty={
        <Empty title="No audit entries match.">
          <p>Every change made through the API, ctl or this dashboard is recorded here.</p>
        </Empty>
      }
      perPage={PER_PAGE}
      href={(page) => dashboard.url('/audit', query(filters, page))}
      row={(entry) => (
        <tr id={domId('audit', entry.id)}>
          <TimeCell at={entry.timestamp} now={now} />
          <RouteCell
            label={entry.route}
            href={dashboard.url('/audit', { ...query(filters, 1), route: entry.route })}
            service={entry.service}
            routeHref={(route) => dashboard.routeUrl(route)}
          />
          <td class="mono" safe>
            {entry.action}
          </td>
          <td>
            <span safe>{change(entry)}</span>
            {entry.diff === undefined ? '' : <DiffList diff={entry.diff} />}
          </td>
          <td>
            <span safe>{entry.actor}</span>
            {entry.on_behalf_of === undefined ? (
              ''
            ) : (
              <span class="muted" safe>
                {` for ${entry.on_behalf_of}`}
              </span>
            )}
          </td>
          <td class="hide-narrow" safe>
            {entry.platform}
          </td>
          <td>
            <Truncated text={entry.reason} />
          </td>
        </tr>
      )}
    />
  )
}

/** An update's diff: one line per changed field, `field: before → after` (values shortened). */
function DiffList({ diff }: { diff: NonNullable<AuditEntry['diff']> }): JSX.Element {
  return (
    <ul class="muted diff" aria-label="Changed fields">
      {Object.entries(diff).map(([field, [before, after]]) => (
        <li class="mono" safe>
          {field === '…'
            ? `(${String(before)} more fields)`
            : `${field}: ${shortDiffValue(before)} → ${shortDiffValue(after)}`}
        </li>
      ))}
    </ul>
  )
}

/** Registers the audit page and its live table. */
export function auditPage(app: FastifyInstance, dashboard: Dashboard): void {
  const { engine } = dashboard.admin
  const load = (filters: AuditFilters) =>
    loadOrError(() =>
      engine.getAuditLog({
        route: filters.route === '' ? undefined : filters.route,
        action: filters.action === '' ? undefined : filters.action,
        actor: filters.actor === '' ? undefined : filters.actor,
        service: filters.service ?? undefined,
        page: filters.page,
        perPage: PER_PAGE,
      }),
    )

  app.get('/audit', PAGE, async (request, reply) => {
    const filters = filtersOf(dashboard, request)
    const loaded = await load(filters)
    return sendHtml(
      reply,
      dashboard.page(request, {
        title: 'Audit',
        active: 'audit',
        services: {
          names: engine.listServices(),
          current: filters.service,
          action: dashboard.url('/audit'),
          keep: { route: filters.route, action: filters.action, actor: filters.actor },
        },
        children: (
          <>
            <PageHead title="Audit" />
            <form class="filters" method="get" action={dashboard.url('/audit')} role="search">
              {filters.service === null ? (
                ''
              ) : (
                <input type="hidden" name="service" value={filters.service} />
              )}
              <SearchBox
                name="route"
                value={filters.route}
                label="Route"
                placeholder="GET:/orders, /orders or [Global Maintenance]"
              />
              <div class="field">
                <label for="audit-action">Action</label>
                <input
                  id="audit-action"
                  name="action"
                  value={filters.action}
                  placeholder="disable"
                  list="audit-actions"
                />
                <datalist id="audit-actions">
                  {AUDIT_ACTIONS.map((action) => (
                    <option value={action}></option>
                  ))}
                </datalist>
              </div>
              <div class="field">
                <label for="audit-actor">Actor</label>
                <input id="audit-actor" name="actor" value={filters.actor} placeholder="admin" />
              </div>
              <button class="btn" type="submit">
                Filter
              </button>
            </form>
            <AuditTable dashboard={dashboard} filters={filters} loaded={loaded} />
          </>
        ),
      }),
    )
  })

  app.get('/audit/table', PAGE, async (request, reply) => {
    const filters = filtersOf(dashboard, request)
    const loaded = await load(filters)
    return sendHtml(reply, <AuditTable dashboard={dashboard} filters={filters} loaded={loaded} />)
  })
}

/** Actions offered as suggestions in the filter (any other exact action works too). */
const AUDIT_ACTIONS = [
  'enable',
  'disable',
  'maintenance_on',
  'maintenance_scheduled',
  'schedule_cancelled',
  'global_maintenance_on',
  'global_maintenance_off',
  'service_maintenance_on',
  'service_maintenance_off',
  'rl_policy_set',
  'rl_policy_updated',
  'rl_policy_deleted',
  'rl_reset',
  'global_rl_set',
  'svc_rl_set',
  'flag_created',
  'flag_updated',
  'flag_enabled',
  'flag_disabled',
  'flag_deleted',
  'flag_change_scheduled',
  'flag_schedule_cancelled',
  'segment_created',
  'segment_updated',
  'segment_deleted',
]
