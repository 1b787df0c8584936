/**
 * Authentication of admin requests. A request is authenticated by a bearer token
 * (`Authorization: Bearer <token>`, used by `ctl` and scripts) or by the session cookie (the
 * dashboard). Cookie-authenticated writes must also carry `X-CSRF-Token`, because a browser
 * sends cookies on cross-site requests too; bearer tokens need no such check.
 *
 * Which endpoints are public is a property of the route itself (`config.public`), never a
 * prefix, suffix or substring rule on the URL, so no crafted path can reach a protected
 * handler without credentials. The same holds for read-only evaluation keys (`syk_…`): they
 * are accepted only by routes marked `config.evaluationKey` (the OFREP endpoints) and refused
 * with a 403 everywhere else, in every mode, so a key can never change anything.
 *
 * API tokens (`syt_…`, api-tokens.ts) are bearer tokens recognised by their prefix: they carry
 * their own role, and a service token also a service, which service-scope.ts enforces once the
 * body is parsed.
 */
import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify'
import { ValidationError } from '../../core/errors.js'
import type { ApiTokenRecord, EvaluationKeyRecord } from '../../stores/types.js'
import { CsrfError, EvaluationKeyNotAllowedError, UnauthenticatedError } from '../errors.js'
import { forbiddenFor, requiredRole, roleAllows, type Role } from '../../common/roles.js'
import { isEvaluationKey, type EvaluationKeys } from './evaluation-keys.js'
import { isApiToken, type ApiTokens } from './api-tokens.js'
import { csrfMatches, type Session, type SessionManager } from './sessions.js'

/** Name of the dashboard's session cookie. */
export const SESSION_COOKIE = 'switchyard_session'

/** Who made a request. */
export interface AdminPrincipal {
  /**
   * The logged-in user, `anonymous` in open mode, `key:<name>` for an evaluation key or
   * `token:<name>` for an API token.
   */
  username: string
  /** How the request was authenticated. */
  via: 'bearer' | 'cookie' | 'open' | 'evaluation_key' | 'api_token'
  /**
   * What the principal may do (`admin` in open mode). An evaluation key has `viewer` but is
   * accepted only by the OFREP endpoints.
   */
  role: Role
  /** The session (absent in open mode). */
  session: Session | null
  /** The raw token (absent in open mode); needed to derive the CSRF token. */
  token: string | null
  /** The evaluation key, for `via: 'evaluation_key'`. */
  evaluationKey?: EvaluationKeyRecord
  /**
   * The one service a service token may act on (`via: 'api_token'`); null or absent for every
   * other principal.
   */
  service?: string | null
  /** The API token's id, for `via: 'api_token'`. */
  tokenId?: string
  /** The API token, for `via: 'api_token'` (its open streams watch it). */
  apiToken?: ApiTokenRecord
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The authenticated caller of an admin endpoint (null on public endpoints). */
    switchyardAdmin: AdminPrincipal | null
  }
  interface FastifyContextConfig {
    /** Marks a route of the switchyard admin app (the main plugin does not register them). */
    switchyardAdmin?: boolean
    /** An admin endpoint reachable without credentials (only login). */
    public?: boolean
    /** An endpoint that also accepts a read-only evaluation key (the OFREP endpoints). */
    evaluationKey?: boolean
    /**
     * An unsafe-method endpoint that changes nothing and that pages on other origins may call
     * under its own CORS rule (the OFREP evaluations): the cross-origin write rule skips it.
     */
    crossOrigin?: boolean
    /**
     * The role the endpoint needs; default `viewer` for GET/HEAD/OPTIONS and `operator` for
     * any other method (common/roles.ts).
     */
    role?: Role
    /**
     * The service a request touches, or null when it touches none in particular (the global
     * scope, every service, credentials). A service token may call only routes that declare it,
     * and only for its own service (service-scope.ts); it runs after the body is parsed.
     */
    serviceScope?: (request: FastifyRequest) => string | null
  }
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS'])

/** Reads the bearer token of a request: undefined when absent; throws when malformed. */
export function bearerToken(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization
  if (header === undefined) return undefined
  const match = /^Bearer ([A-Za-z0-9._~+/=-]+)$/i.exec(header.trim())
  if (match === null) {
    throw new UnauthenticatedError('Malformed Authorization header: expected "Bearer <token>".')
  }
  return match[1]
}

/**
 * Builds the `onRequest` hook that authenticates every non-public admin request; with
 * `evaluationKeys`, routes marked `config.evaluationKey` also accept an evaluation key.
 *
 * A callback hook rather than an async one: an evaluation key held in this process (memory
 * and file stores) is checked without a promise, which matters on the OFREP endpoints, where
 * a key is checked on every evaluation; lookups that must wait (Redis, sessions) call `done`
 * when they settle.
 */
