/**
 * The runtime group and rate limits of a queue as the stores keep them: one JSON value per
 * queue config. Reading is forgiving (a value this version cannot read keeps the options given
 * in code); the manager validates the limits again before it applies them.
 */
import type { StoredQueueGating } from './ports.js'

/** The JSON kept for `gating`, or null for none. */
export function gatingText(gating: StoredQueueGating | null | undefined): string | null {
  if (gating === undefined || gating === null) return null
  return JSON.stringify({
    group_concurrency: gating.group_concurrency,
    rate_limit: gating.rate_limit,
    group_rate_limit: gating.group_rate_limit,
  })
}

/** The stored `gating` read back: null when absent or not in the expected shape. */
export function readGating(value: unknown): StoredQueueGating | null {
  let parsed: unknown = value
  if (typeof value === 'string') {
    try {
      parsed = JSON.parse(value)
    } catch {
      return null
    }
  }
  if (typeof parsed !== 'object' || parsed === null) return null
  const fields = parsed as Record<string, unknown>
  const concurrency = fields['group_concurrency']
  const rate = fields['rate_limit']
  const groupRate = fields['group_rate_limit']
  const limitOk = (limit: unknown) => limit === null || typeof limit === 'string'
  if (!(concurrency === null || typeof concurrency === 'number')) return null
  if (!limitOk(rate) || !limitOk(groupRate)) return null
  return {
    group_concurrency: concurrency,
    rate_limit: rate,
    group_rate_limit: groupRate,
  }
}
