/**
 * The flags' scheduled changes as a job of the engine's scheduler: applied once per cluster,
 * whatever the number of instances sharing the store.
 */
import type { ScheduledJob } from '../core/scheduler.js'
import type { ClaimStore } from '../stores/types.js'
import type { FlagService } from './service.js'

/**
 * How long one instance owns the flag schedule once it claimed it (ms). Claims are per slot of
 * this length: the first instance to claim a slot applies every change due during it.
 */
export const FLAG_SCHEDULE_SLOT_MS = 5000

/** What {@link flagScheduleJob} needs. */
export interface FlagScheduleDeps {
  flags: FlagService
  claims: ClaimStore
  /** Reloads the flags from the store (so the claimant sees every earlier claimant's writes). */
  reload(): Promise<void>
}

/**
 * The flags' scheduled changes as a {@link ScheduledJob}, applied once per cluster.
 *
 * Why a claim per time slot rather than per change: the flag service applies every change due
 * at a time in one call, and a claim per slot also heals by itself — if the instance that
 * claimed a slot dies before applying, another one claims the next slot and applies the change
 * then. The claimant reloads the flags first, so a change an earlier claimant already applied
 * (and removed from its flag) is never applied twice, however late pub/sub delivered it here.
 * Instances that lost the slot look again at the start of the next one.
 */
export function flagScheduleJob(deps: FlagScheduleDeps): ScheduledJob {
  let ownedSlot = Number.NaN
  const changeTimes = function* (): Generator<number> {
    for (const compiled of deps.flags.snapshot.flags.values())
      for (const change of compiled.flag.scheduled_changes) yield Date.parse(change.at)
  }
  const anyDue = (now: number): boolean => {
    for (const at of changeTimes()) if (at <= now) return true
    return false
  }
  return {
    name: 'flag changes',
    nextDue(now) {
      let next = Number.POSITIVE_INFINITY
      for (const at of changeTimes()) {
        // A change already due is pending on another instance's slot: look at the next slot.
        const candidate =
          at > now ? at : (Math.floor(now / FLAG_SCHEDULE_SLOT_MS) + 1) * FLAG_SCHEDULE_SLOT_MS
        if (candidate < next) next = candidate
      }
      return Number.isFinite(next) ? next : null
    },
    async runDue(now) {
      if (!anyDue(now)) return 0
      const slot = Math.floor(now / FLAG_SCHEDULE_SLOT_MS)
      if (slot !== ownedSlot) {
        // Twice the slot: instances whose clocks differ a little still agree on the claimant.
        if (!(await deps.claims.claim(`flag_schedule:${slot}`, 2 * FLAG_SCHEDULE_SLOT_MS))) return 0
        ownedSlot = slot
        await deps.reload()
      }
      return (await deps.flags.runDueScheduledChanges(now)).length
    },
  }
}
