/**
 * The admin app's `auth` option: the shapes both admin mounts accept (common/credentials.ts),
 * a bad one a {@link ConfigError} at startup.
 */
import { ConfigError } from '../../core/errors.js'
import {
  prepareCredentials as prepareShared,
  type AuthOption,
  type CredentialCheck,
  type CredentialUser,
} from '../../common/credentials.js'

export type { Authenticate, AuthenticateResult, CredentialCheck } from '../../common/credentials.js'

/** One admin user; `role` defaults to `admin`. */
export type AdminUser = CredentialUser

/** What the `auth` option of the admin app accepts. */
export type AdminAuthOption = AuthOption

/**
 * Prepares the credential check, or returns null for open mode (no `auth`). Invalid shapes are
 * a {@link ConfigError} at startup, never a silently open admin app.
 */
export function prepareCredentials(
  auth: AdminAuthOption | undefined | null,
): CredentialCheck | null {
  return prepareShared(auth, (message) => new ConfigError(message), 'admin `auth`')
}
