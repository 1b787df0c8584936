/**
 * `POST /api/auth/login`, `POST /api/auth/logout`, `GET /api/auth/me`.
 */
import { clientAddress, isSecureRequest } from '../auth/client.js'
import { endSession } from '../auth/end-session.js'
import { SESSION_COOKIE } from '../auth/guard.js'
import { csrfTokenFor } from '../auth/sessions.js'
import { callerScope } from '../auth/service-scope.js'
import {
  ADMIN_ROUTE,
  PUBLIC_ROUTE,
  sessionCookiePath,
  VIEWER_ROUTE,
  type AdminContext,
  type AdminInstance,
} from '../context.js'
import { AuthNotConfiguredError, LoginThrottledError, UnauthenticatedError } from '../errors.js'
import type { Role } from '../../common/roles.js'
import { ErrorBody, LoginBody, LoginResult, LogoutResult, MeResult } from '../schemas.js'

/** Registers the auth endpoints. */
export function authRoutes(app: AdminInstance, context: AdminContext): void {
  const { credentials, sessions, throttle } = context

  app.post(
    '/api/auth/login',
    {
      config: PUBLIC_ROUTE,
      schema: {
        summary: 'Log in; returns a bearer token and sets the dashboard session cookie',
        tags: ['auth'],
        body: LoginBody,
        response: { 200: LoginResult, 400: ErrorBody, 401: ErrorBody, 429: ErrorBody },
      },
    },
    async (request, reply) => {
      if (credentials === null || sessions === null) {
        throw new AuthNotConfiguredError(
          'No credentials are configured on this admin app: it is open and needs no login.',
        )
      }
      const { username, password } = request.body
      const address = clientAddress(request, context.proxies)
      const attempt = throttle.begin(username, address)
      if (!attempt.allowed) {
        void reply.header('retry-after', String(attempt.retryAfter))
        throw new LoginThrottledError(
          `Too many failed logins: try again in ${attempt.retryAfter} s.`,
          { retry_after: attempt.retryAfter },
        )
      }
      // The attempt is already counted as a failure (so concurrent guesses against a slow
      // authenticate are all counted); a success takes it back.
      let role: Role | null = null
      try {
        role = await credentials.verify(username, password)
      } finally {
        if (role !== null) attempt.succeed()
        else attempt.fail()
      }
      if (role === null) {
        request.log.warn({ username, address }, 'switchyard admin: failed login')
        throw new UnauthenticatedError('Invalid username or password.')
      }
      const session = await sessions.issue(username, role)
      void reply.setCookie(SESSION_COOKIE, session.token, {
        httpOnly: true,
        sameSite: 'strict',
        secure: isSecureRequest(request, context.proxies),
        path: sessionCookiePath(context),
        expires: new Date(session.expires_at),
      })
      return { ...session, csrf_token: csrfTokenFor(session.token) }
    },
  )

  app.post(
    '/api/auth/logout',
    {
      config: VIEWER_ROUTE,
      schema: {
        summary: 'Revoke the current token on the server (every instance)',
        tags: ['auth'],
        response: { 200: LogoutResult, 401: ErrorBody },
      },
    },
    async (request, reply) => {
      const principal = request.switchyardAdmin
      void reply.clearCookie(SESSION_COOKIE, { path: sessionCookiePath(context) })
      if (sessions === null || principal?.session == null) return { revoked: false }
      return { revoked: await endSession(context, principal.session) }
    },
  )

  app.get(
    '/api/auth/me',
    {
      // Concerns only the caller: a service token may ask who it is.
      config: { ...ADMIN_ROUTE, serviceScope: callerScope },
      schema: {
        summary: 'The authenticated user',
        tags: ['auth'],
        response: { 200: MeResult, 401: ErrorBody },
      },
    },
    (request) => {
      const principal = request.switchyardAdmin
      return {
        username: principal?.username ?? 'anonymous',
        role: principal?.role ?? 'admin',
        authenticated: principal?.session != null,
        expires_at: principal?.session?.expires_at ?? null,
        auth_required: sessions !== null,
        ...(principal?.via === 'cookie' && principal.token !== null
          ? { csrf_token: csrfTokenFor(principal.token) }
          : {}),
      }
    },
  )
}
