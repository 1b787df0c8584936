/**
 * What every route-control page shares: URLs under the mount, the layout with this
 * dashboard's navigation and stream, who acts and what their role lets them do, and how query
 * parameters are read.
 */
import type { FastifyRequest } from 'fastify'
import type { FlagService } from '../../flags/service.js'
import { roleAllows, type Role } from '../../common/roles.js'
import { csrfTokenFor } from '../auth/sessions.js'
import { EndpointNotFoundError } from '../errors.js'
import {
  ADMIN_ROLE_ROUTE,
  ADMIN_ROUTE,
  PUBLIC_ROUTE,
  VIEWER_ROUTE,
  flagServiceOf,
  type AdminContext,
} from '../context.js'
import type { ConsoleMember } from '../../common/console-registry.js'
import {
  Empty,
  dashboardPage,
  type DashboardPageProps,
  withQuery,
  type QueryValues,
} from '../../ui/index.js'

/** Route options of a dashboard page or fragment: an admin route, left out of the OpenAPI document. */
export const PAGE = { config: ADMIN_ROUTE, schema: { hide: true } } as const

/**
 * Route options of a dashboard fragment that exists only to change something (an action
 * dialog's form): it needs the `operator` role even to be read, like the writes it leads to.
 */
export const OPERATOR_PAGE = {
  config: { ...ADMIN_ROUTE, role: 'operator' },
  schema: { hide: true },
} as const

/** Route options of the dashboard's logout: every role may end its own session. */
export const SESSION_PAGE = { config: VIEWER_ROUTE, schema: { hide: true } } as const

/** Route options of a dashboard route for admins only (evaluation keys). */
export const ADMIN_PAGE = { config: ADMIN_ROLE_ROUTE, schema: { hide: true } } as const

/** Route options of a dashboard route reachable without a session (login, assets). */
export const PUBLIC_PAGE = { config: PUBLIC_ROUTE, schema: { hide: true } } as const

/** The pages of the navigation, in order. */
export const PAGES = [
  { id: 'routes', path: '/', label: 'Routes' },
  { id: 'flags', path: '/flags', label: 'Flags' },
  { id: 'segments', path: '/segments', label: 'Segments' },
  { id: 'rate-limits', path: '/rate-limits', label: 'Rate limits' },
  { id: 'blocked', path: '/blocked', label: 'Blocked' },
  { id: 'audit', path: '/audit', label: 'Audit' },
  { id: 'keys', path: '/evaluation-keys', label: 'Keys', role: 'admin' },
] as const satisfies readonly { id: string; path: string; label: string; role?: Role }[]

/** A page id of {@link PAGES}. */
export type PageId = (typeof PAGES)[number]['id']

/** A URL under a mount path (`''` at the root) with a query string. */
function urlUnder(base: string, path: string, query: QueryValues = {}): string {
  return withQuery(`${base}${path === '/' && base !== '' ? '/' : path}`, query)
}

/**
 * What the route-control pages bring to the console shared with a task admin on the same app:
 * every page of the navigation (their ids are the console's), the brand, and the link to one
 * route (the Routes page searched for its key).
 */
export function routeConsoleMember(mountPath: string): ConsoleMember {
  const base = mountPath === '/' ? '' : mountPath
  return {
    half: 'routes',
    entries: PAGES.map((page) => ({
      id: page.id,
      label: page.label,
      href: urlUnder(base, page.path),
      ...('role' in page ? { role: page.role } : {}),
    })),
    product: 'switchyard',
    home: urlUnder(base, '/'),
    routeHref: (route) => urlUnder(base, '/', { q: route }),
  }
}

/** Who acts through the dashboard: the logged-in user (or `anonymous`), platform `dashboard`. */
export interface DashboardActor {
  actor: string
  platform: 'dashboard'
}

/** The events the pages follow, and which fields of each name the record it changes. */
const STREAM_EVENTS = [
  'route_state',
  'global_maintenance',
  'service_maintenance',
  'rl_policy',
  'global_rl_policy',
  'service_rl_policy',
  'rl_hit',
  'flag',
  'segment',
  'audit',
  'task_audit',
] as const
const STREAM_KEYS = { route_state: ['service', 'route'], flag: ['key'], segment: ['key'] }

