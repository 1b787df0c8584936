/**
 * The task admin's `auth` option: the shapes both admin mounts accept (common/credentials.ts),
 * a bad one a `TaskValidationError` at mount.
 */
import {
  prepareCredentials as prepareShared,
  type Authenticate,
  type AuthOption,
  type CredentialCheck,
} from '../../../common/credentials.js'
import { TaskValidationError } from '../../errors.js'

export type { CredentialCheck, CredentialUser } from '../../../common/credentials.js'

/** A backend that checks credentials itself (a user table, an LDAP bind). */
export interface TaskAdminAuthBackend {
  /** True (an `admin`) or `{ role }` to accept; anything else refuses. */
  authenticateUser: Authenticate
}

/** What the `auth` option accepts. */
export type TaskAdminAuth = AuthOption

/**
 * Prepares the check, or returns null without `auth` (every route open). A malformed `auth` is
 * a `TaskValidationError` at mount, never a silently open admin.
 */
export function prepareCredentials(auth: TaskAdminAuth | null | undefined): CredentialCheck | null {
  return prepareShared(auth, (message) => new TaskValidationError(message), 'task admin `auth`')
}
