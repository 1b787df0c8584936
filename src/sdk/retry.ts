/**
 * How the SDK waits before repeating a call the server turned away for now: a 429 (the
 * server's rate limit or login throttle) or a 503 (its store is briefly unavailable). Instead of
 * failing at once, the call is repeated after an exponential backoff with jitter — 0.5 s, 1 s,
 * 2 s… never beyond 30 s — or after the server's `Retry-After` when it gives one (also at most
 * 30 s), at most {@link MAX_RETRIES} times.
 *
 * Why jitter: many apps of one service start together; without it they would all come back at
 * the same instant and be turned away together again.
 */

/** Statuses whose call is repeated. */
export const RETRIED_STATUSES: ReadonlySet<number> = new Set([429, 503])

/** Most repetitions of one call. */
export const MAX_RETRIES = 5

/** The first wait, in milliseconds. */
export const FIRST_RETRY_MS = 500

/** The longest wait, in milliseconds (the server's `Retry-After` included). */
export const MAX_RETRY_MS = 30_000

/**
 * The wait before repetition number `attempt + 1` (`attempt` ≥ 0), in milliseconds: the
 * `Retry-After` header (seconds or an HTTP date) when it is valid, else the backoff with jitter
 * (a random point of its upper half); both capped at {@link MAX_RETRY_MS}.
 */
export function retryDelay(
  attempt: number,
  retryAfter: string | null | undefined,
  now: number = Date.now(),
  random: () => number = Math.random,
): number {
  const given = parseRetryAfter(retryAfter, now)
  if (given !== null) return Math.min(given, MAX_RETRY_MS)
  const ceiling = Math.min(FIRST_RETRY_MS * 2 ** attempt, MAX_RETRY_MS)
  return Math.round(ceiling / 2 + random() * (ceiling / 2))
}

/** Milliseconds a `Retry-After` value asks for, or null when it is absent or malformed. */
function parseRetryAfter(value: string | null | undefined, now: number): number | null {
  if (value === null || value === undefined) return null
  const text = value.trim()
  if (/^\d{1,9}$/.test(text)) return Number(text) * 1000
  const at = Date.parse(text)
  return Number.isNaN(at) ? null : Math.max(0, at - now)
}

/** Resolves after `ms` without keeping the process alive. */
export function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref())
}
