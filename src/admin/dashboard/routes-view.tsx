/**
 * The Routes page (the dashboard's home): counts by status, global and service maintenance
 * banners, and every route grouped by service with its status, reason, window and actions.
 * Each row is its own live fragment (keyed by service and route), so a change patches one
 * row in place and never reflows the rest of the table.
 */
import type { MaintenanceConfig } from '../../core/maintenance.js'
import type { RouteState, RouteStatus } from '../../core/route-state.js'
import {
  FilterSelect,
  FilterSubmit,
  Badge,
  ClockTime,
  DialogContent,
  Empty,
  SearchBox,
  Time,
  TimeCell,
  Truncated,
  type Tone,
  PageHead,
} from '../../ui/index.js'
import { MaintenanceCoverage, type CoveringMaintenance } from './maintenance-coverage.js'
import type { Dashboard } from './view.js'

/** The filters of the routes view (all from the query string). */
export interface RouteFilters {
  service: string | null
  q: string
  status: StatusFilter | null
}

/** A status filter: a lifecycle status, `scheduled`, or `attention` (anything not active). */
export type StatusFilter = RouteStatus | 'scheduled' | 'attention'

/** Every status filter, in the order of the counts strip. */
export const STATUS_FILTERS: readonly StatusFilter[] = [
  'attention',
  'maintenance',
  'disabled',
  'scheduled',
  'env_gated',
  'deprecated',
  'active',
]

const STATUS_TONE: Record<RouteStatus, Tone> = {
  active: 'ok',
  maintenance: 'warn',
  disabled: 'bad',
  env_gated: 'info',
  deprecated: 'purple',
}

const FILTER_LABEL: Record<StatusFilter, string> = {
  attention: 'Not active',
  active: 'Active',
  maintenance: 'Maintenance',
  disabled: 'Disabled',
  env_gated: 'Env-gated',
  deprecated: 'Deprecated',
  scheduled: 'Scheduled',
}

/** A route with a maintenance window that has not started yet. */
export function isScheduled(state: RouteState, now: number): boolean {
  const start = state.window?.start ?? null
  return state.status === 'active' && start !== null && Date.parse(start) > now
}

/** Reads `?status=` (null when absent or unknown). */
export function parseStatusFilter(value: string): StatusFilter | null {
  return (STATUS_FILTERS as readonly string[]).includes(value) ? (value as StatusFilter) : null
}

/** The status clients get: maintenance when one covers the route, else the route's own. */
export function effectiveStatus(state: RouteState, covered: CoveringMaintenance): RouteStatus {
  return covered === null ? state.status : 'maintenance'
}

function matchesStatus(
  state: RouteState,
  filter: StatusFilter | null,
  now: number,
  covered: CoveringMaintenance,
): boolean {
  if (filter === null) return true
  const status = effectiveStatus(state, covered)
  if (filter === 'attention') return status !== 'active' || isScheduled(state, now)
  if (filter === 'scheduled') return isScheduled(state, now)
  return status === filter
}

/**
 * Plain words match the route key, service and reason; `status:<s>`, `service:<name>` and
 * `method:<m>` narrow the list (in the spirit of Oban Web's qualifiers).
 */
export function matchesQuery(
  state: RouteState,
  q: string,
  now: number,
  covered: CoveringMaintenance = null,
): boolean {
  for (const word of q.toLowerCase().split(/\s+/)) {
    if (word === '') continue
    const colon = word.indexOf(':')
    const qualifier = colon > 0 ? word.slice(0, colon) : ''
    const value = word.slice(colon + 1)
    if (qualifier === 'status') {
      const filter = parseStatusFilter(value) ?? (value as StatusFilter)
      if (!matchesStatus(state, filter, now, covered)) return false
    } else if (qualifier === 'service') {
      if (state.service.toLowerCase() !== value) return false
    } else if (qualifier === 'method') {
      if (state.method.toLowerCase() !== value) return false
    } else {
      const haystack = `${state.route} ${state.service} ${state.reason}`.toLowerCase()
      if (!haystack.includes(word)) return false
    }
  }
  return true
}

