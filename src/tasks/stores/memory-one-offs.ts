/**
 * One-off entries in process memory: what debounced tasks of a manager without a durable store
 * are kept in until they fire. It follows the {@link OneOffScheduleStore} port (one process, so
 * every operation is atomic by running synchronously) and is bounded.
 */
import { randomUUID } from 'node:crypto'
import { toError } from '../errors.js'
import { StoreError } from './errors.js'
import type { ClaimedOneOff, OneOffEntry, OneOffScheduleStore } from './ports.js'
import { checkDebounced, checkLease, checkOneOff } from './rows.js'

/** Most entries kept in memory; placing one more fails (nothing is evicted: each is a task). */
export const MEMORY_ONE_OFF_LIMIT = 100_000

interface Slot {
  entry: OneOffEntry
  claimedBy: string | null
  leaseUntil: number
  token: string | null
}

/** A process-local one-off store of at most `limit` entries. */
export function memoryOneOffs(limit = MEMORY_ONE_OFF_LIMIT): OneOffScheduleStore {
  const slots = new Map<string, Slot>()
  const free = (slot: Slot, now: number): boolean =>
    slot.claimedBy === null || slot.leaseUntil < now
  const place = (entry: OneOffEntry): void => {
    if (!slots.has(entry.run_key) && slots.size >= limit) {
      throw new StoreError(`Too many one-off entries in memory (at most ${String(limit)}).`)
    }
    slots.set(entry.run_key, {
      entry: structuredClone(entry),
      claimedBy: null,
      leaseUntil: 0,
      token: null,
    })
  }
  const byRunAt = (): OneOffEntry[] =>
    [...slots.values()].map((slot) => slot.entry).sort((x, y) => x.run_at - y.run_at)
  return {
    supportsOneOff: true,
    upsert(entry) {
      try {
        checkOneOff(entry)
        place(entry)
        return Promise.resolve()
      } catch (error) {
        return Promise.reject(toError(error))
      }
    },
    debounce(entry) {
      try {
        const taskId = checkDebounced(entry)
        const current = slots.get(entry.run_key)
        const held = current?.claimedBy === null ? current.entry.task_id : null
        const kept = typeof held === 'string' ? held : taskId
        place({ ...entry, task_id: kept })
        return Promise.resolve(kept)
      } catch (error) {
        return Promise.reject(toError(error))
      }
    },
    cancel(runKey) {
      return Promise.resolve(slots.delete(runKey))
    },
    list(before) {
      const all = byRunAt()
      return Promise.resolve(
        (before === undefined ? all : all.filter((e) => e.run_at < before)).map((e) =>
          structuredClone(e),
        ),
      )
    },
    count() {
      return Promise.resolve(slots.size)
    },
    fetchWindow(until, now, limit) {
      const due = [...slots.values()]
        .filter((slot) => slot.entry.run_at <= until && free(slot, now))
        .map((slot) => slot.entry)
        .sort((x, y) => x.run_at - y.run_at)
        .slice(0, limit)
      return Promise.resolve(due.map((e) => structuredClone(e)))
    },
    claim(runKey, lease): Promise<ClaimedOneOff | null> {
      try {
        checkLease(lease.owner, lease.leaseUntil)
      } catch (error) {
        return Promise.reject(toError(error))
      }
      const slot = slots.get(runKey)
      if (slot === undefined || slot.entry.run_at > lease.now || !free(slot, lease.now)) {
        return Promise.resolve(null)
      }
      slot.claimedBy = lease.owner
      slot.leaseUntil = lease.leaseUntil
      slot.token = randomUUID()
      return Promise.resolve({ entry: structuredClone(slot.entry), claim_token: slot.token })
    },
    complete(runKey, claimToken) {
      const slot = slots.get(runKey)
      if (slot === undefined || slot.token !== claimToken) return Promise.resolve(false)
      slots.delete(runKey)
      return Promise.resolve(true)
    },
  }
}
