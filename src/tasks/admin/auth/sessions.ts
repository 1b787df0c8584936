/**
 * Sessions of the task admin: signed tokens (tokens.ts) plus revocation at logout, kept in the
 * task store (every instance sees it) or, for a manager without a durable store, in memory.
 * The guard hook authenticates every request that is not a public route: a bearer token
 * (`Authorization: Bearer <token>`, for scripts) or the session cookie (the browser), and asks
 * cookie-authenticated writes for the CSRF token. Then it checks the session's role against the
 * route's: `config.role` when declared, else `viewer` to read and `operator` to write
 * (common/roles.ts). Without `auth` whoever reaches the mount is an admin.
 *
 * Which routes are public is a property of the route itself (`config.taskAdminPublic`), never a
 * rule on the URL, so no crafted path reaches a protected handler without a session.
 */
import { timingSafeEqual } from 'node:crypto'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type {
  SharedLoginProvider,
  SharedLoginSlot,
  SharedSession,
} from '../../../common/shared-login.js'
import { forbiddenFor, requiredRole, roleAllows, type Role } from '../../../common/roles.js'
import type { SessionRevocationStore } from '../../stores/ports.js'
import { TaskAdminCsrfError, TaskAdminUnauthenticatedError } from '../errors.js'
import type { SessionTokens, TaskAdminSession } from './tokens.js'

/** Name of the session cookie. */
export const SESSION_COOKIE = 'switchyard_tasks_session'

/** Who made a request to the task admin. */
export interface TaskAdminPrincipal {
  /** The logged-in user, or `anonymous` without auth. */
  username: string
  /** What the caller may do; `admin` without auth. */
  role: Role
  /** Null without auth. */
  session: TaskAdminSession | null
  via: 'cookie' | 'bearer' | 'open'
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The caller of a task-admin endpoint (null on its public routes). */
    taskAdmin: TaskAdminPrincipal | null
  }
  interface FastifyContextConfig {
    /** A task-admin route reachable without a session (the login view). */
    taskAdminPublic?: boolean
    /** A task-admin page: without a session it redirects to the login view instead of 401. */
    taskAdminPage?: boolean
    /**
     * The role the endpoint needs; default `viewer` for GET/HEAD/OPTIONS and `operator` for
     * any other method (common/roles.ts). The same declaration as the admin app's.
     */
    role?: Role
  }
}

/** How a mount's session cookie is set. */
export interface SessionCookie {
  name: string
  path: string
  sameSite: 'lax' | 'strict'
}

/**
 * Issues, resolves and revokes sessions: this mount's own signed tokens, or — when the admin
 * app is mounted on the same app with the same `auth` value — the login shared with it
 * (common/shared-login.ts): its cookie, tokens, CSRF tokens and logout.
 */
export class TaskAdminSessions {
  constructor(
    readonly tokens: SessionTokens,
    private readonly revocations: SessionRevocationStore,
    private readonly now: () => number,
    private readonly expirySeconds: number,
    private readonly base: string,
    private readonly shared: SharedLoginSlot | null = null,
  ) {}

  /** The shared login's provider, when the admin app shares its login with this mount. */
  #provider(): SharedLoginProvider | null {
    return this.shared?.provider() ?? null
  }

  /** The session cookie: the shared login's (one cookie for both mounts), else this mount's. */
  cookie(): SessionCookie {
    const provider = this.#provider()
    if (provider !== null && this.shared !== null) {
      return { name: provider.cookieName, path: this.shared.cookiePath(), sameSite: 'strict' }
    }
    return { name: SESSION_COOKIE, path: this.base === '' ? '/' : this.base, sameSite: 'lax' }
  }

  /** A new session for `username` with `role`. */
  async issue(username: string, role: Role): Promise<{ token: string; session: TaskAdminSession }> {
    const provider = this.#provider()
    if (provider !== null) {
      const issued = await provider.issue(username, role)
      return { token: issued.token, session: fromShared(issued.session) }
    }
    return this.tokens.issue(username, role, this.now() + this.expirySeconds * 1000)
  }

  /**
   * The session of a token: well-formed, signed with our key, not expired, not revoked (or, with
   * the shared login, a live session of the admin app).
   */
  async resolve(token: string): Promise<TaskAdminSession | null> {
    const provider = this.#provider()
    if (provider !== null) {
      const session = await provider.resolve(token)
      return session === null ? null : fromShared(session)
    }
    const now = this.now()
    const session = this.tokens.verify(token, now)
    if (session === null) return null
    return (await this.revocations.isRevoked(session.tokenId, now)) ? null : session
  }

  /** Whether a session still holds (open streams re-check it). */
  async isValid(session: TaskAdminSession): Promise<boolean> {
    const provider = this.#provider()
    if (provider !== null) return provider.isValid(session.tokenId)
    return !(await this.revocations.isRevoked(session.tokenId, this.now()))
  }

  /** Revokes a session on every instance until it would have expired anyway. */
  async revoke(session: TaskAdminSession): Promise<void> {
    const provider = this.#provider()
    if (provider !== null) {
      await provider.revoke(toShared(session, this.csrfToken(session)))
      return
    }
    await this.revocations.revoke(session.tokenId, session.expiresAt)
  }

  /** The CSRF token of a session. */
  csrfToken(session: TaskAdminSession): string {
    return session.csrfToken ?? this.tokens.csrfToken(session)
  }

  /** Whether `presented` is the session's CSRF token (constant time). */
  csrfMatches(session: TaskAdminSession, presented: string | undefined): boolean {
    if (presented === undefined) return false
    const expected = Buffer.from(this.csrfToken(session))
    const given = Buffer.from(presented)
    return given.length === expected.length && timingSafeEqual(given, expected)
  }
}