/** True when a route is shown under the filters (which match the status clients get). */
export function routeVisible(
  state: RouteState,
  filters: RouteFilters,
  now: number,
  coverage: MaintenanceCoverage,
): boolean {
  if (filters.service !== null && state.service !== filters.service) return false
  const covered = coverage.of(state)
  return (
    matchesStatus(state, filters.status, now, covered) &&
    matchesQuery(state, filters.q, now, covered)
  )
}

/** The query values of the filters (for URLs that keep the view). */
export function filterQuery(filters: RouteFilters): Record<string, string> {
  return {
    ...(filters.service === null ? {} : { service: filters.service }),
    ...(filters.q === '' ? {} : { q: filters.q }),
    ...(filters.status === null ? {} : { status: filters.status }),
  }
}

function OwnStatusBadge(props: { state: RouteState; now: number }): JSX.Element {
  if (isScheduled(props.state, props.now))
    return <Badge tone="info" label="SCHEDULED" title="Maintenance window scheduled" />
  return (
    <Badge
      tone={STATUS_TONE[props.state.status]}
      label={props.state.status.toUpperCase().replace('_', '-')}
    />
  )
}

/**
 * The status badge of a route (upper-case word, colour by status): the status clients get.
 * When a global or service maintenance answers instead of the route, it says which, and the
 * route's own status stays visible below it (it applies again when that maintenance ends).
 */
export function StatusBadge(props: {
  state: RouteState
  now: number
  covered?: CoveringMaintenance
  /** When the covering maintenance ends by itself (ISO), if it does. */
  until?: string | null
}): JSX.Element {
  const covered = props.covered ?? null
  if (covered === null) return <OwnStatusBadge state={props.state} now={props.now} />
  const until = props.until ?? null
  return (
    <span class="effective-status">
      <Badge
        tone="warn"
        label="MAINTENANCE"
        title={`Clients get 503: ${covered === 'global' ? 'global' : 'service'} maintenance is on`}
      />{' '}
      <span class="muted">
        ({covered})
        {until === null ? (
          ''
        ) : (
          <>
            {' '}
            until <ClockTime at={until} />
          </>
        )}
      </span>
      <span class="declared-status muted">
        route: <OwnStatusBadge state={props.state} now={props.now} />
      </span>
    </span>
  )
}

/** The key a row is matched by: the fields `service` and `route` of a `route_state` event. */
export function routeKey(state: { service: string; route: string }): string {
  return `${state.service} ${state.route}`
}

function WindowCell(props: { state: RouteState; now: number }): JSX.Element {
  const { state, now } = props
  if (state.window !== null) {
    const { start, end } = state.window
    return (
      <span>
        {start !== null && Date.parse(start) > now ? (
          <>
            starts <Time at={start} now={now} />{' '}
          </>
        ) : (
          ''
        )}
        {end !== null ? (
          <>
            ends <Time at={end} now={now} />
          </>
        ) : (
          <span class="muted">open-ended</span>
        )}
      </span>
    )
  }
  if (state.until !== null)
    return (
      <span>
        until <Time at={state.until} now={now} />
      </span>
    )
  if (state.status === 'env_gated')
    return <span class="muted" safe>{`envs: ${state.envs.join(', ')}`}</span>
  if (state.status === 'deprecated' && state.sunset !== null)
    return <span class="muted" safe>{`sunset ${state.sunset}`}</span>
  return <span class="muted">—</span>
}

/**
 * One route's row; hidden (but still live) when the filters leave it out. Rows stay small (a
 * page may hold thousands): the row's key (`<service> <route>`) is written once, the buttons
 * send it (`data-with-key`), and the live URL is the table's `data-live-row-url` plus the key.
 * A viewer's row has no actions column.
 */
