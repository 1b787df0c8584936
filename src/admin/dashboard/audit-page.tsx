/**
 * The Audit page: every state change, newest first, filtered by route, action, actor and
 * service (the same filters as `GET /api/audit`) and by kind, 50 per page. The first page
 * follows the stream: a new entry appears on top, highlighted.
 *
 * In one console with the task admin it is the console's only Audit page: task entries are
 * listed with the route-control ones, newest first, and the kind filter offers Tasks. A task
 * entry written on this instance reaches the first page live too: the task half tells the
 * console, and the admin's event stream carries it as a `task_audit` event.
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
import {
  AUDIT_KINDS,
  AUDIT_WINDOW,
  combinedAudit,
  kindOf,
  parseKind,
  type AuditKind,
  type AuditRow,
  type CombinedPage,
} from './audit-kinds.js'
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
  kind: AuditKind
  page: number
}

function filtersOf(dashboard: Dashboard, request: FastifyRequest): AuditFilters {
  return {
    route: param(request, 'route').trim(),
    action: param(request, 'action').trim(),
    actor: param(request, 'actor').trim(),
    service: knownService(dashboard.admin.engine, request),
    kind: parseKind(param(request, 'kind')),
    page: pageParam(request),
  }
}

function query(filters: AuditFilters, page = filters.page) {
  return {
    route: filters.route,
    action: filters.action,
    actor: filters.actor,
    service: filters.service,
    kind: filters.kind === '' ? undefined : filters.kind,
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

const KIND_LABEL: Readonly<Record<string, string>> = Object.fromEntries(AUDIT_KINDS)

/**
 * The list of a kind filter or of the console's combined audit: route-control and task entries
 * in one table, newest first, each with its kind.
 */
function CombinedTable(props: {
  dashboard: Dashboard
  filters: AuditFilters
  loaded: Loaded<CombinedPage>
}): JSX.Element {
  const { dashboard, filters, loaded } = props
  const now = Date.now()
  const result = loaded.result
  return (
    <>
      {result?.truncated === true ? (
        <p class="muted" id="audit-window">
          Showing the newest <span safe>{AUDIT_WINDOW.toLocaleString('en')}</span> entries of each
          log; filter by route, action or actor to reach older ones.
        </p>
      ) : (
        ''
      )}
      <LiveList
        id="audit-table"
        // Task entries are announced as `task_audit` on the same stream (see app.ts).
        event="audit task_audit"
        page={filters.page}
        refreshUrl={dashboard.url('/audit/table', query(filters))}
        error={loaded.error}
        caption="Audit log, newest first"
        columns={[
          'When',
          'Kind',
          'Subject',
          'Action',
          'Change',
          'Actor',
          { label: 'Platform', hideNarrow: true },
          'Reason or detail',
        ]}
        list={result}
        empty={
          <Empty title="No audit entries match.">
            <p>Every change made through the API, ctl or this console is recorded here.</p>
          </Empty>
        }
        perPage={PER_PAGE}
        href={(page) => dashboard.url('/audit', query(filters, page))}
        row={(row: AuditRow) =>
          row.half === 'routes' ? (
            <tr id={domId('audit', row.entry.id)}>
              <TimeCell at={row.entry.timestamp} now={now} />
              <td safe>{KIND_LABEL[kindOf(row.entry.action)] ?? ''}</td>
              <RouteCell
                label={row.entry.route}
                href={dashboard.url('/audit', { ...query(filters, 1), route: row.entry.route })}
                service={row.entry.service}
                routeHref={(route) => dashboard.routeUrl(route)}
              />
              <td class="mono" safe>
                {row.entry.action}
              </td>
              <td>
                <span safe>{change(row.entry)}</span>
                {row.entry.diff === undefined ? '' : <DiffList diff={row.entry.diff} />}
              </td>
              <td safe>{row.entry.actor}</td>
              <td class="hide-narrow" safe>
                {row.entry.platform}
              </td>
              <td>
                <Truncated text={row.entry.reason} />
              </td>
            </tr>
          ) : (
            <tr id={domId('task-audit', row.entry.id)}>
              <TimeCell at={row.entry.timestamp} now={now} />
              <td>Tasks</td>
              {row.entry.subject === null ? (
                <td class="muted">—</td>
              ) : (
                <td class="key">
                  {row.entry.href === null ? (
                    <span class="mono" safe>
                      {row.entry.subject}
                    </span>
                  ) : (
                    <a class="mono" href={row.entry.href} safe>
                      {row.entry.subject}
                    </a>
                  )}
                </td>
              )}
              <td class="mono" safe>
                {row.entry.action}
              </td>
              <td class="muted">—</td>
              <td safe>{row.entry.actor}</td>
              <td class="hide-narrow muted">task admin</td>
              <td>
                <Truncated text={row.entry.detail} class="mono" />
              </td>
            </tr>
          )
        }
      />
    </>
  )
}

