/**
 * What every route-control page shares: URLs under the mount, the layout with this
 * dashboard's navigation and stream, who acts, and how query parameters are read.
 */
import type { FastifyRequest } from 'fastify'
import type { FlagService } from '../../flags/service.js'
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
import {
  dashboardPage,
  type DashboardPageProps,
  withQuery,
  type QueryValues,
} from '../../ui/index.js'

/** Route options of a dashboard page or fragment: an admin route, left out of the OpenAPI document. */
export const PAGE = { config: ADMIN_ROUTE, schema: { hide: true } } as const

/** Route options of a page that manages credentials (evaluation keys): the admin role only. */
export const ADMIN_PAGE = { config: ADMIN_ROLE_ROUTE, schema: { hide: true } } as const

/** Route options of the dashboard's logout, which every role may use. */
export const SESSION_PAGE = { config: VIEWER_ROUTE, schema: { hide: true } } as const

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
  { id: 'keys', path: '/evaluation-keys', label: 'Keys' },
] as const

/** A page id of {@link PAGES}. */
export type PageId = (typeof PAGES)[number]['id']

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
] as const
const STREAM_KEYS = { route_state: ['service', 'route'], flag: ['key'], segment: ['key'] }

/** The dashboard of one admin app: its context and URL building. */
export class Dashboard {
  /** The mount path without a trailing slash ('' at the root). */
  readonly base: string

  constructor(readonly admin: AdminContext) {
    this.base = admin.mountPath === '/' ? '' : admin.mountPath
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
    return withQuery(`${this.base}${path === '/' && this.base !== '' ? '/' : path}`, query)
  }

  /** Who acts for a request. */
  actor(request: FastifyRequest): DashboardActor {
    return { actor: request.switchyardAdmin?.username ?? 'anonymous', platform: 'dashboard' }
  }

  /** A full page in the layout. */
  page(request: FastifyRequest, props: DashboardPageProps<PageId>): JSX.Element {
    const principal = request.switchyardAdmin
    return dashboardPage(
      {
        product: 'switchyard',
        home: this.url('/'),
        assetsUrl: `${this.base}/assets/`,
        pages: PAGES,
        url: (path) => this.url(path),
        csrfToken:
          principal?.via === 'cookie' && principal.token !== null
            ? csrfTokenFor(principal.token)
            : null,
        user:
          principal?.session == null
            ? null
            : { name: principal.username, logoutUrl: this.url('/logout') },
        stream: { url: this.url('/api/events'), events: STREAM_EVENTS, keys: STREAM_KEYS },
      },
      props,
    )
  }
}

// Request reading and DOM ids are shared with the task dashboard.
export { domId, pageParam, param } from '../../ui/index.js'