export function RouteRow(props: {
  dashboard: Dashboard
  state: RouteState
  filters: RouteFilters
  now: number
  /** The maintenance in force, which may answer instead of the route. */
  coverage: MaintenanceCoverage
  /** Whether the filters show the route, when the caller already knows. */
  visible?: boolean
}): JSX.Element {
  const { dashboard, state, filters, now, coverage } = props
  const key = routeKey(state)
  if (!(props.visible ?? routeVisible(state, filters, now, coverage)))
    return <tr id={`route|${key}`} data-live="route_state" data-live-key={key} hidden></tr>
  const extras = state.force_active || state.use_instead !== null
  const scheduled = isScheduled(state, now)
  const covered = coverage.of(state)
  return (
    <tr id={`route|${key}`} data-live="route_state" data-live-key={key}>
      {extras ? (
        <td class="key">
          <span safe>{state.route}</span>
          {state.force_active ? (
            <>
              {' '}
              <Badge tone="plain" label="force-active" title="Protected: refuses every change" />
            </>
          ) : (
            ''
          )}
          {state.use_instead !== null ? (
            <div class="muted" safe>{`use ${state.use_instead}`}</div>
          ) : (
            ''
          )}
        </td>
      ) : (
        <td class="key" safe>
          {state.route}
        </td>
      )}
      <td>
        <StatusBadge
          state={state}
          now={now}
          covered={covered}
          until={coverage.endsAt(covered, state.service)}
        />
      </td>
      {state.reason === '' ? (
        <td class="muted">—</td>
      ) : (
        <td>
          <Truncated text={state.reason} />
        </td>
      )}
      {state.window === null && state.until === null && state.status === 'active' ? (
        <td class="muted">—</td>
      ) : (
        <td>
          <WindowCell state={state} now={now} />
        </td>
      )}
      {state.since === 'startup' ? (
        <td class="hide-narrow muted">startup</td>
      ) : (
        <TimeCell at={state.since} now={now} hideNarrow />
      )}
      {!dashboard.can('operator') ? (
        ''
      ) : state.force_active ? (
        <td class="muted">protected</td>
      ) : (
        <td class="row-actions">
          {state.status === 'active' && !scheduled ? (
            ''
          ) : (
            <button
              hx-get={dashboard.url(
                state.status === 'active' ? '/routes/cancel/confirm' : '/routes/enable/confirm',
              )}
              data-action={state.status === 'active' ? 'route-cancel' : 'route-enable'}
              data-with-key
              aria-label={`${state.status === 'active' ? 'Cancel window' : 'Enable'} ${state.route}`}
            >
              {state.status === 'active' ? 'Cancel window' : 'Enable'}
            </button>
          )}
          <button
            hx-get={dashboard.url('/routes/manage')}
            data-action="manage-route"
            data-with-key
            aria-label={`Manage… ${state.route}`}
          >
            Manage…
          </button>
        </td>
      )}
    </tr>
  )
}

/** The dialog of one route: its state in full and every action it allows (none for a viewer). */
export function ManageRoute(props: {
  dashboard: Dashboard
  state: RouteState
  now: number
  covered: CoveringMaintenance
}) {
  const { dashboard, state, now } = props
  const target = { route: state.route, service: state.service }
  const form = (kind: 'disable' | 'maintenance' | 'schedule', label: string) => (
    <button
      class="btn"
      hx-get={dashboard.url(`/routes/${kind}`)}
      data-action={`route-${kind}`}
      hx-vals={JSON.stringify(target)}
      hx-target="#ui-dialog-body"
      safe
    >
      {label}
    </button>
  )
  return (
    <DialogContent title={state.route}>
      <dl class="props">
        <dt>Service</dt>
        <dd class="mono" safe>
          {state.service}
        </dd>
        <dt>Status</dt>
        <dd>
          <StatusBadge state={state} now={now} covered={props.covered} />
        </dd>
        <dt>Reason</dt>
        <dd safe>{state.reason === '' ? '—' : state.reason}</dd>
        <dt>Window / until</dt>
        <dd>
          <WindowCell state={state} now={now} />
        </dd>
        <dt>Since</dt>
        <dd>{state.since === 'startup' ? 'startup' : <Time at={state.since} now={now} />}</dd>
      </dl>
      {state.force_active ? (
        <p class="muted">This route is force-active: it refuses every change.</p>
      ) : !dashboard.can('operator') ? (
        ''
      ) : (
        <div class="form-actions">
          {state.status === 'active' ? (
            ''
          ) : (
            <button
              class="btn btn-primary"
              hx-get={dashboard.url('/routes/enable/confirm')}
              hx-vals={JSON.stringify(target)}
              hx-target="#ui-dialog-body"
              data-action="route-enable"
            >
              Enable…
            </button>
          )}
          {state.status === 'disabled' ? '' : form('disable', 'Disable…')}
          {state.status === 'maintenance' ? '' : form('maintenance', 'Maintenance…')}
          {state.window === null ? (
            form('schedule', 'Schedule…')
          ) : (
            <button
              class="btn"
              hx-get={dashboard.url('/routes/cancel/confirm')}
              hx-vals={JSON.stringify(target)}
              hx-target="#ui-dialog-body"
              data-action="route-cancel"
            >
              Cancel window…
            </button>
          )}
        </div>
      )}
    </DialogContent>
  )
}

