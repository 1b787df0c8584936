/**
 * Admin credentials given at mount: one `{username, password}`, a list of them, a
 * `[username, password]` pair, or an `authenticate(username, password)` function (sync or
 * async) for anything else (an LDAP bind, a user table).
 *
 * Why hashes are compared: `timingSafeEqual` needs equal lengths, and comparing the raw
 * strings would leak the password's length. SHA-256 digests always have 32 bytes, so the time
 * a comparison takes says nothing about the password. Every configured user is checked, so the
 * time does not reveal which usernames exist either.
 */
import { createHash, timingSafeEqual } from 'node:crypto'
import { ConfigError } from '../../core/errors.js'

/** One admin user. */
export interface AdminUser {
  username: string
  password: string
}

/** Checks a username and password; resolves true to accept them. */
export type Authenticate = (username: string, password: string) => boolean | Promise<boolean>

/** What the `auth` option of the admin app accepts. */
export type AdminAuthOption =
  | AdminUser
  | readonly AdminUser[]
  | readonly [string, string]
  | Authenticate
  | { authenticate: Authenticate }

/** A credential check prepared at mount. */
export interface CredentialCheck {
  verify(username: string, password: string): Promise<boolean>
}

const digest = (text: string): Buffer => createHash('sha256').update(text, 'utf8').digest()

/**
 * Prepares the credential check, or returns null for open mode (no `auth`). Invalid shapes are
 * a {@link ConfigError} at startup, never a silently open admin app.
 */
export function prepareCredentials(
  auth: AdminAuthOption | undefined | null,
): CredentialCheck | null {
  if (auth === undefined || auth === null) return null
  if (typeof auth === 'function') return fromFunction(auth)
  if (
    !Array.isArray(auth) &&
    typeof (auth as { authenticate?: unknown }).authenticate === 'function'
  ) {
    return fromFunction((auth as { authenticate: Authenticate }).authenticate)
  }
  const users = toUsers(auth)
  const table = users.map((user) => ({
    username: digest(user.username),
    password: digest(user.password),
  }))
  return {
    verify(username, password) {
      const name = digest(username)
      const secret = digest(password)
      let accepted = false
      for (const user of table) {
        // Both comparisons always run, for every user: constant time in what is compared.
        const nameMatches = timingSafeEqual(user.username, name)
        const passwordMatches = timingSafeEqual(user.password, secret)
        if (nameMatches && passwordMatches) accepted = true
      }
      return Promise.resolve(accepted)
    },
  }
}

function fromFunction(authenticate: Authenticate): CredentialCheck {
  return {
    async verify(username, password) {
      // Only a real `true` accepts: a truthy string or object from a sloppy function does not.
      const result: unknown = await authenticate(username, password)
      return result === true
    },
  }
}

function toUsers(auth: unknown): AdminUser[] {
  if (
    Array.isArray(auth) &&
    auth.length === 2 &&
    typeof auth[0] === 'string' &&
    typeof auth[1] === 'string'
  ) {
    return [checkUser({ username: auth[0], password: auth[1] })]
  }
  const list: unknown[] = Array.isArray(auth) ? auth : [auth]
  if (list.length === 0) {
    throw new ConfigError('The admin `auth` list is empty: give at least one {username, password}.')
  }
  return list.map(checkUser)
}

function checkUser(user: unknown): AdminUser {
  const candidate = user as Partial<AdminUser> | null
  if (
    candidate === null ||
    typeof candidate !== 'object' ||
    typeof candidate.username !== 'string' ||
    typeof candidate.password !== 'string' ||
    candidate.username === '' ||
    candidate.password === ''
  ) {
    throw new ConfigError(
      'Invalid admin `auth`: expected {username, password} with non-empty strings, a list of them, or an authenticate(username, password) function.',
    )
  }
  return { username: candidate.username, password: candidate.password }
}
