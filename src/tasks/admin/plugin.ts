/**
 * `taskAdmin`: the observability and control API of a task manager, mounted on a Fastify app
 * under a path (default `/tasks`): task records, metrics, audit, queues, schedules, retry,
 * cancel, bulk replay, history deletion, a login view, a dashboard page and a live stream.
 *
 * @example
 * await app.register(taskAdmin, { taskManager, path: '/tasks', auth: ['admin', 's3cret'] })
 *
 * The plugin wires the manager's startup and shutdown to the app (`manager.initApp`, once per
 * app, also with `tasksPlugin`). Its routes live in an encapsulated child: their hooks, parsers
 * and error handler do not leak into the app.
 */
import fastifyCookie from '@fastify/cookie'
import fastifyFormbody from '@fastify/formbody'
import { TypeBoxValidatorCompiler } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { LoginThrottle } from '../../common/login-throttle.js'
import { joinSharedLogin } from '../../common/shared-login.js'
import { TrustedProxies } from '../../common/trusted-proxies.js'
import { AllowedHosts, originGuard } from '../../common/same-origin.js'
import { healthRoutes } from '../../common/health-routes.js'
import { taskReadiness } from './readiness.js'
import { TaskValidationError } from '../errors.js'
import { tasksPlugin } from '../fastify/tasks-plugin.js'
import { TaskManager } from '../manager.js'
import { ClientInfo } from './auth/client.js'
import { prepareCredentials } from './auth/credentials.js'
import { dashboardRoutes } from './dashboard/index.js'
import { sessionGuard, TaskAdminSessions } from './auth/sessions.js'
import { randomSecretKey, SessionTokens } from './auth/tokens.js'
import { mountPath, type TaskAdminContext, type TaskAdminInstance } from './context.js'
import { TaskAdminNotFoundError } from './errors.js'
import { handleTaskAdminError } from './http-errors.js'
import { taskAuditSource } from './console-audit.js'
import { adminDataOf } from './local-data.js'
import { checkOptionNames, normaliseMountPath, seconds, type TaskAdminOptions } from './options.js'
import { overviewRoutes } from './routes/overview.js'
import { recordRoutes } from './routes/records.js'
import { sessionRoutes } from './routes/session.js'
import { TaskStream } from './stream.js'
import { bulkLimitOf } from './bulk.js'
import { markAdminSurface } from '../../common/admin-surface.js'
import { joinConsole } from '../../common/console-registry.js'
import { taskConsoleMember } from './dashboard/view.js'

const invalid = (message: string) => new TaskValidationError(message)

