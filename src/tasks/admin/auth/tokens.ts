/**
 * Session tokens of the task admin: `v1.<payload>.<signature>`, the payload a base64url JSON
 * `{ u: username, r: role, e: expiry (epoch ms), i: token id }` and the signature its HMAC-SHA256 with
 * the secret key. Nothing is stored at login: any instance with the same `secretKey` accepts
 * the token until it expires. Logout stores the token id as revoked (in the task store, so it
 * holds on every instance) until the token's own expiry.
 *
 * The CSRF token of a session is the HMAC of its id with the same key, so it needs no storage
 * either and only the holder of the session can know it. The login form is protected the same
 * way before there is a session: its token is the HMAC of a random nonce kept in a cookie.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto'
import { isRole, type Role } from '../../../common/roles.js'

/** A verified session. */
export interface TaskAdminSession {
  username: string
  /** The role the user signed in with. */
  role: Role
  /** Epoch ms. */
  expiresAt: number
  /** Revocation key. */
  tokenId: string
  /**
   * The CSRF token of a session of the login shared with the admin app (it derives it from the
   * token); absent for this mount's own sessions, whose CSRF token is derived here.
   */
  csrfToken?: string
}

/** Signs and verifies session tokens with one key. */
export class SessionTokens {
  readonly #key: Buffer

  constructor(secretKey: string | Buffer) {
    this.#key = Buffer.from(secretKey)
  }

  /** A new token for `username` with `role`, valid until `expiresAt` (epoch ms). */
  issue(
    username: string,
    role: Role,
    expiresAt: number,
  ): { token: string; session: TaskAdminSession } {
    const tokenId = randomBytes(16).toString('base64url')
    const payload = Buffer.from(
      JSON.stringify({ u: username, r: role, e: expiresAt, i: tokenId }),
      'utf8',
    ).toString('base64url')
    const token = `v1.${payload}.${this.#sign(`v1.${payload}`)}`
    return { token, session: { username, role, expiresAt, tokenId } }
  }

  /**
   * The session of a well-formed, correctly signed token that has not expired at `now`, else
   * null. (Revocation is checked by the caller, against the store.)
   */
  verify(token: string, now: number): TaskAdminSession | null {
    if (token.length > 1024) return null
    const [version, payload, signature, extra] = token.split('.')
    if (
      version !== 'v1' ||
      payload === undefined ||
      signature === undefined ||
      extra !== undefined
    ) {
      return null
    }
    const expected = Buffer.from(this.#sign(`v1.${payload}`))
    const given = Buffer.from(signature)
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null
    let parsed: unknown
    try {
      parsed = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'))
    } catch {
      return null
    }
    const { u, r, e, i } = (parsed ?? {}) as { u?: unknown; r?: unknown; e?: unknown; i?: unknown }
    if (typeof u !== 'string' || typeof e !== 'number' || typeof i !== 'string') return null
    // A token issued before roles existed has no `r`: every session was an admin's then.
    const role = r === undefined ? 'admin' : r
    if (!isRole(role)) return null
    if (e <= now) return null
    return { username: u, role, expiresAt: e, tokenId: i }
  }

  /** The CSRF token of a session. */
  csrfToken(session: TaskAdminSession): string {
    return this.#sign(`csrf.${session.tokenId}`)
  }

  /** Whether `presented` is the session's CSRF token (constant time). */
  csrfMatches(session: TaskAdminSession, presented: string | undefined): boolean {
    if (presented === undefined) return false
    const expected = Buffer.from(this.csrfToken(session))
    const given = Buffer.from(presented)
    return given.length === expected.length && timingSafeEqual(given, expected)
  }

  /**
   * The login form's CSRF token for a pre-login `nonce` (kept in a cookie): only a page this
   * admin served to that browser holds it, so another site cannot post a login for it.
   */
  loginCsrfToken(nonce: string): string {
    return this.#sign(`login.${nonce}`)
  }

  /** Whether `presented` is the login form's CSRF token for `nonce` (constant time). */
  loginCsrfMatches(nonce: string | undefined, presented: unknown): boolean {
    if (nonce === undefined || !LOGIN_NONCE.test(nonce) || typeof presented !== 'string')
      return false
    const expected = Buffer.from(this.loginCsrfToken(nonce))
    const given = Buffer.from(presented)
    return given.length === expected.length && timingSafeEqual(given, expected)
  }

  #sign(text: string): string {
    return createHmac('sha256', this.#key).update(text, 'utf8').digest('base64url')
  }
}

/** The shape of a pre-login nonce (see {@link newLoginNonce}). */
export const LOGIN_NONCE = /^[A-Za-z0-9_-]{22,64}$/

/** A fresh pre-login nonce, for the login form's cookie. */
export function newLoginNonce(): string {
  return randomBytes(16).toString('base64url')
}

/** A random secret for one process (sessions then end at every restart). */
export function randomSecretKey(): string {
  return randomBytes(32).toString('base64url')
}
