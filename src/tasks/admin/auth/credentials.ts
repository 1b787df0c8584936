/**
 * The task admin's `auth` option: one `[username, password]` pair, a list of pairs (checked in
 * constant time, see common/credential-table.ts), or a backend object with
 * `authenticateUser(username, password)` (sync or async, true to accept).
 */
import { credentialTable } from '../../../common/credential-table.js'
import { TaskValidationError } from '../../errors.js'

/** A backend that checks credentials itself (a user table, an LDAP bind). */
export interface TaskAdminAuthBackend {
  authenticateUser(username: string, password: string): boolean | Promise<boolean>
}

/** What the `auth` option accepts. */
export type TaskAdminAuth =
  | readonly [username: string, password: string]
  | readonly (readonly [username: string, password: string])[]
  | TaskAdminAuthBackend

/** A credential check prepared at mount. */
export interface CredentialCheck {
  verify(username: string, password: string): Promise<boolean>
}

/**
 * Prepares the check, or returns null without `auth` (every route open). A malformed `auth` is
 * a `TaskValidationError` at mount, never a silently open admin.
 */
export function prepareCredentials(auth: TaskAdminAuth | null | undefined): CredentialCheck | null {
  if (auth === undefined || auth === null) return null
  if (!Array.isArray(auth)) {
    const backend = auth as Partial<TaskAdminAuthBackend>
    if (typeof backend.authenticateUser !== 'function') throw invalid()
    const authenticate = backend.authenticateUser.bind(backend)
    return {
      async verify(username, password) {
        // Only a real `true` accepts: a truthy string from a sloppy backend does not.
        const answer: unknown = await authenticate(username, password)
        return answer === true
      },
    }
  }
  const list: unknown[] = typeof auth[0] === 'string' ? [auth] : auth
  if (list.length === 0) throw invalid()
  const pairs = list.map((pair) => {
    if (
      !Array.isArray(pair) ||
      pair.length !== 2 ||
      typeof pair[0] !== 'string' ||
      typeof pair[1] !== 'string' ||
      pair[0] === '' ||
      pair[1] === ''
    ) {
      throw invalid()
    }
    return { username: pair[0], password: pair[1] }
  })
  const matches = credentialTable(pairs)
  return { verify: (username, password) => Promise.resolve(matches(username, password)) }
}

function invalid(): TaskValidationError {
  return new TaskValidationError(
    'Invalid task admin `auth`: expected ["user", "password"], a list of such pairs, or { authenticateUser(username, password) }.',
  )
}
