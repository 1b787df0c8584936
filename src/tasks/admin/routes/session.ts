/**
 * The browser side of the task admin: the login view (a form: 303 to the dashboard with the
 * session cookie on success, 401 with the form on failure, 429 with it while throttled), the
 * logout, the dashboard page and its live stream.
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import { reserveLoginAttempt } from '../auth/login-throttle.js'
import { SESSION_COOKIE } from '../auth/sessions.js'
import { audit, mountPath, type TaskAdminContext, type TaskAdminInstance } from '../context.js'
import { dashboardView, loginView } from '../views.js'

const HTML = 'text/html; charset=utf-8'

/** Registers the login view, logout, dashboard and stream. */
export function sessionRoutes(app: TaskAdminInstance, context: TaskAdminContext): void {
  const { credentials, sessions } = context
  const loginPath = mountPath(context, '/auth/login')
  const cookiePath = context.base === '' ? '/' : context.base

  if (credentials !== null && sessions !== null) {
    const form = (reply: FastifyReply, status: number, error?: string, username?: string) =>
      reply
        .code(status)
        .type(HTML)
        .send(loginView({ title: context.title, action: loginPath, error, username }))

    app.get('/auth/login', { config: { taskAdminPublic: true } }, (_request, reply) =>
      form(reply, 200),
    )

    app.post('/auth/login', { config: { taskAdminPublic: true } }, async (request, reply) => {
      const body = (request.body ?? {}) as Record<string, unknown>
      const username = typeof body.username === 'string' ? body.username.slice(0, 255) : ''
      const password = typeof body.password === 'string' ? body.password.slice(0, 1024) : ''
      if (username === '' || password === '') {
        return form(reply, 401, 'Enter a username and a password.', username)
      }
      const attempt = reserveLoginAttempt(
        context.throttle,
        username,
        context.client.address(request),
      )
      if (attempt.retryAfter > 0) {
        void reply.header('retry-after', String(attempt.retryAfter))
        return form(
          reply,
          429,
          `Too many failed logins: try again in ${String(attempt.retryAfter)} s.`,
          username,
        )
      }
      if (!(await credentials.verify(username, password))) {
        attempt.failed()
        request.log.warn({ username }, 'switchyard task admin: failed login')
        return form(reply, 401, 'Invalid username or password.', username)
      }
      attempt.succeeded()
      const { token, session } = sessions.issue(username)
      request.taskAdmin = { username, session, via: 'cookie' }
      await audit(context, request, 'login', null, {})
      void reply.setCookie(SESSION_COOKIE, token, {
        httpOnly: true,
        sameSite: 'lax',
        secure: context.client.secure(request),
        path: cookiePath,
        maxAge: context.tokenExpiry,
      })
      return reply.redirect(mountPath(context, '/dashboard'), 303)
    })

    app.get('/auth/logout', { config: { taskAdminPublic: true } }, async (request, reply) => {
      const token = request.cookies[SESSION_COOKIE]
      const session = token === undefined ? null : await sessions.resolve(token)
      if (session !== null) await sessions.revoke(session)
      void reply.clearCookie(SESSION_COOKIE, { path: cookiePath })
      return reply.redirect(loginPath, 303)
    })
  }

  app.get('/dashboard', { config: { taskAdminPage: true } }, (request, reply) => {
    const session = request.taskAdmin?.session ?? null
    return reply.type(HTML).send(
      dashboardView({
        title: context.title,
        base: context.base,
        csrfToken:
          session === null || sessions === null ? null : sessions.tokens.csrfToken(session),
        logoutPath: sessions === null ? null : mountPath(context, '/auth/logout'),
        pollInterval: context.pollInterval,
        username: request.taskAdmin?.username ?? 'anonymous',
      }),
    )
  })

  app.get(
    '/dashboard/stream',
    { config: { taskAdminPublic: context.publicStream } },
    (request: FastifyRequest, reply: FastifyReply) => {
      context.stream.connect(request, reply, request.taskAdmin?.session ?? null)
    },
  )
}
