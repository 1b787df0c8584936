/**
 * The browser side of the task admin: the login view (a form: 303 to the dashboard with the
 * session cookie on success, 401 with the form on failure, 429 with it while throttled), the
 * logout (GET for links, POST for the dashboard's button) and the live stream. The dashboard's
 * pages live in `../dashboard/`.
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import { reserveLoginAttempt } from '../auth/login-throttle.js'
import { SESSION_COOKIE } from '../auth/sessions.js'
import { audit, mountPath, type TaskAdminContext, type TaskAdminInstance } from '../context.js'
import { param, redirect, safeNextPath, sendHtml } from '../../../ui/index.js'
import { LoginView } from '../dashboard/login.js'

/** Registers the login view, logout and stream. */
export function sessionRoutes(app: TaskAdminInstance, context: TaskAdminContext): void {
  const { credentials, sessions } = context
  const loginPath = mountPath(context, '/auth/login')
  const cookiePath = context.base === '' ? '/' : context.base

  if (credentials !== null && sessions !== null) {
    // Where a login goes afterwards: a page of this admin named by `next`, else the dashboard.
    const nextPage = (next: unknown) =>
      safeNextPath(next, {
        base: context.base,
        home: mountPath(context, '/dashboard'),
        excluded: [mountPath(context, '/auth')],
      })
    const form = (
      reply: FastifyReply,
      status: number,
      next: string,
      error?: string,
      username?: string,
    ) =>
      sendHtml(
        reply,
        <LoginView
          title={context.title}
          home={mountPath(context, '/dashboard')}
          assetsUrl={mountPath(context, '/dashboard/assets/')}
          action={loginPath}
          next={next}
          error={error}
          username={username}
        />,
        status,
      )

    app.get('/auth/login', { config: { taskAdminPublic: true } }, (request, reply) =>
      form(reply, 200, nextPage(param(request, 'next'))),
    )

    app.post('/auth/login', { config: { taskAdminPublic: true } }, async (request, reply) => {
      const body = (request.body ?? {}) as Record<string, unknown>
      const username = typeof body.username === 'string' ? body.username.slice(0, 255) : ''
      const password = typeof body.password === 'string' ? body.password.slice(0, 1024) : ''
      const next = nextPage(body.next)
      if (username === '' || password === '') {
        return form(reply, 401, next, 'Enter a username and a password.', username)
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
          next,
          `Too many failed logins: try again in ${String(attempt.retryAfter)} s.`,
          username,
        )
      }
      if (!(await credentials.verify(username, password))) {
        attempt.failed()
        request.log.warn({ username }, 'switchyard task admin: failed login')
        return form(reply, 401, next, 'Invalid username or password.', username)
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
      return reply.redirect(next, 303)
    })

    const logout = async (request: FastifyRequest, reply: FastifyReply) => {
      const token = request.cookies[SESSION_COOKIE]
      const session = token === undefined ? null : await sessions.resolve(token)
      if (session !== null) await sessions.revoke(session)
      void reply.clearCookie(SESSION_COOKIE, { path: cookiePath })
      return redirect(request, reply, loginPath)
    }
    app.get('/auth/logout', { config: { taskAdminPublic: true } }, logout)
    app.post('/auth/logout', { config: { taskAdminPublic: true } }, logout)
  }

  app.get(
    '/dashboard/stream',
    { config: { taskAdminPublic: context.publicStream } },
    (request: FastifyRequest, reply: FastifyReply) => {
      context.stream.connect(request, reply, request.taskAdmin?.session ?? null)
    },
  )
}
