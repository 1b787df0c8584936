/**
 * The browser side of the task admin: the login view (a form: 303 to the dashboard with the
 * session cookie on success, 401 with the form on failure, 429 with it while throttled, 403
 * without the form's CSRF token), the logout (POST only, with the session's CSRF token: a link
 * or an image on another site cannot end a session), `GET /auth/me` (the caller and its role)
 * and the live stream. The dashboard's pages live in `../dashboard/`.
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import { reserveLoginAttempt } from '../auth/login-throttle.js'
import { LOGIN_NONCE, newLoginNonce } from '../auth/tokens.js'
import { TaskAdminCsrfError } from '../errors.js'
import { mountPath, type TaskAdminContext, type TaskAdminInstance } from '../context.js'
import { Layout, param, redirect, safeNextPath, sendHtml } from '../../../ui/index.js'
import { LoginView } from '../dashboard/login.js'

/**
 * The cookie holding the login form's nonce: the form's CSRF token is bound to it, so a login
 * posted from another site (which cannot read the form) is refused.
 */
export const LOGIN_COOKIE = 'switchyard_tasks_login'

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
    // The browser's pre-login nonce, set on first sight; the form carries its CSRF token.
    const loginNonce = (request: FastifyRequest, reply: FastifyReply): string => {
      const present = request.cookies[LOGIN_COOKIE]
      if (present !== undefined && LOGIN_NONCE.test(present)) return present
      const nonce = newLoginNonce()
      void reply.setCookie(LOGIN_COOKIE, nonce, {
        httpOnly: true,
        sameSite: 'lax',
        secure: context.client.secure(request),
        path: cookiePath,
      })
      return nonce
    }
    const form = (
      request: FastifyRequest,
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
          csrfToken={sessions.tokens.loginCsrfToken(loginNonce(request, reply))}
          error={error}
          username={username}
        />,
        status,
      )

    app.get('/auth/login', { config: { taskAdminPublic: true } }, (request, reply) =>
      form(request, reply, 200, nextPage(param(request, 'next'))),
    )

    app.post('/auth/login', { config: { taskAdminPublic: true } }, async (request, reply) => {
      const body = (request.body ?? {}) as Record<string, unknown>
      const username = typeof body.username === 'string' ? body.username.slice(0, 255) : ''
      const password = typeof body.password === 'string' ? body.password.slice(0, 1024) : ''
      const next = nextPage(body.next)
      // Checked before anything else: a forged login neither logs in nor counts as an attempt.
      if (!sessions.tokens.loginCsrfMatches(request.cookies[LOGIN_COOKIE], body.csrf_token)) {
        return form(
          request,
          reply,
          403,
          next,
          'The login form expired or was not sent from this page (missing or wrong CSRF token): log in again.',
          username,
        )
      }
      if (username === '' || password === '') {
        return form(request, reply, 401, next, 'Enter a username and a password.', username)
      }
      const attempt = reserveLoginAttempt(
        context.throttle,
        username,
        context.client.address(request),
      )
      if (attempt.retryAfter > 0) {
        void reply.header('retry-after', String(attempt.retryAfter))
        return form(
          request,
          reply,
          429,
          next,
          `Too many failed logins: try again in ${String(attempt.retryAfter)} s.`,
          username,
        )
      }
      const role = await credentials.verify(username, password)
      if (role === null) {
        attempt.failed()
        request.log.warn({ username }, 'switchyard task admin: failed login')
        return form(request, reply, 401, next, 'Invalid username or password.', username)
      }
      attempt.succeeded()
      const { token, session } = await sessions.issue(username, role)
      request.taskAdmin = { username, role, session, via: 'cookie' }
      // A login changes nothing, so it is not audited (the audit lists changes only, like the
      // route-control audit); failed logins feed the throttle and the log.
      const cookie = sessions.cookie()
      void reply.setCookie(cookie.name, token, {
        httpOnly: true,
        sameSite: cookie.sameSite,
        secure: context.client.secure(request),
        path: cookie.path,
        // Rounded up: a millisecond between issuing and answering must not cut a second off.
        maxAge: Math.max(0, Math.ceil((session.expiresAt - context.now()) / 1000)),
      })
      void reply.clearCookie(LOGIN_COOKIE, { path: cookiePath })
      return reply.redirect(next, 303)
    })

    const logoutPath = mountPath(context, '/auth/logout')
    // A GET never ends a session (a link or an image elsewhere could): it offers the button.
    app.get('/auth/logout', { config: { taskAdminPublic: true } }, async (request, reply) => {
      const token = request.cookies[sessions.cookie().name]
      const session = token === undefined ? null : await sessions.resolve(token)
      void reply.header('allow', 'POST')
      return sendHtml(
        reply,
        <Layout
          title="Log out"
          product={context.title}
          home={mountPath(context, '/dashboard')}
          assetsUrl={mountPath(context, '/dashboard/assets/')}
          nav={[]}
        >
          <div class="login panel">
            <h1>Log out</h1>
            <form method="post" action={logoutPath}>
              {session === null ? (
                ''
              ) : (
                <input type="hidden" name="csrf_token" value={sessions.csrfToken(session)} />
              )}
              <button class="btn" type="submit">
                Log out
              </button>
            </form>
          </div>
        </Layout>,
        405,
      )
    })
    app.post('/auth/logout', { config: { taskAdminPublic: true } }, async (request, reply) => {
      const cookie = sessions.cookie()
      const token = request.cookies[cookie.name]
      const session = token === undefined ? null : await sessions.resolve(token)
      if (session !== null) {
        // The session's CSRF token, as for every cookie write: the dashboard's button sends it
        // as X-CSRF-Token (htmx), the plain form as the field csrf_token.
        const body = (request.body ?? {}) as Record<string, unknown>
        const header = request.headers['x-csrf-token']
        const presented = typeof header === 'string' ? header : body.csrf_token
        if (!sessions.csrfMatches(session, typeof presented === 'string' ? presented : undefined)) {
          throw new TaskAdminCsrfError(
            "Logging out needs the session's CSRF token (X-CSRF-Token header or csrf_token field); the dashboard's Log out button sends it.",
          )
        }
        await sessions.revoke(session)
        // This instance's streams of the session end now (others at their next check).
        context.stream.endSession(session.tokenId)
      }
      void reply.clearCookie(cookie.name, { path: cookie.path })
      return redirect(request, reply, loginPath)
    })
  }

  // Who the caller is and what it may do (scripts and the dashboard ask before offering actions).
  app.get('/auth/me', (request) => {
    const principal = request.taskAdmin
    const session = principal?.session ?? null
    return {
      username: principal?.username ?? 'anonymous',
      role: principal?.role ?? 'admin',
      authenticated: session !== null,
      expires_at: session === null ? null : new Date(session.expiresAt).toISOString(),
    }
  })

  app.get(
    '/dashboard/stream',
    { config: { taskAdminPublic: context.publicStream } },
    (request: FastifyRequest, reply: FastifyReply) => {
      context.stream.connect(request, reply, request.taskAdmin?.session ?? null)
    },
  )
}
