/**
 * The task id of a periodic schedule's slot: the same on every instance for the same schedule
 * and slot, so the slot's task is created once (a create-only write by this id) even when the
 * claimer and an instance that took its stale claim over both fire the slot.
 */
import { createHash } from 'node:crypto'

/**
 * A UUID (version 8, the RFC 9562 form for ids derived by the application) made from the
 * SHA-256 of the schedule name and slot time, so it has the shape of every other task id.
 */
export function slotTaskId(scheduleName: string, slotTime: number): string {
  const digest = createHash('sha256').update(`schedule-slot\0${scheduleName}\0${slotTime}`).digest()
  digest[6] = ((digest[6] as number) & 0x0f) | 0x80
  digest[8] = ((digest[8] as number) & 0x3f) | 0x80
  const hex = digest.subarray(0, 16).toString('hex')
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}
