/**
 * The Blocked page: requests a rate limit refused (the blocked-request log), newest first,
 * 50 per page, optionally of one route path and one service. The first page follows the
 * stream (`rl_hit`).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { loadOrError, type Loaded } from './answers.js'
import { paginate, type Page } from '../../core/pagination.js'
import type { RateLimitHit } from '../../rate-limit/exceeded.js'
import { Empty, SearchBox, TimeCell, sendHtml, PageHead, LiveList } from '../../ui/index.js'
import { RouteCell } from './route-cell.js'
import { knownService } from './routes-page.js'
import { PAGE, domId, pageParam, param, type Dashboard } from './view.js'

const PER_PAGE = 50

interface BlockedFilters {
  route: string
  /** A known service, or null for every service. */
  service: string | null
  page: number
}

function filtersOf(dashboard: Dashboard, request: FastifyRequest): BlockedFilters {
  return {
    route: param(request, 'route').trim(),
    service: knownService(dashboard.admin.engine, request),
    page: pageParam(request),
  }
}

const query = (filters: BlockedFilters, page = filters.page) => ({
  route: filters.route,
  service: filters.service,
  page: page === 1 ? undefined : page,
})

function BlockedTable(props: {
  dashboard: Dashboard
  filters: BlockedFilters
  /** The page of entries, or the API's message when it could not be read. */
  loaded: Loaded<Page<RateLimitHit>>
}): JSX.Element {
  const { dashboard, filters, loaded } = props
  const now = Date.now()
  return (
    <LiveList
      id="blocked-table"
      event="rl_hit"
      page={filters.page}
      refreshUrl={dashboard.url('/blocked/table', query(filters))}
      error={loaded.error}
      caption="Blocked requests, newest first"
      columns={[
        'When',
        'Route',
        'Key',
        'Limit',
        { label: 'Tier', hideNarrow: true },
        { label: 'Resets', hideNarrow: true },
      ]}
      list={loaded.result}
      empty={
        <Empty title="No blocked requests.">
          <p>
            Requests refused by a rate limit appear here as they happen.{' '}
            <a href={dashboard.url('/rate-limits')}>See the limits in force</a>.
          </p>
        </Empty>
      }
      perPage={PER_PAGE}
      href={(page) => dashboard.url('/blocked', query(filters, page))}
      row={(hit) => (
        <tr id={domId('hit', hit.id)}>
          <TimeCell at={hit.timestamp} now={now} />
          <RouteCell
            label={`${hit.method}:${hit.path}`}
            href={dashboard.url('/blocked', { ...query(filters, 1), route: hit.path })}
            service={hit.service}
            routeHref={(route) => dashboard.routeUrl(route)}
          />
          <td class="key" safe>
            {hit.key}
          </td>
          <td class="mono" safe>
            {hit.limit}
          </td>
          <td class="hide-narrow" safe>
            {hit.tier ?? '—'}
          </td>
          <TimeCell at={hit.reset_at} now={now} hideNarrow />
        </tr>
      )}
    />
  )
}

/** Registers the blocked-request page and its live table. */
export function blockedPage(app: FastifyInstance, dashboard: Dashboard): void {
  const { engine } = dashboard.admin
  const load = (filters: BlockedFilters) =>
    loadOrError(async () => {
      const hits = await engine.rateLimits.getRateLimitHits({
        ...(filters.route === '' ? {} : { path: filters.route }),
        ...(filters.service === null ? {} : { service: filters.service }),
      })
      return paginate(hits, { page: filters.page, perPage: PER_PAGE })
    })

  app.get('/blocked', PAGE, async (request, reply) => {
    const filters = filtersOf(dashboard, request)
    const loaded = await load(filters)
    return sendHtml(
      reply,
      dashboard.page(request, {
        title: 'Blocked requests',
        active: 'blocked',
        services: {
          names: engine.listServices(),
          current: filters.service,
          action: dashboard.url('/blocked'),
          keep: { route: filters.route },
        },
        children: (
          <>
            <PageHead title="Blocked requests" />
            <form class="filters" method="get" action={dashboard.url('/blocked')} role="search">
              {filters.service === null ? (
                ''
              ) : (
                <input type="hidden" name="service" value={filters.service} />
              )}
              <SearchBox
                name="route"
                value={filters.route}
                label="Route path"
                placeholder="/search"
              />
              <button class="btn" type="submit">
                Filter
              </button>
            </form>
            <BlockedTable dashboard={dashboard} filters={filters} loaded={loaded} />
          </>
        ),
      }),
    )
  })

  app.get('/blocked/table', PAGE, async (request, reply) => {
    const filters = filtersOf(dashboard, request)
    const loaded = await load(filters)
    return sendHtml(reply, <BlockedTable dashboard={dashboard} filters={filters} loaded={loaded} />)
  })
}
