/**
 * The one layout of both dashboards: header (title, service switcher, live indicator, user),
 * navigation, toasts, the action dialog, and the page's live stream.
 *
 * Templates are JSX rendered to strings by `@kitajs/html`: attribute values are always
 * escaped, and text children are escaped with the `safe` attribute, which `npm run check`
 * enforces (its XSS scan fails on any unescaped string child).
 */
import type { Toast } from './http.js'
import { uiAssets, type UiAssets } from './assets.js'

/** One entry of the navigation. */
export interface NavItem {
  href: string
  label: string
  active: boolean
}

/**
 * The page's live stream: an SSE endpoint, the event types the page reacts to, and for each
 * type the fields of the event's data that name the record it changes (joined by a space,
 * matched against `data-live-key`).
 */
export interface LiveStream {
  url: string
  events: readonly string[]
  keys: Readonly<Record<string, readonly string[]>>
  /**
   * Seconds between refreshes of the live sections while the stream is unavailable (the
   * indicator says so); without it the page only waits for the stream to come back.
   */
  pollInterval?: number
}

/** The service switcher: a select that reloads the page with `?service=`. */
export interface ServiceSwitcher {
  names: readonly string[]
  /** The selected service, or null for "all services". */
  current: string | null
  /** The page URL the switcher submits to. */
  action: string
  /** Other query parameters to keep (filters of the current view). */
  keep?: Readonly<Record<string, string>>
}

/** The signed-in user shown in the header. */
export interface DashboardUser {
  name: string
  /** The user's role, shown next to the name. */
  role?: string
  /** Where the logout form posts to. */
  logoutUrl: string
}

/**
 * How a page learns that its session ended: `checkUrl` answers 401 once the session is gone
 * (asked when the live stream fails), and `loginUrl` is the login view, to which the page adds
 * `next=` with its own address (never a fragment's). Absent in open mode.
 */
export interface SessionWatch {
  /** The login view, without a query. */
  loginUrl: string
  /** An endpoint that answers 401 without a valid session, e.g. `/admin/api/auth/me`. */
  checkUrl: string
  /** The page's own address, for the login link before the script updates it. */
  page: string
}

/** A second row of navigation under the main one (the views of one console section). */
export interface SubNav {
  /** Names the landmark, e.g. `Task views`. */
  label: string
  items: readonly NavItem[]
}

/** Props of {@link Layout}. */
export interface LayoutProps {
  /** The page title (also the document title, before the product name). */
  title: string
  /** The product shown at the top left, e.g. `switchyard`. */
  product: string
  /** The product in the document title, when not {@link LayoutProps.product}. */
  titleProduct?: string
  /** The home URL of the dashboard. */
  home: string
  nav: readonly NavItem[]
  /** A second row of navigation, e.g. the task views inside the console's Tasks section. */
  subnav?: SubNav | null
  /** How the page notices that its session ended; null in open mode. */
  session?: SessionWatch | null
  /** URL prefix of the assets route, ending with `/`, e.g. `/switchyard/assets/`. */
  assetsUrl: string
  /** Embedded as `<meta name="csrf-token">`; htmx requests send it as `X-CSRF-Token`. */
  csrfToken?: string | null
  /** The logged-in user and where logging out posts to; null in open mode. */
  user?: DashboardUser | null
  services?: ServiceSwitcher | null
  stream?: LiveStream | null
  /** Toasts shown when the page loads. */
  flash?: readonly Toast[]
  assets?: UiAssets
  children?: JSX.Element | JSX.Element[]
}

const HTMX_CONFIG = JSON.stringify({
  includeIndicatorStyles: false,
  allowEval: false,
  allowScriptTags: false,
  historyCacheSize: 0,
  defaultSettleDelay: 0,
  responseHandling: [
    { code: '204', swap: false },
    { code: '[23]..', swap: true },
    // Form answers with validation errors carry the form again, errors next to the fields.
    { code: '(409|422)', swap: true, error: false },
    { code: '[45]..', swap: false, error: true },
  ],
})