/** Everything the routes view shows. */
export interface RoutesData {
  routes: RouteState[]
  global: MaintenanceConfig
  services: { name: string; maintenance: MaintenanceConfig }[]
  /** The same maintenance, compiled to tell which routes it answers for. */
  coverage: MaintenanceCoverage
  now: number
}

/** The counts strip and maintenance banners (one live fragment). */
export function RoutesSummary(props: {
  dashboard: Dashboard
  data: RoutesData
  filters: RouteFilters
}): JSX.Element {
  const { dashboard, data, filters } = props
  const scoped = data.routes.filter(
    (state) => filters.service === null || state.service === filters.service,
  )
  // One pass over the routes for every count (a page may hold thousands).
  const counts = new Map<StatusFilter, number>(STATUS_FILTERS.map((filter) => [filter, 0]))
  const bump = (filter: StatusFilter) => counts.set(filter, (counts.get(filter) ?? 0) + 1)
  for (const state of scoped) {
    const scheduled = isScheduled(state, data.now)
    const status = effectiveStatus(state, data.coverage.of(state))
    bump(status)
    if (scheduled) bump('scheduled')
    if (scheduled || status !== 'active') bump('attention')
  }
  const count = (filter: StatusFilter) => counts.get(filter) ?? 0
  const keep = (status: StatusFilter | null) =>
    dashboard.url('/', { ...filterQuery({ ...filters, status }) })
  const services = data.services.filter(
    (service) => filters.service === null || service.name === filters.service,
  )
  return (
    <div
      id="routes-summary"
      data-live="route_state global_maintenance service_maintenance"
      data-live-url={dashboard.url('/routes/summary', filterQuery(filters))}
    >
      <GlobalBanner dashboard={dashboard} config={data.global} now={data.now} />
      {services
        .filter((service) => service.maintenance.active)
        .map((service) => (
          <ServiceBanner
            dashboard={dashboard}
            name={service.name}
            config={service.maintenance}
            now={data.now}
          />
        ))}
      <nav class="counts" aria-label="Routes by status">
        <a
          class="count"
          href={keep(null)}
          aria-current={filters.status === null ? 'true' : undefined}
        >
          <strong>{scoped.length}</strong>
          <span>All routes</span>
        </a>
        {STATUS_FILTERS.map((filter) => {
          const n = count(filter)
          const tone =
            n > 0 && (filter === 'attention' || filter === 'disabled')
              ? ' count-bad'
              : n > 0 && filter === 'maintenance'
                ? ' count-warn'
                : ''
          return (
            <a
              class={`count${tone}`}
              href={keep(filter)}
              aria-current={filters.status === filter ? 'true' : undefined}
            >
              <strong>{n}</strong>
              <span safe>{FILTER_LABEL[filter]}</span>
            </a>
          )
        })}
      </nav>
    </div>
  )
}

/** " · until 14:30 (in 25 min)" for maintenance that ends by itself; nothing otherwise. */
function EndsAt(props: { config: MaintenanceConfig; now: number }): JSX.Element {
  const end = props.config.ends_at ?? null
  if (end === null) return <></>
  return (
    <>
      {' · until '}
      <ClockTime at={end} /> (<Time at={end} now={props.now} />)
    </>
  )
}

