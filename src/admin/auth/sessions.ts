/**
 * Admin sessions: opaque random tokens, stored only as their SHA-256 hash in the store's token
 * port. Because the record lives in the store (Redis for several instances), a logout on one
 * instance revokes the token on all of them, and a restart cannot bring a revoked token back.
 *
 * The CSRF token of a cookie session is derived from the session token (an HMAC-free hash with
 * a fixed label), so it needs no storage and is known only to whoever holds the session.
 */
import { createHash, hash, randomBytes, timingSafeEqual } from 'node:crypto'
import type { Clock } from '../../core/clock.js'
import { toIso } from '../../core/time.js'
import type { TokenStore } from '../../stores/types.js'
import type { Role } from '../../common/roles.js'

/** The default token lifetime, in seconds (24 h). */
export const DEFAULT_TOKEN_EXPIRY = 24 * 60 * 60

/** A session as the API returns it at login. */
export interface IssuedSession {
  token: string
  username: string
  role: Role
  expires_at: string
}

/** An authenticated session found from a token. */
export interface Session {
  username: string
  /** The role the user signed in with. */
  role: Role
  expires_at: string
  /** The hash under which the token is stored (for logout). */
  tokenHash: string
}

/**
 * Hex SHA-256 of a token: the only form in which tokens are stored. (`crypto.hash` is the
 * one-shot form: it runs on every authenticated request and costs half of a `createHash`.)
 */
export function hashToken(token: string): string {
  return hash('sha256', token, 'hex')
}

/** The CSRF token that belongs to a session token. */
export function csrfTokenFor(token: string): string {
  return createHash('sha256').update(`switchyard-csrf:${token}`, 'utf8').digest('base64url')
}

/** True when `presented` is the CSRF token of `token` (constant time). */
export function csrfMatches(token: string, presented: string | undefined): boolean {
  if (presented === undefined) return false
  const expected = Buffer.from(csrfTokenFor(token))
  const given = Buffer.from(presented)
  return given.length === expected.length && timingSafeEqual(given, expected)
}

/** Issues, resolves and revokes session tokens. */
export class SessionManager {
  constructor(
    private readonly store: TokenStore,
    private readonly clock: Clock,
    private readonly expirySeconds: number,
  ) {}

  /** Creates a session for `username` with `role` and stores its token hash until it expires. */
  async issue(username: string, role: Role): Promise<IssuedSession> {
    const token = randomBytes(32).toString('base64url')
    const expiresAt = toIso(this.clock.now() + this.expirySeconds * 1000)
    await this.store.put(hashToken(token), { username, role, expires_at: expiresAt })
    return { token, username, role, expires_at: expiresAt }
  }

  /** The session of a token, or null when it is unknown, revoked or expired. */
  async resolve(token: string): Promise<Session | null> {
    if (token === '' || token.length > 512) return null
    const tokenHash = hashToken(token)
    const record = await this.store.get(tokenHash)
    if (record === null || Date.parse(record.expires_at) <= this.clock.now()) return null
    // Sessions stored before roles existed were all admins' (the only principal there was).
    const role = record.role ?? 'admin'
    return { username: record.username, role, expires_at: record.expires_at, tokenHash }
  }

  /** Whether the session stored under `tokenHash` still holds (not revoked, not expired). */
  async isValid(tokenHash: string): Promise<boolean> {
    const record = await this.store.get(tokenHash)
    return record !== null && Date.parse(record.expires_at) > this.clock.now()
  }

  /** The current time of the session clock (epoch ms). */
  now(): number {
    return this.clock.now()
  }

  /** Revokes a session everywhere; resolves whether it existed. */
  revoke(session: Session): Promise<boolean> {
    return this.store.revoke(session.tokenHash)
  }
}
