/**
 * What every task-dashboard page shares: URLs under the mount, the layout with the tabs (Runs,
 * Functions, Schedules, Queues, Dead Letters, and Audit when auth is on), the live stream, and the
 * session's CSRF token. With the route-control admin on the same app, the pages wear the
 * console's header instead: its navigation holds Tasks (the Runs tab), Schedules and Queues, and
 * the other tabs of the Tasks section sit in a second row under it.
 */
import type { FastifyRequest } from 'fastify'
import {
  dashboardPage,
  withQuery,
  type DashboardPageProps,
  type QueryValues,
} from '../../../ui/index.js'
import { roleAllows } from '../../../common/roles.js'
import type { ConsoleAuditSource, ConsoleMember } from '../../../common/console-registry.js'
import { mountPath, type TaskAdminContext } from '../context.js'

/** Route options of a dashboard page or fragment: without a session, redirect to the login view. */
export const PAGE = { config: { taskAdminPage: true }, schema: { hide: true } } as const

/** The tab labels by id, in order; Audit only exists with auth. */
const TAB_LABELS = {
  view: 'Runs',
  tasks: 'Functions',
  schedules: 'Schedules',
  queues: 'Queues',
  workers: 'Workers',
  'dead-letters': 'Dead Letters',
  audit: 'Audit',
} as const

/** A tab id of {@link TABS}. */
export type TabId = keyof typeof TAB_LABELS

/** The tabs, in order: the View tab is the dashboard's home, every other tab sits at its id. */
export const TABS: readonly { id: TabId; path: string; label: string }[] = Object.entries(
  TAB_LABELS,
).map(([id, label]) => ({
  id: id as TabId,
  path: id === 'view' ? '/dashboard' : `/dashboard/${id}`,
  label,
}))

/**
 * The tabs that are entries of the console's shared navigation, with their id and label there
 * (Runs is the console's Tasks). Every other tab belongs to the Tasks section: the shared
 * navigation marks Tasks, and the section's tabs sit in a second row. A new view joins the
 * console by an entry here (and its id in the console's order).
 */
const CONSOLE_ENTRIES: Partial<Record<TabId, { id: string; label: string }>> = {
  view: { id: 'tasks', label: 'Tasks' },
  schedules: { id: 'schedules', label: 'Schedules' },
  queues: { id: 'queues', label: 'Queues' },
  workers: { id: 'workers', label: 'Workers' },
}

/** The console entry a tab marks as current: its own, or the Tasks section's. */
function consoleEntryOf(tab: TabId | null): string | null {
  if (tab === null) return null
  return CONSOLE_ENTRIES[tab]?.id ?? 'tasks'
}

/** The tabs of the console's Tasks section (Runs, Functions, Dead Letters, Audit). */
function sectionTabs(authenticated: boolean): { id: TabId; path: string; label: string }[] {
  return TABS.filter(
    (tab) => consoleEntryOf(tab.id) === 'tasks' && (tab.id !== 'audit' || authenticated),
  )
}

/** What the task dashboard brings to the console shared with the route-control admin. */
export function taskConsoleMember(
  base: string,
  title: string,
  audit?: ConsoleAuditSource,
): ConsoleMember {
  return {
    ...(audit === undefined ? {} : { audit }),
    half: 'tasks',
    entries: TABS.flatMap((tab) => {
      const entry = CONSOLE_ENTRIES[tab.id]
      return entry === undefined ? [] : [{ ...entry, href: `${base}${tab.path}` }]
    }),
    product: title,
    home: `${base}/dashboard`,
  }
}

/** The windows of the time-range filters; `all` only where the tab offers it. */
export const WINDOWS = ['1h', '6h', '24h', '7d'] as const

/** The dashboard of one task-admin mount: its context and URL building. */
export class TaskDashboard {
  constructor(readonly context: TaskAdminContext) {}

  /** Whether the mount has auth (the Audit tab, the login view, CSRF). */
  get authenticated(): boolean {
    return this.context.sessions !== null
  }

  /** A URL under the mount with a query string (empty values left out). */
  url(path: string, query: QueryValues = {}): string {
    return withQuery(mountPath(this.context, path), query)
  }