function Exemptions(props: { paths: readonly string[] }): JSX.Element {
  if (props.paths.length === 0) return <span>no exemptions</span>
  return <span class="mono" safe>{`exempt: ${props.paths.join(', ')}`}</span>
}

function GlobalBanner(props: {
  dashboard: Dashboard
  config: MaintenanceConfig
  now: number
}): JSX.Element {
  const { dashboard, config, now } = props
  const dialog = dashboard.url('/maintenance/dialog')
  if (!config.active)
    return (
      <div class="banner" id="global-maintenance">
        <span>
          <strong>Global maintenance</strong> is off.
        </span>
        {dashboard.can('operator') ? (
          <div class="actions">
            <button
              class="btn btn-small"
              hx-get={dialog}
              hx-target="#ui-dialog-body"
              data-action="maintenance"
            >
              Global maintenance…
            </button>
          </div>
        ) : (
          ''
        )}
      </div>
    )
  return (
    <div class="banner banner-warn" id="global-maintenance" role="status">
      <Badge tone="warn" label="GLOBAL MAINTENANCE" />
      <span>
        <strong safe>{config.reason === '' ? 'No reason given' : config.reason}</strong>
        <EndsAt config={config} now={now} /> · <Exemptions paths={config.exempt_paths} />
        {config.include_force_active ? ' · force-active routes included' : ''}
      </span>
      {dashboard.can('operator') ? (
        <div class="actions">
          <button
            class="btn btn-small"
            hx-get={dialog}
            hx-target="#ui-dialog-body"
            data-action="maintenance"
          >
            Exemptions…
          </button>
          <button
            class="btn btn-small btn-primary"
            hx-post={dashboard.url('/maintenance/disable')}
            hx-swap="none"
            hx-confirm="Turn global maintenance off? Every service answers normally again."
          >
            Turn off
          </button>
        </div>
      ) : (
        ''
      )}
    </div>
  )
}

function ServiceBanner(props: {
  dashboard: Dashboard
  name: string
  config: MaintenanceConfig
  now: number
}): JSX.Element {
  const { dashboard, name, config, now } = props
  return (
    <div class="banner banner-warn" role="status">
      <Badge tone="warn" label="SERVICE MAINTENANCE" />
      <span>
        <strong class="mono" safe>
          {name}
        </strong>{' '}
        <span safe>{config.reason === '' ? '' : `— ${config.reason}`}</span>
        <EndsAt config={config} now={now} /> · <Exemptions paths={config.exempt_paths} />
      </span>
      {dashboard.can('operator') ? (
        <div class="actions">
          <button
            class="btn btn-small"
            hx-get={dashboard.url('/maintenance/dialog', { service: name })}
            hx-target="#ui-dialog-body"
            data-action="maintenance"
          >
            Exemptions…
          </button>
          <button
            class="btn btn-small btn-primary"
            hx-post={dashboard.url('/maintenance/disable')}
            hx-vals={JSON.stringify({ service: name })}
            hx-swap="none"
            hx-confirm={`Turn maintenance of service ${name} off?`}
          >
            Turn off
          </button>
        </div>
      ) : (
        ''
      )}
    </div>
  )
}

