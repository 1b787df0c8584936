/**
 * The task dashboard at `{tasks}/dashboard`: server-rendered pages and htmx fragments over the
 * same services as the JSON API (so validation, audit and errors are shared), updated live
 * from the task stream: an event makes the page fetch the changed row or section, it never
 * carries HTML. See docs/task-dashboard.md.
 */
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import {
  sendErrorAnswer,
  prepareDashboardScope,
  registerAssetsRoute,
  sendToLogin,
} from '../../../ui/index.js'
import { TaskAdminNotFoundError } from '../errors.js'
import { toTaskAdminError } from '../http-errors.js'
import type { TaskAdminContext, TaskAdminInstance } from '../context.js'
import { actionRoutes } from './action-routes.js'
import { bulkRoutes } from './bulk-routes.js'
import { tabRoutes } from './tab-routes.js'
import { PAGE, TaskDashboard } from './view.js'

/** Registers the dashboard's pages, fragments, actions and assets in their own scope. */
export function dashboardRoutes(app: TaskAdminInstance, context: TaskAdminContext): void {
  const dashboard = new TaskDashboard(context)
  void app.register(async (scope: TaskAdminInstance) => {
    await prepareDashboardScope(scope)
    scope.setErrorHandler((error: FastifyError, request, reply) =>
      handlePageError(dashboard, error, request, reply),
    )
    registerAssetsRoute(scope, { taskAdminPublic: true }, undefined, '/dashboard/assets/:file')
    tabRoutes(scope, dashboard)
    actionRoutes(scope, dashboard)
    bulkRoutes(scope, dashboard)
    // Any other address under the dashboard is a page the browser asked for (a stale bookmark,
    // a mistyped link): an HTML 404 page, after the login like every page. The API's unknown
    // paths keep their JSON 404.
    scope.get('/dashboard/*', PAGE, (request) => {
      throw new TaskAdminNotFoundError(`No dashboard page ${request.url.split('?', 1)[0] ?? ''}.`)
    })
  })
}

/**
 * Errors of pages and fragments: a fragment gets a toast with the message (and the status), a
 * page an error page; a failing store is a 503 saying so, never a 500.
 */
function handlePageError(
  dashboard: TaskDashboard,
  error: FastifyError,
  request: FastifyRequest,
  reply: FastifyReply,
): FastifyReply | Promise<FastifyReply> {
  const answer = toTaskAdminError(error)
  const status = answer.statusCode
  if (status >= 500) request.log.error({ err: error }, 'switchyard task dashboard: failure')
  if (status === 401) return sendToLogin(request, reply, dashboard.url('/auth/login'))
  return sendErrorAnswer(request, reply, {
    status,
    message: answer.message,
    back: { href: dashboard.url('/dashboard'), label: 'Back to the runs' },
    page: (title, children) => dashboard.page(request, { title, active: null, children }),
  })
}