  /**
   * Whether the request's principal may act (retry, cancel, replay, change queues): an
   * operator or an admin. A viewer's pages show no action buttons; the routes refuse the
   * actions anyway.
   */
  canAct(request: FastifyRequest): boolean {
    const role = request.taskAdmin?.role
    return role !== undefined && roleAllows(role, 'operator')
  }

  /** The CSRF token of a cookie session, else null. */
  csrfToken(request: FastifyRequest): string | null {
    const principal = request.taskAdmin
    const sessions = this.context.sessions
    if (sessions === null || principal?.session == null || principal.via !== 'cookie') return null
    return sessions.csrfToken(principal.session)
  }

  /**
   * The URL of a route (its key, e.g. `GET:/v1/users`) on the route-control admin's Routes page,
   * or null when that admin is not mounted on the same app.
   */
  routeUrl(route: string): string | null {
    return this.context.console?.routeHref(route) ?? null
  }

  /** A full page in the layout. */
  page(request: FastifyRequest, props: Omit<DashboardPageProps<TabId>, 'services'>): JSX.Element {
    const principal = request.taskAdmin
    const sessions = this.context.sessions
    const header =
      this.context.console?.header(principal?.role ?? 'viewer', consoleEntryOf(props.active)) ??
      null
    const inSection = header !== null && consoleEntryOf(props.active) === 'tasks'
    return dashboardPage(
      {
        product: this.context.title,
        home: this.url('/dashboard'),
        assetsUrl: this.url('/dashboard/assets/'),
        pages: TABS.filter((tab) => tab.id !== 'audit' || this.authenticated),
        url: (path) => this.url(path),
        csrfToken: this.csrfToken(request),
        user:
          principal?.session == null
            ? null
            : {
                name: principal.username,
                role: principal.role,
                logoutUrl: this.url('/auth/logout'),
              },
        stream: {
          url: this.url('/dashboard/stream'),
          events: ['task'],
          keys: { task: ['task_id'] },
          pollInterval: this.context.pollInterval,
        },
        console: header,
        subnav: inSection
          ? {
              label: 'Task views',
              items: sectionTabs(this.authenticated).map((tab) => ({
                href: this.sectionHref(tab),
                label: tab.label,
                active: tab.id === props.active,
              })),
            }
          : null,
        session:
          sessions === null
            ? null
            : {
                loginUrl: this.url('/auth/login'),
                checkUrl: this.url('/auth/me'),
                page: request.url,
              },
      },
      props,
    )
  }

  /**
   * Where a tab of the console's Tasks section leads: its page, except Audit, which is the
   * console's one Audit page narrowed to task entries (both halves' entries are listed there).
   */
  private sectionHref(tab: { id: TabId; path: string }): string {
    const audit = tab.id === 'audit' ? (this.context.console?.auditHref ?? null) : null
    return audit === null ? this.url(tab.path) : withQuery(audit, { kind: 'tasks' })
  }

  /** A full page of one tab: its content in a section under an `h1` (the title unless given). */
  tabPage(
    request: FastifyRequest,
    props: {
      title: string
      heading?: string
      /** The heading's id, which labels the section. */
      headingId: string
      active: TabId
      children: JSX.Element | JSX.Element[]
    },
  ): JSX.Element {
    // Children are JSX elements, escaped where they were built.
    const safeChildren = props.children
    return this.page(request, {
      title: props.title,
      active: props.active,
      children: (
        <section aria-labelledby={props.headingId}>
          <h1 id={props.headingId} safe>
            {props.heading ?? props.title}
          </h1>
          {safeChildren}
        </section>
      ),
    })
  }
}

/** A window from the query, or `fallback` when absent or not one of `allowed`. */
export function windowParam(value: string, allowed: readonly string[], fallback: string): string {
  return allowed.includes(value) ? value : fallback
}

/** Human words for a window: `1h` → `1 h`, `all` → `all time`. */
export function windowLabel(window: string): string {
  if (window === 'all') return 'all time'
  return `${window.slice(0, -1)} ${window.endsWith('d') ? 'd' : 'h'}`
}