async function taskAdminPlugin(app: FastifyInstance, options: TaskAdminOptions): Promise<void> {
  checkOptionNames(options)
  const manager = options.taskManager
  if (!(manager instanceof TaskManager)) {
    throw new TaskValidationError('taskAdmin needs { taskManager: new TaskManager(...) }.')
  }
  const base = normaliseMountPath(options.path)
  const given = options.clock
  const now = given === undefined ? () => Date.now() : () => given.now()
  const tokenExpiry = seconds(options.tokenExpiry, 86_400, 'tokenExpiry')
  const secretKey = options.secretKey ?? randomSecretKey()
  if (typeof secretKey !== 'string' || secretKey.length < 16) {
    throw new TaskValidationError('secretKey must be a string of at least 16 characters.')
  }
  const title = options.title ?? 'switchyard tasks'
  if (typeof title !== 'string' || title.length > 200) {
    throw new TaskValidationError('title must be a string of at most 200 characters.')
  }
  const credentials = prepareCredentials(options.auth)
  const { data, revocations } = adminDataOf(manager)
  // With the admin app mounted on this app with the same `auth` value, one login serves both.
  const sharedLogin = credentials === null ? null : joinSharedLogin(app, options.auth, base)
  const sessions =
    credentials === null
      ? null
      : new TaskAdminSessions(
          new SessionTokens(secretKey),
          revocations,
          now,
          tokenExpiry,
          base,
          sharedLogin,
        )
  if (options.retentionDays !== undefined && options.retentionDays !== null) {
    manager.setRetentionDays(options.retentionDays)
  }
  manager.initApp(app)
  // A manager without a logger of its own logs through the app's (when not already attached).
  manager.attachLogger(app.log.child({ module: 'switchyard.tasks' }))
  if (options.autoInstall === true) {
    await app.register(tasksPlugin, { taskManager: manager, autoInstall: true })
  }
  const stream = new TaskStream({
    manager,
    displayFuncArgs: options.displayFuncArgs === true,
    hub: {
      eventBufferSize: options.eventBufferSize,
      clientBufferBytes: options.clientBufferBytes,
      keepaliveInterval: options.keepaliveInterval,
    },
    relayInterval: seconds(options.relayInterval, 1, 'relayInterval'),
    logger: manager.logger,
    sessionValid: (session) => sessions?.isValid(session) ?? Promise.resolve(true),
    now,
  })
  const context: TaskAdminContext = {
    manager,
    base,
    title,
    pollInterval: seconds(options.pollInterval, 30, 'pollInterval'),
    displayFuncArgs: options.displayFuncArgs === true,
    displayResults: options.displayResults === true,
    publicStream: options.publicStream === true || credentials === null,
    tokenExpiry,
    data,
    revocations,
    credentials,
    sessions,
    throttle: new LoginThrottle({ now }, options.loginThrottle, invalid),
    client: new ClientInfo(new TrustedProxies(options.trustedProxies, invalid)),
    hosts: AllowedHosts.resolve(options.allowedHosts, credentials === null, invalid),
    stream,
    bulkLimit: bulkLimitOf(options.bulkLimit),
    now,
    // With the route-control admin on the same app, the dashboards share one header and navigation.
    console: joinConsole(
      app,
      taskConsoleMember(
        base,
        title,
        credentials === null ? undefined : taskAuditSource(data, base),
      ),
    ),
  }
  if (credentials === null) {
    app.log.warn(
      `switchyard task admin at ${base === '' ? '/' : base} has no auth: it is open to anyone who can reach it${context.hosts === null ? '' : ' under its allowedHosts'}. Pass \`auth\` to protect it.`,
    )
  }
  stream.start()
  // A logout on the admin app ends this mount's streams of the shared session at once.
  const unwatch = sharedLogin?.onRevoked((id) => stream.endSession(id))
  const readiness = taskReadiness(manager)
  // Beside the mount's own context: no host check, session guard or CSRF check.
  healthRoutes(app, base, readiness)
  app.addHook('preClose', (done) => {
    readiness.markClosing()
    unwatch?.()
    stream.close()
    done()
  })
  await app.register(
    (child, _opts, done) => {
      registerRoutes(child, context)
      done()
    },
    { prefix: base },
  )
}

function registerRoutes(app: TaskAdminInstance, context: TaskAdminContext): void {
  markAdminSurface(app)
  if (!app.hasRequestDecorator('cookies')) void app.register(fastifyCookie)
  void app.register(fastifyFormbody)
  app.setValidatorCompiler(TypeBoxValidatorCompiler)
  app.decorateRequest('taskAdmin', null)
  app.setErrorHandler(handleTaskAdminError)
  app.setNotFoundHandler((request) => {
    throw new TaskAdminNotFoundError(`No task admin endpoint ${request.method} ${request.url}.`)
  })
  // Before the session guard: a misdirected or cross-site request (a login form posted by
  // another site included) neither signs in nor changes anything.
  app.addHook(
    'onRequest',
    originGuard({
      hosts: context.hosts,
      proxies: context.client.proxies,
      secure: (request) => context.client.secure(request),
    }),
  )
  app.addHook('onRequest', sessionGuard(context.sessions, mountPath(context, '/auth/login')))
  sessionRoutes(app, context)
  overviewRoutes(app, context)
  recordRoutes(app, context)
  dashboardRoutes(app, context)
}

/**
 * The task admin as a Fastify plugin: `app.register(taskAdmin, { taskManager, path, auth })`.
 */
export const taskAdmin = fp(taskAdminPlugin, { fastify: '5.x' })