function fromShared(session: SharedSession): TaskAdminSession {
  return {
    username: session.username,
    role: session.role,
    expiresAt: session.expiresAt,
    tokenId: session.id,
    csrfToken: session.csrfToken,
  }
}

function toShared(session: TaskAdminSession, csrfToken: string): SharedSession {
  return {
    username: session.username,
    role: session.role,
    expiresAt: session.expiresAt,
    id: session.tokenId,
    csrfToken,
  }
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS'])

/**
 * Sends a browser without a session to the login, with the page to come back to as `next`
 * (the login view checks it is a page of this admin before using it). A request htmx made
 * from inside a page is answered with `HX-Redirect` (htmx would follow a redirect inside the
 * page), and its `next` is the page the browser shows (`HX-Current-URL`), not the fragment.
 */
export function redirectToLogin(
  request: FastifyRequest,
  reply: FastifyReply,
  loginPath: string,
): FastifyReply {
  if (request.headers['hx-request'] === 'true') {
    const next = pageOf(request.headers['hx-current-url'])
    const url = next === null ? loginPath : `${loginPath}?next=${encodeURIComponent(next)}`
    return reply.status(200).header('hx-redirect', url).send('')
  }
  return reply.redirect(`${loginPath}?next=${encodeURIComponent(request.url)}`, 303)
}

/** The path and query of the page URL htmx reports, or null when it is not a URL. */
function pageOf(header: string | string[] | undefined): string | null {
  if (typeof header !== 'string' || header.length > 2048) return null
  try {
    const url = new URL(header)
    return `${url.pathname}${url.search}`
  } catch {
    return null
  }
}

/** The `onRequest` hook that authenticates every non-public task-admin request. */
export function sessionGuard(sessions: TaskAdminSessions | null, loginPath: string) {
  return async function guard(request: FastifyRequest, reply: FastifyReply): Promise<unknown> {
    const config = request.routeOptions.config
    if (config.taskAdminPublic === true) return undefined
    if (sessions === null) {
      // Open mode: whoever reaches the mount is an admin (it warns at startup).
      request.taskAdmin = { username: 'anonymous', role: 'admin', session: null, via: 'open' }
      return undefined
    }
    const header = request.headers.authorization
    const bearer = /^Bearer ([A-Za-z0-9._~+/=-]{1,1024})$/i.exec(header?.trim() ?? '')?.[1]
    const cookie = bearer === undefined ? request.cookies[sessions.cookie().name] : undefined
    const token = bearer ?? cookie
    const session = token === undefined || token === '' ? null : await sessions.resolve(token)
    if (session === null) {
      if (config.taskAdminPage === true) {
        return redirectToLogin(request, reply, loginPath)
      }
      throw new TaskAdminUnauthenticatedError(
        header !== undefined && bearer === undefined
          ? 'Malformed Authorization header: expected "Bearer <token>".'
          : `Authentication required: log in at ${loginPath}.`,
      )
    }
    if (bearer === undefined && !SAFE_METHODS.has(request.method)) {
      const presented = request.headers['x-csrf-token']
      if (!sessions.csrfMatches(session, typeof presented === 'string' ? presented : undefined)) {
        throw new TaskAdminCsrfError(
          'Cookie-authenticated writes need the X-CSRF-Token header (the dashboard page embeds it).',
        )
      }
    }
    const needed = requiredRole(request.method, config.role)
    if (!roleAllows(session.role, needed)) throw forbiddenFor(session.role, needed)
    request.taskAdmin = {
      username: session.username,
      role: session.role,
      session,
      via: bearer === undefined ? 'cookie' : 'bearer',
    }
    return undefined
  }
}

/** The actor of an audit entry: the logged-in user, or `anonymous`. */
export function actorOf(request: FastifyRequest): string {
  return request.taskAdmin?.username ?? 'anonymous'
}