/** Registers the audit page and its live table. */
export function auditPage(app: FastifyInstance, dashboard: Dashboard): void {
  const { engine } = dashboard.admin
  const routeQuery = (filters: AuditFilters) => ({
    route: filters.route === '' ? undefined : filters.route,
    action: filters.action === '' ? undefined : filters.action,
    actor: filters.actor === '' ? undefined : filters.actor,
    service: filters.service ?? undefined,
  })
  const load = (filters: AuditFilters) =>
    loadOrError(() =>
      engine.getAuditLog({ ...routeQuery(filters), page: filters.page, perPage: PER_PAGE }),
    )
  // The task half's audit, while it shares this console (read at every render: either half
  // may be mounted first).
  const tasks = () => dashboard.admin.console?.taskAudit ?? null
  /** Whether the page lists both logs or a kind: the combined table instead of the plain one. */
  const combined = (filters: AuditFilters) => filters.kind !== '' || tasks() !== null
  const loadCombined = (filters: AuditFilters) =>
    loadOrError(() =>
      combinedAudit((options) => engine.getAuditLog(options), tasks(), {
        routes: routeQuery(filters),
        kind: filters.kind,
        page: filters.page,
        perPage: PER_PAGE,
      }),
    )
  const table = async (filters: AuditFilters): Promise<JSX.Element> =>
    combined(filters) ? (
      <CombinedTable dashboard={dashboard} filters={filters} loaded={await loadCombined(filters)} />
    ) : (
      <AuditTable dashboard={dashboard} filters={filters} loaded={await load(filters)} />
    )

  app.get('/audit', PAGE, async (request, reply) => {
    const filters = filtersOf(dashboard, request)
    const kinds = AUDIT_KINDS.filter(([kind]) => kind !== 'tasks' || tasks() !== null)
    return sendHtml(
      reply,
      dashboard.page(request, {
        title: 'Audit',
        active: 'audit',
        services: {
          names: engine.listServices(),
          current: filters.service,
          action: dashboard.url('/audit'),
          keep: {
            route: filters.route,
            action: filters.action,
            actor: filters.actor,
            kind: filters.kind,
          },
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
                <label for="audit-kind">Kind</label>
                <select id="audit-kind" name="kind">
                  {kinds.map(([kind, label]) => (
                    <option value={kind} selected={filters.kind === kind}>
                      {label}
                    </option>
                  ))}
                </select>
              </div>
              <div class="field">
                <label for="audit-actor">Actor</label>
                <input id="audit-actor" name="actor" value={filters.actor} placeholder="admin" />
              </div>
              <button class="btn" type="submit">
                Filter
              </button>
            </form>
            {combined(filters) ? (
              <CombinedTable
                dashboard={dashboard}
                filters={filters}
                loaded={await loadCombined(filters)}
              />
            ) : (
              <AuditTable dashboard={dashboard} filters={filters} loaded={await load(filters)} />
            )}
          </>
        ),
      }),
    )
  })

  app.get('/audit/table', PAGE, async (request, reply) => {
    return sendHtml(reply, await table(filtersOf(dashboard, request)))
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
