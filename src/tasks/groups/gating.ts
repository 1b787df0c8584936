/**
 * A queue's group and rate options, validated once: `groupConcurrency` (most running tasks per
 * group across every instance of the store), `rateLimit` (most starts of the queue per window)
 * and `groupRateLimit` (most starts of each group per window). Limits are the route rate
 * limiter's strings (`'20/second'`, `'100/minute'`), parsed by the same parser.
 */
import { readLimit, type Limit } from '../../common/rate-limits/limit.js'
import { TaskValidationError } from '../errors.js'
import type { GateRate, GateRequest, GateSlot } from '../stores/ports.js'

/** A queue's group and rate limits; null means none. */
export interface QueueGating {
  readonly groupConcurrency: number | null
  readonly rateLimit: Limit | null
  readonly groupRateLimit: Limit | null
}

/** No group or rate limit: a grouped queue whose limits were all lifted at runtime. */
export const NO_GATING: QueueGating = {
  groupConcurrency: null,
  rateLimit: null,
  groupRateLimit: null,
}

/** A queue's group and rate limits on the wire and in the store (limit strings; null: none). */
export interface QueueGatingSettings {
  group_concurrency: number | null
  rate_limit: string | null
  group_rate_limit: string | null
}

/** The wire form of `gating`. */
export function gatingSettings(gating: QueueGating): QueueGatingSettings {
  return {
    group_concurrency: gating.groupConcurrency,
    rate_limit: gating.rateLimit?.text ?? null,
    group_rate_limit: gating.groupRateLimit?.text ?? null,
  }
}

/** The longest group name (it is part of the gates' keys). */
export const MAX_GROUP_LENGTH = 128

/** Validates a task's `group` (per call or as a task default): null, or a short non-empty string. */
export function validateGroup(group: unknown, where: string): string | null {
  if (group === undefined || group === null) return null
  if (typeof group !== 'string' || group.trim() === '' || group.length > MAX_GROUP_LENGTH) {
    throw new TaskValidationError(
      `${where}: group must be a non-empty string of at most ${MAX_GROUP_LENGTH} characters, got ${JSON.stringify(group)}.`,
    )
  }
  return group
}

/**
 * Validates a queue's group and rate options; null when it has none (the queue then starts
 * tasks without asking any gate, at no extra cost).
 */
export function parseQueueGating(
  name: string,
  options: { groupConcurrency?: unknown; rateLimit?: unknown; groupRateLimit?: unknown },
): QueueGating | null {
  const { groupConcurrency, rateLimit, groupRateLimit } = options
  const concurrency = groupConcurrency ?? null
  if (
    concurrency !== null &&
    (typeof concurrency !== 'number' || !Number.isInteger(concurrency) || concurrency < 1)
  ) {
    throw new TaskValidationError(
      `Queue ${JSON.stringify(name)}: groupConcurrency must be a positive integer or null, got ${JSON.stringify(concurrency)}.`,
    )
  }
  const gating: QueueGating = {
    groupConcurrency: concurrency,
    rateLimit: queueLimit(name, 'rateLimit', rateLimit),
    groupRateLimit: queueLimit(name, 'groupRateLimit', groupRateLimit),
  }
  const none =
    gating.groupConcurrency === null && gating.rateLimit === null && gating.groupRateLimit === null
  return none ? null : gating
}

function queueLimit(queue: string, field: string, value: unknown): Limit | null {
  if (value === undefined || value === null) return null
  const limit = readLimit(value, field)
  if ('message' in limit) {
    throw new TaskValidationError(`Queue ${JSON.stringify(queue)}: ${limit.message}`)
  }
  return limit
}

/** The gates one start of `queue` must pass, for a task of `group` (null: ungrouped). */
export function gateRequest(
  gating: QueueGating,
  queue: string,
  group: string | null,
  holder: string,
  leaseUntil: number,
  now: number,
): GateRequest {
  const slots: GateSlot[] = []
  const rates: GateRate[] = []
  if (gating.rateLimit !== null) {
    const { count, periodMs } = gating.rateLimit
    rates.push({ key: JSON.stringify(['rate', queue]), count, periodMs })
  }
  if (group !== null) {
    if (gating.groupConcurrency !== null) {
      slots.push({ key: slotKey(queue, group), limit: gating.groupConcurrency })
    }
    if (gating.groupRateLimit !== null) {
      const { count, periodMs } = gating.groupRateLimit
      rates.push({ key: JSON.stringify(['rate', queue, group]), count, periodMs })
    }
  }
  return { holder, slots, rates, leaseUntil, now }
}

/** The key of a group's slot gate (JSON, so no queue or group name can collide with another). */
export function slotKey(queue: string, group: string): string {
  return JSON.stringify(['slots', queue, group])
}
