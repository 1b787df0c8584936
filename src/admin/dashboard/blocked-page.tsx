/**
 * The Blocked page: requests a rate limit refused (the blocked-request log), newest first,
 * 50 per page, optionally of one route path and one service. The first page follows the
 * stream (`rl_hit`).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { loadOrError, type Loaded } from './answers.js'
import { paginate, type Page } from '../../core/pagination.js'
import type { RateLimitHit } from '../../rate-limit/exceeded.js'
import { Empty, SearchBox, Time, TimeCell, sendHtml, PageHead, LiveList } from '../../ui/index.js'
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

/** The blocked requests of one route within a page: newest first, with the keys they used. */
interface RouteHits {
  method: string
  path: string
  service: string | null
  hits: RateLimitHit[]
  /** Distinct counter keys (`rl:…`), in order of their newest hit. */
  keys: string[]
}

/**
 * Groups a page of hits (newest first) by route, in order of each route's newest hit. Keys
 * are deduplicated per route; a page holds at most {@link PER_PAGE} hits, which bounds both.
 */
export function groupByRoute(hits: readonly RateLimitHit[]): RouteHits[] {
  const groups = new Map<string, RouteHits>()
  for (const hit of hits) {
    const id = `${hit.service ?? ''}\n${hit.method}:${hit.path}`
    let group = groups.get(id)
    if (group === undefined) {
      group = {
        method: hit.method,
        path: hit.path,
        service: hit.service ?? null,
        hits: [],
        keys: [],
      }
      groups.set(id, group)
    }
    group.hits.push(hit)
    if (!group.keys.includes(hit.key)) group.keys.push(hit.key)
  }
  return [...groups.values()]
}

/** When a route's limit lets requests through again: "resets in 2 minutes", or "reset …". */
function ResetCell(props: { at: string; now: number }): JSX.Element {
  const future = Date.parse(props.at) > props.now
  return (
    <td class="hide-narrow">
      {future ? 'resets ' : 'reset '}
      <Time at={props.at} now={props.now} />
    </td>
  )
}

function BlockedTable(props: {
  dashboard: Dashboard
  filters: BlockedFilters
  /** The page of entries, or the API's message when it could not be read. */
  loaded: Loaded<Page<RateLimitHit>>
}): JSX.Element {
  const { dashboard, filters, loaded } = props
  const now = Date.now()
  const list =
    loaded.result === null ? null : { ...loaded.result, items: groupByRoute(loaded.result.items) }
  return (
    <LiveList
      id="blocked-table"
      event="rl_hit"
      page={filters.page}
      refreshUrl={dashboard.url('/blocked/table', query(filters))}
      error={loaded.error}
      caption="Blocked requests by route, newest first"
      columns={[
        'Last blocked',
        'Route',
        'Blocked',
        'Limit',
        { label: 'Tier', hideNarrow: true },
        { label: 'Resets', hideNarrow: true },
      ]}
      list={list}
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
      row={(group) => {
        const [latest] = group.hits as [RateLimitHit]
        const route = `${group.method}:${group.path}`
        const count = group.hits.length
        return (
          <tr id={domId('hit', latest.id)}>
            <TimeCell at={latest.timestamp} now={now} />
            <RouteCell
              label={route}
              href={dashboard.url('/blocked', { ...query(filters, 1), route: group.path })}
              service={group.service}
              routeHref={(key) => dashboard.routeUrl(key)}
            />
            <td>
              <span class="count-text" safe>
                {count === 1 ? '1 request' : `${count} requests`}
              </span>
              <details class="keys">
                <summary safe>
                  {group.keys.length === 1 ? '1 counter key' : `${group.keys.length} counter keys`}
                </summary>
                <ul class="plain mono">
                  {group.keys.map((key) => (
                    <li safe>{key}</li>
                  ))}
                </ul>
              </details>
            </td>
            <td class="mono" safe>
              {latest.limit}
            </td>
            <td class="hide-narrow" safe>
              {latest.tier ?? '—'}
            </td>
            <ResetCell at={latest.reset_at} now={now} />
          </tr>
        )
      }}
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
