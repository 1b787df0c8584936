/**
 * `fastify-switchyard/tasks/fastify`: the Fastify integration of the task manager.
 *
 * @example
 * await app.register(tasksPlugin, { taskManager: manager })
 * app.post('/signup', async (request) => {
 *   request.backgroundTasks.add(sendWelcomeEmail, request.body.email) // runs after the response
 *   return { ok: true }
 * })
 *
 * The plugin wires the manager's startup and shutdown to `onReady` / `onClose` (through
 * `manager.initApp`, which is idempotent) and, unless `autoInstall` is false, decorates every
 * request with `backgroundTasks`.
 */
export type { BackgroundTasks } from './background-tasks.js'
export { tasksPlugin, type TasksPluginOptions } from './tasks-plugin.js'
export { taskAdmin } from '../admin/lazy-plugin.js'
export type { TaskAdminOptions } from '../admin/options.js'
export type { TaskAdminAuth, TaskAdminAuthBackend } from '../admin/auth/credentials.js'
export { SESSION_COOKIE as TASK_ADMIN_SESSION_COOKIE } from '../admin/auth/sessions.js'
export * from '../admin/error-classes.js'
export {
  BadRequestError,
  BodyTooLargeError,
  CrossOriginRequestError,
  MisdirectedRequestError,
  UnsupportedMediaTypeError,
} from '../../common/request-errors.js'
export { ForbiddenError, ROLES, type Role } from '../../common/roles.js'
export { taskAdminErrorCatalogue } from '../admin/errors.js'