/**
 * The dashboard of one admin app: its context, URL building, and the role its views render
 * for. The app keeps one instance for the `viewer` role; each handler renders with
 * {@link Dashboard.for}, the same dashboard for the principal's role, so a view that is
 * handed the app's instance by mistake shows no action rather than every one.
 */
export class Dashboard {
  /** The mount path without a trailing slash ('' at the root). */
  readonly base: string

  constructor(
    readonly admin: AdminContext,
    /** The role the views render for: they leave out the actions it does not allow. */
    readonly role: Role = 'viewer',
  ) {
    this.base = admin.mountPath === '/' ? '' : admin.mountPath
  }

  /** This dashboard for the role of a request's principal (`viewer` when there is none). */
  for(request: FastifyRequest): Dashboard {
    const role = request.switchyardAdmin?.role ?? 'viewer'
    return role === this.role ? this : new Dashboard(this.admin, role)
  }

  /** True when the views' role includes `needed` (`operator` for actions, `admin` for keys). */
  can(needed: Role): boolean {
    return roleAllows(this.role, needed)
  }

  /** The flag service, if the flag subsystem is available. */
  flags(): FlagService | undefined {
    return flagServiceOf(this.admin)
  }

  /** The flag service; a 404 `NOT_FOUND` without the flag subsystem. */
  requireFlags(): FlagService {
    const service = this.flags()
    if (service === undefined)
      throw new EndpointNotFoundError('The flag subsystem is not available on this server.')
    return service
  }

  /** A URL under the mount with a query string (empty values left out). */
  url(path: string, query: QueryValues = {}): string {
    return urlUnder(this.base, path, query)
  }

  /** The URL of a route (its key, e.g. `GET:/v1/users`) on the Routes page. */
  routeUrl(route: string): string {
    return this.url('/', { q: route })
  }

  /** Who acts for a request. */
  actor(request: FastifyRequest): DashboardActor {
    return { actor: request.switchyardAdmin?.username ?? 'anonymous', platform: 'dashboard' }
  }

  /** A full page in the layout; the navigation leaves out pages the principal's role cannot use. */
  page(request: FastifyRequest, props: DashboardPageProps<PageId>): JSX.Element {
    const principal = request.switchyardAdmin
    const role = principal?.role ?? 'viewer'
    const sessions = this.admin.sessions
    return dashboardPage(
      {
        product: 'switchyard',
        home: this.url('/'),
        assetsUrl: `${this.base}/assets/`,
        pages: PAGES.filter((page) => !('role' in page) || roleAllows(role, page.role)),
        url: (path) => this.url(path),
        csrfToken:
          principal?.via === 'cookie' && principal.token !== null
            ? csrfTokenFor(principal.token)
            : null,
        user:
          principal?.session == null
            ? null
            : { name: principal.username, role, logoutUrl: this.url('/logout') },
        stream: { url: this.url('/api/events'), events: STREAM_EVENTS, keys: STREAM_KEYS },
        console: this.admin.console?.header(role, props.active) ?? null,
        session:
          sessions === null
            ? null
            : {
                loginUrl: this.url('/login'),
                checkUrl: this.url('/api/auth/me'),
                page: request.url,
              },
      },
      props,
    )
  }
}

/** What a page shows a role that may not use it: which role it needs, and who is signed in. */
export function NeedsRole(props: { dashboard: Dashboard; role: Role; what: string }): JSX.Element {
  return (
    <div class="panel" data-needs-role={props.role}>
      <Empty title={`${props.what} needs the ${props.role} role.`}>
        <p
          safe
        >{`You are signed in as ${article(props.dashboard.role)} ${props.dashboard.role}.`}</p>
      </Empty>
    </div>
  )
}

/**
 * A form's fields for a role that may read them but not change them: disabled, inside no
 * form, with no submit button.
 */
export function ReadOnly(props: { children: JSX.Element | JSX.Element[] }): JSX.Element {
  // Children are JSX elements, escaped where they were built.
  const safeChildren = props.children
  return (
    <fieldset class="read-only" disabled>
      {safeChildren}
    </fieldset>
  )
}

function article(role: Role): string {
  return role === 'admin' ? 'an' : 'a'
}

// Request reading and DOM ids are shared with the task dashboard.
export { domId, pageParam, param } from '../../ui/index.js'
