/**
 * Admin credentials given at mount, and the role each one signs in with:
 *
 * - `{username, password}` or a `[username, password]` pair — one `admin`;
 * - a list of `{username, password, role?}` or `{ users: [...] }` — each user with its role
 *   (`admin` when omitted, as a single pair is);
 * - `authenticate(username, password)` / `{ authenticate }` / `{ authenticateUser }` (sync or
 *   async) for anything else (an LDAP bind, a user table): `true` signs in as `admin`,
 *   `{ role }` with that role, anything else refuses.
 *
 * Why hashes are compared: `timingSafeEqual` needs equal lengths, and comparing the raw
 * strings would leak the password's length. SHA-256 digests always have 32 bytes, so the time
 * a comparison takes says nothing about the password. Every configured user is checked, so the
 * time does not reveal which usernames exist either.
 */
import { createHash, timingSafeEqual } from 'node:crypto'
import { ConfigError } from '../../core/errors.js'
import { isRole, ROLES, type Role } from '../../common/roles.js'

/** One admin user; `role` defaults to `admin`. */
export interface AdminUser {
  username: string
  password: string
  role?: Role
}

/** What an authenticate function may answer: `true` (an admin), `{ role }`, or a refusal. */
export type AuthenticateResult = boolean | { role: Role } | null | undefined

/** Checks a username and password; resolves true (or `{ role }`) to accept them. */
export type Authenticate = (
  username: string,
  password: string,
) => AuthenticateResult | Promise<AuthenticateResult>

/** What the `auth` option of the admin app accepts. */
export type AdminAuthOption =
  | AdminUser
  | readonly AdminUser[]
  | readonly [string, string]
  | { users: readonly AdminUser[] }
  | Authenticate
  | { authenticate: Authenticate }
  | { authenticateUser: Authenticate }

/** A credential check prepared at mount. */
export interface CredentialCheck {
  /** The role of the user the credentials belong to, or null to refuse them. */
  verify(username: string, password: string): Promise<Role | null>
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
  if (!Array.isArray(auth)) {
    const shaped = auth as { authenticate?: unknown; authenticateUser?: unknown }
    if (typeof shaped.authenticate === 'function')
      return fromFunction(shaped.authenticate.bind(auth) as Authenticate)
    if (typeof shaped.authenticateUser === 'function')
      return fromFunction(shaped.authenticateUser.bind(auth) as Authenticate)
  }
  const users = toUsers(auth)
  const table = users.map((user) => ({
    username: digest(user.username),
    password: digest(user.password),
    role: user.role,
  }))
  return {
    verify(username, password) {
      const name = digest(username)
      const secret = digest(password)
      let accepted: Role | null = null
      for (const user of table) {
        // Both comparisons always run, for every user: constant time in what is compared.
        const nameMatches = timingSafeEqual(user.username, name)
        const passwordMatches = timingSafeEqual(user.password, secret)
        if (nameMatches && passwordMatches) accepted = user.role
      }
      return Promise.resolve(accepted)
    },
  }
}

function fromFunction(authenticate: Authenticate): CredentialCheck {
  return {
    async verify(username, password) {
      // Only a real `true` or a known role accepts: a truthy string or object from a sloppy
      // function does not.
      const result: unknown = await authenticate(username, password)
      if (result === true) return 'admin'
      if (typeof result === 'object' && result !== null) {
        const role = (result as { role?: unknown }).role
        if (isRole(role)) return role
      }
      return null
    },
  }
}

function toUsers(auth: unknown): Required<AdminUser>[] {
  if (
    Array.isArray(auth) &&
    auth.length === 2 &&
    typeof auth[0] === 'string' &&
    typeof auth[1] === 'string'
  ) {
    return [checkUser({ username: auth[0], password: auth[1] })]
  }
  const listed =
    !Array.isArray(auth) && typeof auth === 'object' && auth !== null && 'users' in auth
      ? auth.users
      : auth
  if (!Array.isArray(auth) && 'users' in (auth as object) && !Array.isArray(listed)) {
    throw new ConfigError(
      'Invalid admin `auth.users`: expected a list of {username, password, role}.',
    )
  }
  const list: unknown[] = Array.isArray(listed) ? listed : [listed]
  if (list.length === 0) {
    throw new ConfigError('The admin `auth` list is empty: give at least one {username, password}.')
  }
  const users = list.map(checkUser)
  const names = new Set<string>()
  for (const user of users) {
    if (names.has(user.username))
      throw new ConfigError(
        `The admin \`auth\` lists the user ${JSON.stringify(user.username)} twice.`,
      )
    names.add(user.username)
  }
  return users
}

function checkUser(user: unknown): Required<AdminUser> {
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
      'Invalid admin `auth`: expected {username, password} with non-empty strings, a list of them, {users: [...]}, or an authenticate(username, password) function.',
    )
  }
  const role = candidate.role ?? 'admin'
  if (!isRole(role)) {
    throw new ConfigError(
      `Invalid role ${JSON.stringify(role)} for admin user ${JSON.stringify(candidate.username)}: use one of ${ROLES.join(', ')}.`,
    )
  }
  return { username: candidate.username, password: candidate.password, role }
}
