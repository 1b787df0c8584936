/**
 * The one place the task admin calls the shared login throttle (`src/common/login-throttle.ts`):
 * every login attempt goes through {@link reserveLoginAttempt}, so a change of that module's
 * API is adapted here and nowhere else.
 *
 * The throttle counts failures by username and address together, and (with a lower bound on
 * the delay) by each alone, so a burst of wrong passwords slows down the guesser, not every
 * other user behind the same proxy. The attempt is counted as failed *before* the password is
 * checked (a reservation): concurrent guesses cannot all slip through while a slow
 * `authenticateUser` runs; a success takes it back.
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
