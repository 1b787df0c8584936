/**
 * Server-side rendering of times and durations, so a page reads correctly before its script
 * runs (the script then keeps relative times current and shows local time on hover).
 */

const UNITS: readonly [string, number][] = [
  ['y', 365 * 86_400_000],
  ['d', 86_400_000],
  ['h', 3_600_000],
  ['min', 60_000],
  ['s', 1000],
]

/** "3 min ago", "in 2 h", "just now". */
export function formatRelative(at: number, now: number): string {
  const delta = at - now
  const size = Math.abs(delta)
  if (size < 10_000) return 'just now'
  for (const [unit, ms] of UNITS) {
    if (size >= ms || unit === 's') {
      const amount = Math.round(size / ms)
      return delta < 0 ? `${amount} ${unit} ago` : `in ${amount} ${unit}`
    }
  }
  return 'just now'
}

/** The exact time in UTC, e.g. `2026-05-01 14:03:07 UTC`. */
export function formatAbsolute(at: number): string {
  return `${new Date(at).toISOString().slice(0, 19).replace('T', ' ')} UTC`
}

/** A duration in human units: `850 ms`, `2.4 s`, `3 min`, `5 h`, `2 d`. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`
  if (ms < 3_600_000) return `${Math.round(ms / 60_000)} min`
  if (ms < 86_400_000) return `${Math.round(ms / 3_600_000)} h`
  return `${Math.round(ms / 86_400_000)} d`
}