/** The document around a dashboard page. */
export function Layout(props: LayoutProps): JSX.Element {
  // Children are JSX elements, escaped where they were built.
  const safeChildren = props.children
  const assets = props.assets ?? uiAssets()
  const asset = (name: Parameters<UiAssets['file']>[0]) => props.assetsUrl + assets.file(name)
  const stream = props.stream ?? null
  const session = props.session ?? null
  return (
    <>
      {'<!doctype html>'}
      <html lang="en">
        <head>
          <meta charset="utf-8" />
          <meta name="viewport" content="width=device-width, initial-scale=1" />
          <title safe>{`${props.title} · ${props.titleProduct ?? props.product}`}</title>
          {props.csrfToken ? <meta name="csrf-token" content={props.csrfToken} /> : ''}
          <meta name="htmx-config" content={HTMX_CONFIG} />
          <link rel="stylesheet" href={asset('style')} />
          <link rel="icon" href={asset('icon')} type="image/svg+xml" />
          <script src={asset('htmx')} defer></script>
          <script src={asset('sse')} defer></script>
          <script src={asset('script')} defer></script>
        </head>
        <body>
          <a class="skip" href="#main">
            Skip to content
          </a>
          <div
            id="ui-stream"
            hx-ext={stream === null ? undefined : 'sse'}
            sse-connect={stream?.url}
            data-live-events={stream?.events.join(' ')}
            data-live-keys={stream === null ? undefined : JSON.stringify(stream.keys)}
            data-poll-interval={
              stream?.pollInterval === undefined ? undefined : String(stream.pollInterval)
            }
            data-login-url={session?.loginUrl}
            data-session-url={session?.checkUrl}
          >
            {session === null ? '' : <SessionExpired {...session} />}
            <header class="top">
              <div class="top-inner">
                <a class="brand" href={props.home}>
                  <img src={asset('icon')} alt="" width="22" height="22" />
                  <span safe>{props.product}</span>
                </a>
                <div class="top-tools">
                  {props.services ? <Switcher {...props.services} /> : ''}
                  {stream === null ? '' : <LiveIndicator />}
                  {props.user ? (
                    <form
                      method="post"
                      action={props.user.logoutUrl}
                      hx-post={props.user.logoutUrl}
                    >
                      {props.csrfToken ? (
                        // without JavaScript the form itself carries the token
                        <input type="hidden" name="csrf_token" value={props.csrfToken} />
                      ) : (
                        ''
                      )}
                      <span class="user" safe>
                        {props.user.name}
                      </span>{' '}
                      {props.user.role === undefined ? (
                        ''
                      ) : (
                        <>
                          <span class="badge badge-plain user-role" title="Your role" safe>
                            {props.user.role}
                          </span>{' '}
                        </>
                      )}
                      <button class="btn btn-small" type="submit">
                        Log out
                      </button>
                    </form>
                  ) : (
                    ''
                  )}
                </div>
              </div>
              <nav class="nav" aria-label="Dashboard">
                {props.nav.map((item) => (
                  <a href={item.href} aria-current={item.active ? 'page' : undefined} safe>
                    {item.label}
                  </a>
                ))}
              </nav>
              {props.subnav ? (
                <nav class="nav nav-sub" aria-label={props.subnav.label}>
                  {props.subnav.items.map((item) => (
                    <a href={item.href} aria-current={item.active ? 'page' : undefined} safe>
                      {item.label}
                    </a>
                  ))}
                </nav>
              ) : (
                ''
              )}
            </header>
            <main id="main" tabindex="-1">
              {safeChildren}
            </main>
          </div>
          <div id="ui-toasts" aria-live="polite">
            {(props.flash ?? []).map((toast) => (
              <div class={`toast toast-${toast.kind ?? 'info'}`} role="status">
                <span safe>{toast.message}</span>
              </div>
            ))}
          </div>
          <dialog id="ui-dialog" aria-labelledby="ui-dialog-title">
            <div id="ui-dialog-body"></div>
          </dialog>
        </body>
      </html>
    </>
  )
}

/**
 * The notice a page shows once its session ended (hidden until then): the live stream has
 * stopped, and the link logs in again and comes back to this page (the script keeps its `next`
 * on the page's current address).
 */
function SessionExpired(props: SessionWatch): JSX.Element {
  return (
    <div id="ui-session-expired" class="session-expired" role="alert" hidden>
      <span>Session expired — </span>
      <a href={withNext(props.loginUrl, props.page)} data-login-link>
        log in
      </a>
    </div>
  )
}

