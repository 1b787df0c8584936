/**
 * The credentials of both admin mounts (route control's admin app and the task admin), and the
 * role each user signs in with. The `auth` option accepts:
 *
 * - `{ username, password, role? }` — one user;
 * - `[username, password]` — one user;
 * - a list of either, or `{ users: [...] }` — each user with its role;
 * - `authenticate(username, password)`, `{ authenticate }` or `{ authenticateUser }` (sync or
 *   async) for anything else (an LDAP bind, a user table): `true` signs in as `admin`,
 *   `{ role }` with that role, anything else refuses.
 *
 * A pair, or a user without `role`, is an `admin`: before roles existed every user was one.
 *
 * Why hashes are compared: `timingSafeEqual` needs equal lengths, and comparing the raw strings
 * would leak a password's length. SHA-256 digests always have 32 bytes, and every configured
 * user is checked, so the time a check takes says nothing about the password or about which
 * usernames exist.
 */
import { createHash, timingSafeEqual } from 'node:crypto'
import { isRole, ROLES, type Role } from './roles.js'
import type { InvalidOption } from './sse-hub.js'

/** One user of an admin mount; `role` defaults to `admin`. */
export interface CredentialUser {
  username: string
  password: string
  role?: Role
}

/** A `[username, password]` pair: an `admin`. */
export type CredentialPair = readonly [username: string, password: string]

/** What an authenticate function may answer: `true` (an admin), `{ role }`, or a refusal. */
export type AuthenticateResult = boolean | { role: Role } | null | undefined

/** Checks a username and password; resolves true (or `{ role }`) to accept them. */
export type Authenticate = (
  username: string,
  password: string,
) => AuthenticateResult | Promise<AuthenticateResult>

/** What the `auth` option of either admin mount accepts. */
export type AuthOption =
  | CredentialUser
  | CredentialPair
  | readonly (CredentialUser | CredentialPair)[]
  | { users: readonly (CredentialUser | CredentialPair)[] }
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
 * Prepares the credential check, or returns null for open mode (no `auth`). An invalid shape,
 * an unknown role or a user listed twice is `invalid(message)` (thrown at mount, never a
 * silently open admin); `label` names the option in that message (e.g. ``task admin `auth` ``).
 */
export function prepareCredentials(
  auth: AuthOption | null | undefined,
  invalid: InvalidOption,
  label: string,
): CredentialCheck | null {
  if (auth === undefined || auth === null) return null
  if (typeof auth === 'function') return fromFunction(auth)
  if (typeof auth === 'object' && !Array.isArray(auth)) {
    const shaped = auth as { authenticate?: unknown; authenticateUser?: unknown }
    if (typeof shaped.authenticate === 'function')
      return fromFunction(shaped.authenticate.bind(auth) as Authenticate)
    if (typeof shaped.authenticateUser === 'function')
      return fromFunction(shaped.authenticateUser.bind(auth) as Authenticate)
  }
  return fromTable(toUsers(auth, invalid, label))
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

function fromTable(users: readonly Required<CredentialUser>[]): CredentialCheck {
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

const isPair = (value: unknown): value is CredentialPair =>
  Array.isArray(value) &&
  value.length === 2 &&
  typeof value[0] === 'string' &&
  typeof value[1] === 'string'

function toUsers(auth: unknown, invalid: InvalidOption, label: string): Required<CredentialUser>[] {
  const shapes = `expected {username, password, role?}, ["user", "password"], a list of them, {users: [...]}, or an authenticate(username, password) function`
  let list: unknown[]
  if (isPair(auth)) list = [auth]
  else if (Array.isArray(auth)) list = auth
  else if (typeof auth === 'object' && auth !== null && Object.hasOwn(auth, 'users')) {
    const users = (auth as { users: unknown }).users
    if (!Array.isArray(users)) throw invalid(`Invalid ${label}.users: expected a list of users.`)
    list = users
  } else list = [auth]
  if (list.length === 0) {
    throw invalid(`Invalid ${label}: the list is empty; give at least one user.`)
  }
  const users = list.map((entry) => checkUser(entry, invalid, label, shapes))
  const names = new Set<string>()
  for (const user of users) {
    if (names.has(user.username))
      throw invalid(`Invalid ${label}: it lists the user ${JSON.stringify(user.username)} twice.`)
    names.add(user.username)
  }
  return users
}

function checkUser(
  entry: unknown,
  invalid: InvalidOption,
  label: string,
  shapes: string,
): Required<CredentialUser> {
  const user: unknown = isPair(entry) ? { username: entry[0], password: entry[1] } : entry
  const candidate = user as Partial<CredentialUser> | null
  if (
    candidate === null ||
    typeof candidate !== 'object' ||
    Array.isArray(candidate) ||
    typeof candidate.username !== 'string' ||
    typeof candidate.password !== 'string' ||
    candidate.username === '' ||
    candidate.password === ''
  ) {
    throw invalid(`Invalid ${label}: ${shapes}, with non-empty strings.`)
  }
  const role = candidate.role ?? 'admin'
  if (!isRole(role)) {
    throw invalid(
      `Invalid ${label}: unknown role ${JSON.stringify(role)} for the user ${JSON.stringify(candidate.username)}; use one of ${ROLES.join(', ')}.`,
    )
  }
  return { username: candidate.username, password: candidate.password, role }
}
