/**
 * The route-control dashboard: live HTML pages at the admin mount (Routes at the mount itself,
 * Flags, Segments, Rate limits, Blocked, Audit, evaluation Keys, and the login view), rendered on the server
 * and updated over the admin event stream with htmx. See docs/dashboard.md.
 *
 * The pages live in their own encapsulated scope: form bodies, compression and an HTML error
 * handler apply to them only, never to the JSON API beside them. They call the same engine
 * and flag service as the API, so validation, audit and errors are shared.
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { SwitchyardError } from '../../core/errors.js'
import { FlagNotFoundError } from '../../flags/errors.js'
import {
  sendErrorAnswer,
  Empty,
  isHtmx,
  prepareDashboardScope,
  registerAssetsRoute,
  sendHtml,
  sendToLogin,
} from '../../ui/index.js'
import type { AdminContext } from '../context.js'
import { PUBLIC_ROUTE } from '../context.js'
import { UnauthenticatedError } from '../errors.js'
import { auditPage } from './audit-page.js'
import { blockedPage } from './blocked-page.js'
import { flagPages } from './flags-page.js'
import { keysPage } from './keys-page.js'
import { loginPage } from './login-page.js'
import { rateLimitsPage } from './rate-limits-page.js'
import { routesPage } from './routes-page.js'
import { segmentPages } from './segments-page.js'
import { Dashboard } from './view.js'

/**
 * The dashboard's answer to a path no route serves: a page (layout, message, a way back) for a
 * browser navigating to it, or `null` when the request is not such a navigation (an API call,
 * a fragment, a write), which keeps the JSON 404 of the API.
 */
export type PageNotFound = (
  request: FastifyRequest,
  reply: FastifyReply,
) => Promise<FastifyReply> | null

/**
 * Registers the dashboard's pages, fragments and assets on the admin app, and returns the
 * handler of unknown pages for the app's not-found handler.
 */
export function dashboardRoutes(app: FastifyInstance, context: AdminContext): PageNotFound {
  const dashboard = new Dashboard(context)
  void app.register(async (scope) => {
    await prepareDashboardScope(scope)
    scope.setErrorHandler((error: FastifyError, request, reply) =>
      handlePageError(dashboard, error, request, reply),
    )
    registerAssetsRoute(scope, PUBLIC_ROUTE)
    loginPage(scope, dashboard)
    routesPage(scope, dashboard)
    flagPages(scope, dashboard)
    segmentPages(scope, dashboard)
    rateLimitsPage(scope, dashboard)
    blockedPage(scope, dashboard)
    auditPage(scope, dashboard)
    keysPage(scope, dashboard)
  })
  return (request, reply) =>
    isPageNavigation(request, dashboard) ? sendNotFoundPage(dashboard, request, reply) : null
}

/** A browser's GET of a page: not the API, not OFREP, not htmx, and HTML accepted. */
function isPageNavigation(request: FastifyRequest, dashboard: Dashboard): boolean {
  if (request.method !== 'GET' || isHtmx(request)) return false
  const accept = request.headers.accept
  if (typeof accept !== 'string' || !accept.includes('text/html')) return false
  const path = request.url.slice(dashboard.url('/').length - 1)
  return !(path.startsWith('/api/') || path === '/api' || path.startsWith('/ofrep/'))
}

function sendNotFoundPage(
  dashboard: Dashboard,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<FastifyReply> {
  return sendHtml(
    reply,
    dashboard.page(request, {
      title: 'Page not found',
      active: null,
      children: (
        <div class="panel">
          <Empty title="Page not found">
            <p>
              Nothing here answers <code safe>{request.url}</code>.
            </p>
            <p>
              <a href={dashboard.url('/')}>Back to the routes</a>
            </p>
          </Empty>
        </div>
      ),
    }),
    404,
  )
}

/**
 * Errors of pages: without a session a page redirects to the login view (a fragment gets a
 * 401 that makes the page say the session expired); an API error becomes a page with its
 * message, or a toast for a fragment.
 */
function handlePageError(
  dashboard: Dashboard,
  error: FastifyError,
  request: FastifyRequest,
  reply: FastifyReply,
): FastifyReply | Promise<FastifyReply> {
  if (error instanceof UnauthenticatedError && dashboard.admin.sessions !== null) {
    return sendToLogin(request, reply, dashboard.url('/login'))
  }
  let status = 500
  let message = 'Internal error; see the server log.'
  if (error instanceof SwitchyardError && error.statusCode < 500) {
    status = error.statusCode
    message = error.message
  } else if (
    !(error instanceof SwitchyardError) &&
    typeof error.statusCode === 'number' &&
    error.statusCode >= 400 &&
    error.statusCode < 500
  ) {
    status = error.statusCode
    message = error.message
  } else {
    request.log.error({ err: error }, 'switchyard dashboard: unexpected error')
  }
  return sendErrorAnswer(request, reply, {
    status,
    message,
    // A flag that is not there (deleted, mistyped link) sends the operator back to the flags.
    back:
      error instanceof FlagNotFoundError
        ? { href: dashboard.url('/flags'), label: 'Back to the flags' }
        : { href: dashboard.url('/'), label: 'Back to the routes' },
    page: (title, children) => dashboard.page(request, { title, active: null, children }),
  })
}