/** `loginUrl` with `next` set to `page`. */
export function withNext(loginUrl: string, page: string): string {
  return `${loginUrl}${loginUrl.includes('?') ? '&' : '?'}next=${encodeURIComponent(page)}`
}

/** The live / paused / reconnecting indicator; a click pauses or resumes live updates. */
export function LiveIndicator(): JSX.Element {
  return (
    <button
      type="button"
      id="ui-live"
      class="live"
      data-state="connecting"
      data-conn="connecting"
      aria-pressed="false"
      title="Pause live updates"
    >
      <span class="live-dot" aria-hidden="true"></span>
      <span class="live-label">Connecting…</span>
    </button>
  )
}

function Switcher(props: ServiceSwitcher): JSX.Element {
  return (
    <form class="switcher" method="get" action={props.action}>
      {Object.entries(props.keep ?? {}).map(([name, value]) => (
        <input type="hidden" name={name} value={value} />
      ))}
      <label for="ui-service">Service</label>
      <select id="ui-service" name="service" data-autosubmit>
        <option value="" selected={props.current === null}>
          All services
        </option>
        {props.names.map((name) => (
          <option value={name} selected={props.current === name} safe>
            {name}
          </option>
        ))}
      </select>
      <noscript>
        <button class="btn btn-small" type="submit">
          Show
        </button>
      </noscript>
    </form>
  )
}

/** The content of the action dialog: a titled box with a close button around a form. */
export function DialogContent(props: { title: string; children?: JSX.Element | JSX.Element[] }) {
  // Children are JSX elements, escaped where they were built.
  const safeChildren = props.children
  return (
    <div class="dialog-inner">
      <div class="dialog-head">
        <h2 id="ui-dialog-title" safe>
          {props.title}
        </h2>
        <button type="button" class="btn btn-small" data-dialog-close aria-label="Close">
          ×
        </button>
      </div>
      {safeChildren}
    </div>
  )
}

/** One page of a dashboard's navigation. */
export interface NavPage {
  id: string
  path: string
  label: string
}

/** What every page of one dashboard has around its content (see {@link dashboardPage}). */
export interface DashboardShell {
  product: string
  home: string
  assetsUrl: string
  /** The navigation, in order. */
  pages: readonly NavPage[]
  /** A page's path as a URL under the dashboard's mount. */
  url: (path: string) => string
  csrfToken: string | null
  user: DashboardUser | null
  stream: LiveStream
  /**
   * The console's header when both admins are mounted on one app: its brand and navigation
   * replace the dashboard's own (`pages` then only serve the sub-navigation).
   */
  console?: { product: string; home: string; nav: readonly NavItem[] } | null
  /** A second row of navigation (see {@link SubNav}). */
  subnav?: SubNav | null
  /** How the page notices that its session ended; null in open mode. */
  session?: SessionWatch | null
}

/** What a dashboard page puts in the shell: its title, navigation entry, toasts and content. */
export interface DashboardPageProps<Id extends string = string> {
  title: string
  /** The id of the page's navigation entry, or null for a page outside the navigation. */
  active: Id | null
  services?: ServiceSwitcher | null
  flash?: readonly Toast[]
  children: JSX.Element | JSX.Element[]
}

/** A full page of a dashboard: its content in the layout, the navigation entry `active` marked. */
export function dashboardPage(shell: DashboardShell, props: DashboardPageProps): JSX.Element {
  // Children are JSX elements, escaped where they were built.
  const safeChildren = props.children
  const shared = shell.console ?? null
  return (
    <Layout
      title={props.title}
      product={shared?.product ?? shell.product}
      // in the console, the browser tab still names the half (e.g. the task admin's title)
      titleProduct={shell.product}
      home={shared?.home ?? shell.home}
      assetsUrl={shell.assetsUrl}
      nav={
        shared?.nav ??
        shell.pages.map((page) => ({
          href: shell.url(page.path),
          label: page.label,
          active: page.id === props.active,
        }))
      }
      subnav={shell.subnav ?? null}
      session={shell.session ?? null}
      csrfToken={shell.csrfToken}
      user={shell.user}
      services={props.services ?? null}
      stream={shell.stream}
      flash={props.flash ?? []}
    >
      {safeChildren}
    </Layout>
  )
}
