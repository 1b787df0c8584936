/**
 * The one place the task admin calls the shared login throttle (`src/common/login-throttle.ts`):
 * every login attempt goes through {@link reserveLoginAttempt}, so a change of that module's
 * API is adapted here and nowhere else.
 *
 * Attempts are counted per (username, client address): a burst of wrong passwords for one
 * username from one address slows down that pair, not other users behind the same proxy. The
 * attempt is counted as failed *before* the password is checked (a reservation): concurrent
 * guesses cannot all slip through while a slow `authenticateUser` runs; a success clears it.
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
  const key = `${address}\u0000${username}`
  const retryAfter = throttle.waitSeconds(key)
  if (retryAfter > 0) return { retryAfter, succeeded: () => undefined, failed: () => undefined }
  throttle.fail(key)
  return {
    retryAfter: 0,
    succeeded: () => throttle.succeed(key),
    failed: () => undefined,
  }
}