export function authenticationHook(
  sessions: SessionManager | null,
  evaluationKeys: EvaluationKeys | null = null,
  apiTokens: ApiTokens | null = null,
) {
  return function authenticate(
    request: FastifyRequest,
    _reply: FastifyReply,
    done: HookHandlerDoneFunction,
  ): void {
    // Read once: `routeOptions` builds a new object at every access.
    const config = request.routeOptions.config
    if (config.public === true) {
      done()
      return
    }
    // Open mode ignores a malformed header, as before; it only has to notice evaluation keys.
    const presented = sessions === null ? lenientBearer(request) : bearerToken(request)
    if (presented !== undefined && isEvaluationKey(presented)) {
      authenticateKey(request, presented, config.evaluationKey === true, evaluationKeys, done)
      return
    }
    if (presented !== undefined && apiTokens !== null && isApiToken(presented)) {
      authenticateApiToken(
        request,
        presented,
        requiredRole(request.method, config.role),
        apiTokens,
        done,
      )
      return
    }
    if (sessions === null) {
      // Open mode: whoever reaches the app is an admin (it warns at startup).
      request.switchyardAdmin = {
        username: 'anonymous',
        via: 'open',
        role: 'admin',
        session: null,
        token: null,
      }
      done()
      return
    }
    const bearer = presented
    const cookie = bearer === undefined ? request.cookies[SESSION_COOKIE] : undefined
    const token = bearer ?? cookie
    if (token === undefined || token === '') {
      throw new UnauthenticatedError(
        'Authentication required: log in with POST /api/auth/login (or `ctl login <username>`).',
      )
    }
    sessions.resolve(token).then((session) => {
      if (session === null) {
        done(new UnauthenticatedError('The token is invalid, expired or revoked: log in again.'))
        return
      }
      if (bearer === undefined && !SAFE_METHODS.has(request.method)) {
        const header = request.headers['x-csrf-token']
        if (!csrfMatches(token, typeof header === 'string' ? header : undefined)) {
          done(new CsrfError('Cookie-authenticated writes need the X-CSRF-Token header.'))
          return
        }
      }
      const needed = requiredRole(request.method, config.role)
      if (!roleAllows(session.role, needed)) {
        done(forbiddenFor(session.role, needed))
        return
      }
      request.switchyardAdmin = {
        username: session.username,
        via: bearer === undefined ? 'cookie' : 'bearer',
        role: session.role,
        session,
        token,
      }
      done()
    }, done)
  }
}

function lenientBearer(request: FastifyRequest): string | undefined {
  try {
    return bearerToken(request)
  } catch {
    return undefined
  }
}

/** Checks an evaluation key, at once when this process holds the keys, else when the store answers. */
function authenticateKey(
  request: FastifyRequest,
  key: string,
  allowed: boolean,
  evaluationKeys: EvaluationKeys | null,
  done: HookHandlerDoneFunction,
): void {
  if (!allowed || evaluationKeys === null) {
    throw new EvaluationKeyNotAllowedError(
      'Evaluation keys are read-only and valid only on the OFREP endpoints; log in for the admin API.',
    )
  }
  const settle = (record: EvaluationKeyRecord | null): void => {
    if (record === null) {
      done(new UnauthenticatedError('The evaluation key is unknown or revoked.'))
      return
    }
    request.switchyardAdmin = {
      username: `key:${record.name}`,
      via: 'evaluation_key',
      role: 'viewer',
      session: null,
      token: null,
      evaluationKey: record,
    }
    done()
  }
  const found = evaluationKeys.resolveNow(key)
  if (found !== undefined) settle(found)
  else evaluationKeys.resolve(key).then(settle, done)
}

/** Checks an API token, at once when its record is at hand, else when the store answers. */
function authenticateApiToken(
  request: FastifyRequest,
  token: string,
  needed: Role,
  apiTokens: ApiTokens,
  done: HookHandlerDoneFunction,
): void {
  const settle = (record: ApiTokenRecord | null): void => {
    if (record === null) {
      done(new UnauthenticatedError('The API token is unknown, expired or revoked.'))
      return
    }
    if (!roleAllows(record.role, needed)) {
      done(forbiddenFor(record.role, needed))
      return
    }
    request.switchyardAdmin = {
      username: `token:${record.name}`,
      via: 'api_token',
      role: record.role,
      session: null,
      token: null,
      service: record.service,
      tokenId: record.id,
      apiToken: record,
    }
    done()
  }
  const found = apiTokens.resolveNow(token)
  if (found !== undefined) settle(found)
  else apiTokens.resolve(token).then(settle, done)
}

const PLATFORM = /^[A-Za-z0-9._-]{1,32}$/

/**
 * The actor and platform of a write: the authenticated user (or `anonymous`) and the
 * `X-Ctl-Platform` header (`cli`, `dashboard`, `sdk`…), default `api`.
 */
export function actorOf(request: FastifyRequest): { actor: string; platform: string } {
  const header = request.headers['x-ctl-platform']
  let platform = 'api'
  if (header !== undefined) {
    if (typeof header !== 'string' || !PLATFORM.test(header)) {
      throw new ValidationError(
        'Invalid X-Ctl-Platform header: use letters, digits, ".", "_" or "-" (at most 32).',
        { details: [{ field: 'X-Ctl-Platform', message: 'invalid platform name' }] },
      )
    }
    platform = header.toLowerCase()
  }
  return { actor: request.switchyardAdmin?.username ?? 'anonymous', platform }
}
