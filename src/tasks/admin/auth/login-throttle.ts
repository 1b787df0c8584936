/**
 * The one place the task admin calls the shared login throttle (`src/common/login-throttle.ts`):
 * every login attempt goes through {@link reserveLoginAttempt}, so a change of that module's
 * API is adapted here and nowhere else.
 *
 * The rule is the admin app's too: a correct password from a client network (the address's
 * IPv6 /64, or the IPv4 address) that has not been failing logs in at once, whatever other
 * clients do; failures slow down the network that makes them, on the username it tries and on
 * all its attempts. The attempt is counted as failed *before* the password is checked (a
 * reservation): concurrent guesses cannot all slip through while a slow `authenticateUser`
 * runs; a success takes it back.
 */
import type { LoginThrottle } from '../../../common/login-throttle.js'

/** One login attempt's place in the throttle. */
export interface LoginAttempt {
  /** Seconds to wait before trying again; 0 when the attempt may go ahead. */
  readonly retryAfter: number
  /** The credentials were right: forget the failures of this pair. */
  succeeded(): void
  /** The credentials were wrong (already counted by the reservation). */
  failed(): void
}

/** Reserves an attempt for `username` from `address`, or says how long to wait. */
export function reserveLoginAttempt(
  throttle: LoginThrottle,
  username: string,
  address: string,
): LoginAttempt {
  const attempt = throttle.begin(username, address)
  if (!attempt.allowed)
    return { retryAfter: attempt.retryAfter, succeeded: () => undefined, failed: () => undefined }
  return { retryAfter: 0, succeeded: () => attempt.succeed(), failed: () => attempt.fail() }
}
