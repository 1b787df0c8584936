/**
 * The two summaries every benchmark reports, written once so that every table means the same
 * by "median" and "p95".
 */

/** The median of `values`: the middle one, or the mean of the two middle ones; NaN when empty. */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = sorted.length >> 1
  if (sorted.length === 0) return Number.NaN
  return sorted.length % 2 === 1
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2
}

/**
 * The `q` quantile (0 to 1) of `values` by nearest rank: the smallest value with at least a
 * share `q` of all values at or below it (p99 of 1,000 samples is the 990th smallest); NaN when
 * empty.
 */
export function percentile(values: readonly number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b)
  return (
    sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? Number.NaN
  )
}
