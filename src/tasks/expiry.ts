/**
 * Task expiry: a task given `expiresAt` or `ttl` must start by its `expires_at`, or it ends
 * `expired` and never runs. The rule is checked where a task would start (the runner's
 * pending → running step, and a durable store's claim) and by a periodic sweep of pending
 * tasks; every path moves the record `pending → expired` only, so a task that has started
 * (including one waiting between retries) is no longer subject to its expiry.
 */
import type { StoredTask, TaskRecord } from './record.js'
import { toIso } from './time.js'

/** Whether the record's expiry has passed at `now` (epoch ms); false without an expiry. */
export function isExpired(record: TaskRecord, now: number): boolean {
  const at = record.expires_at
  // A body written before expiry existed has no field: Date.parse gives NaN, never expired.
  return at !== null && Date.parse(at) <= now
}

/** The `error` of an expired record: when it should have started by. */
export function expiryMessage(record: TaskRecord): string {
  return `TaskExpired: not started by its expiry at ${record.expires_at ?? 'unknown'}`
}

/** The fields of a `pending → expired` move at `now` (epoch ms). */
export function expiredFields(
  record: TaskRecord,
  now: number,
): Pick<TaskRecord, 'end_time' | 'error'> {
  return { end_time: toIso(now), error: expiryMessage(record) }
}

/**
 * Splits tasks a store just claimed into the ones to hand out and the ones whose expiry passed
 * at `now`; the latter are turned `expired` in place (the caller holds their claim, so it is
 * the only writer and must save them).
 */
export function splitExpired(
  tasks: readonly StoredTask[],
  now: number,
): { live: StoredTask[]; expired: StoredTask[] } {
  const live: StoredTask[] = []
  const expired: StoredTask[] = []
  for (const task of tasks) {
    const record = task.record
    if (record.status === 'pending' && isExpired(record, now)) {
      Object.assign(record, expiredFields(record, now), { status: 'expired' })
      expired.push(task)
    } else live.push(task)
  }
  return { live, expired }
}
