/**
 * One login for both admin mounts. When route control's admin app and the task admin are
 * mounted on one Fastify app with the same `auth` value — the same object, array or function,
 * compared by identity, so two equal-looking literals stay two logins — they share one session:
 * one cookie, one token (also as a bearer token), one CSRF token, one logout.
 *
 * The admin app provides the sessions (store-backed, tokens kept only as hashes, so they hold
 * across instances through the engine's store); the task admin finds them here and uses them
 * instead of its own signed tokens. Either may be registered first: each mount joins the entry
 * of its (server, auth) at registration and looks the provider up when a request comes, after
 * both have registered.
 *
 * The cookie's path covers every mount of the entry: their longest common path prefix (`/` at
 * worst), so the browser sends it to both.
 *
 * Entries are keyed by the app's HTTP server and the auth value in `WeakMap`s: nothing here
 * outlives the app or its options, and nothing is keyed by request input.
 */
import type { FastifyInstance } from 'fastify'
import type { Role } from './roles.js'

/** A session of the shared login. */
export interface SharedSession {
  username: string
  role: Role
  /** Epoch ms. */
  expiresAt: number
  /** The session's id (the admin app stores the token's hash under it). */
  id: string
  /** The CSRF token cookie-authenticated writes must send. */
  csrfToken: string
}

/** What the mount that owns the sessions provides. */
export interface SharedLoginProvider {
  /** The name of the one session cookie. */
  readonly cookieName: string
  /** Issues a session for a user who logged in on either mount. */
  issue(username: string, role: Role): Promise<{ token: string; session: SharedSession }>
  /** The session of a token (cookie or bearer), or null when unknown, expired or revoked. */
  resolve(token: string): Promise<SharedSession | null>
  /** Whether the session `id` still holds (for open streams' periodic checks). */
  isValid(id: string): Promise<boolean>
  /** Revokes a session everywhere; the entry's revocation listeners are told. */
  revoke(session: SharedSession): Promise<void>
}

interface Entry {
  readonly mounts: Set<string>
  provider: SharedLoginProvider | null
  readonly revokeListeners: Set<(id: string) => void>
}

/** One mount's place in the shared login of its (app, auth). */
export class SharedLoginSlot {
  constructor(private readonly entry: Entry) {}

  /** Makes this mount the provider of the sessions (the admin app). */
  provide(provider: SharedLoginProvider): void {
    this.entry.provider = provider
  }

  /** The provider when another mount provides the sessions, else null (this mount's own). */
  provider(): SharedLoginProvider | null {
    return this.entry.provider
  }

  /** The path of the session cookie: the longest common prefix of the mounts' paths. */
  cookiePath(): string {
    return commonPath([...this.entry.mounts])
  }

  /** Tells every mount of the entry that the session `id` was revoked (their streams end). */
  revoked(id: string): void {
    for (const listener of [...this.entry.revokeListeners]) listener(id)
  }

  /** Calls `listener` with the id of every session revoked on this instance. */
  onRevoked(listener: (id: string) => void): () => void {
    this.entry.revokeListeners.add(listener)
    return () => this.entry.revokeListeners.delete(listener)
  }
}

const registry = new WeakMap<object, WeakMap<object, Entry>>()

/**
 * Joins the shared login of `app`'s server and `auth` at `mountPath`, or returns null when
 * `auth` cannot be shared (absent: open mode).
 */
export function joinSharedLogin(
  app: FastifyInstance,
  auth: unknown,
  mountPath: string,
): SharedLoginSlot | null {
  if (auth === null || (typeof auth !== 'object' && typeof auth !== 'function')) return null
  let byAuth = registry.get(app.server)
  if (byAuth === undefined) {
    byAuth = new WeakMap()
    registry.set(app.server, byAuth)
  }
  let entry = byAuth.get(auth)
  if (entry === undefined) {
    entry = { mounts: new Set(), provider: null, revokeListeners: new Set() }
    byAuth.set(auth, entry)
  }
  entry.mounts.add(mountPath === '' ? '/' : mountPath)
  return new SharedLoginSlot(entry)
}

/** `/a/b` and `/a/c` → `/a`; `/a` and `/b` → `/`. Compared by whole segments. */
export function commonPath(paths: readonly string[]): string {
  const split = paths.map((path) => path.split('/').filter((part) => part !== ''))
  const first = split[0] ?? []
  let length = 0
  while (length < first.length && split.every((parts) => parts[length] === first[length])) length++
  return `/${first.slice(0, length).join('/')}`
}