/** The table of routes grouped by service (the fallback section for unseen routes). */
export function RoutesTable(props: {
  dashboard: Dashboard
  data: RoutesData
  filters: RouteFilters
}): JSX.Element {
  const { dashboard, data, filters } = props
  const groups = new Map<string, RouteState[]>()
  for (const state of data.routes) {
    if (filters.service !== null && state.service !== filters.service) continue
    const group = groups.get(state.service) ?? []
    group.push(state)
    groups.set(state.service, group)
  }
  const shownRoutes = new Set(
    data.routes.filter((state) => routeVisible(state, filters, data.now, data.coverage)),
  )
  const visible = shownRoutes.size
  const maintenance = new Map(data.services.map((s) => [s.name, s.maintenance]))
  const actions = dashboard.can('operator')
  return (
    <div
      id="routes-table"
      data-live-fallback="route_state"
      data-live="global_maintenance service_maintenance"
      data-live-url={dashboard.url('/routes/table', filterQuery(filters))}
    >
      {visible === 0 ? (
        <div class="table-wrap">
          <Empty
            title={
              data.routes.length === 0
                ? 'No routes are registered yet.'
                : 'No route matches these filters.'
            }
          >
            {data.routes.length === 0 ? (
              <p>Routes appear here once the app registers them (at startup).</p>
            ) : (
              <p>
                <a
                  href={dashboard.url(
                    '/',
                    filters.service === null ? {} : { service: filters.service },
                  )}
                >
                  Clear the filters
                </a>
              </p>
            )}
          </Empty>
        </div>
      ) : (
        ''
      )}
      <div
        class="table-wrap"
        hidden={visible === 0}
        tabindex="0"
        role="region"
        aria-label="Routes (scrolls sideways)"
      >
        <table
          class="pinned"
          hx-target="#ui-dialog-body"
          data-live-row-url={dashboard.url('/routes/row', filterQuery(filters))}
        >
          <caption class="visually-hidden">Routes by service</caption>
          <thead>
            <tr>
              <th scope="col">Route</th>
              <th scope="col">Status</th>
              <th scope="col">Reason</th>
              <th scope="col">Window / until</th>
              <th scope="col" class="hide-narrow">
                Since
              </th>
              {actions ? <th scope="col">Actions</th> : ''}
            </tr>
          </thead>
          {[...groups].map(([service, states]) => {
            const shown = states.filter((state) => shownRoutes.has(state)).length
            const active = maintenance.get(service)?.active === true
            const ends = maintenance.get(service)?.ends_at ?? null
            return (
              <tbody>
                <tr class="group" hidden={shown === 0}>
                  <th colspan={actions ? '6' : '5'} scope="colgroup">
                    <span class="mono" safe>
                      {service}
                    </span>{' '}
                    <span class="muted">
                      · {shown} of {states.length} routes
                    </span>{' '}
                    {active ? (
                      <>
                        <Badge tone="warn" label="MAINTENANCE" />
                        {ends === null ? (
                          ''
                        ) : (
                          <span class="muted">
                            {' '}
                            until <ClockTime at={ends} />
                          </span>
                        )}
                      </>
                    ) : !actions ? (
                      ''
                    ) : (
                      <button
                        class="btn btn-small"
                        hx-get={dashboard.url('/maintenance/dialog', { service })}
                        hx-target="#ui-dialog-body"
                        data-action="maintenance"
                        aria-label={`Service maintenance… ${service}`}
                      >
                        Service maintenance…
                      </button>
                    )}
                  </th>
                </tr>
                {states.map((state) => (
                  <RouteRow
                    dashboard={dashboard}
                    state={state}
                    filters={filters}
                    now={data.now}
                    coverage={data.coverage}
                    visible={shownRoutes.has(state)}
                  />
                ))}
              </tbody>
            )
          })}
        </table>
      </div>
    </div>
  )
}

/** The whole routes view (inside the layout). */
export function RoutesView(props: {
  dashboard: Dashboard
  data: RoutesData
  filters: RouteFilters
}): JSX.Element {
  const { dashboard, filters } = props
  return (
    <>
      <PageHead title="Routes" />
      <RoutesSummary {...props} />
      <form class="filters" method="get" action={dashboard.url('/')} role="search">
        {filters.service === null ? (
          ''
        ) : (
          <input type="hidden" name="service" value={filters.service} />
        )}
        <SearchBox
          value={filters.q}
          label="Search routes"
          placeholder="path, reason, status:disabled, method:post"
        />
        <FilterSelect
          id="status-filter"
          name="status"
          label="Status"
          value={filters.status ?? ''}
          any="Any status"
          options={STATUS_FILTERS.map((filter) => ({ value: filter, label: FILTER_LABEL[filter] }))}
        />
        <FilterSubmit hintClass="muted" />
      </form>
      <RoutesTable {...props} />
    </>
  )
}
