/**
 * The slot store of a manager without a durable store: one instance, so claims live in this
 * process, with the same claim, confirmation and takeover rules as the durable stores.
 */
import type { SlotStore } from './scheduler-loop.js'

/** Most claims the in-process slot store remembers; the oldest are forgotten first. */
export const MEMORY_SLOT_LIMIT = 10_000

/**
 * An in-process slot store: for a manager without a durable store (one instance). Its loop
 * never asks for a slot older than its last tick, so forgetting the oldest claims is safe; an
 * unconfirmed claim (its enqueue failed) is retried by the same loop after the lease.
 */
export function memorySlotStore(limit = MEMORY_SLOT_LIMIT): SlotStore {
  interface Claim {
    name: string
    slot: number
    owner: string
    claimedAt: number
  }
  const claims = new Map<string, Claim>()
  // The claims not confirmed yet, so a takeover look-up never walks the confirmed ones.
  const unconfirmed = new Map<string, Claim>()
  const keyOf = (name: string, slot: number) => `${name}\u0000${String(slot)}`
  return {
    claim(name, slot, owner, claimedAt) {
      const key = keyOf(name, slot)
      if (claims.has(key)) return Promise.resolve(false)
      const claim = { name, slot, owner, claimedAt }
      claims.set(key, claim)
      unconfirmed.set(key, claim)
      if (claims.size > limit) {
        const oldest = claims.keys().next()
        if (oldest.done !== true) {
          claims.delete(oldest.value)
          unconfirmed.delete(oldest.value)
        }
      }
      return Promise.resolve(true)
    },
    confirm(name, slot, owner) {
      const key = keyOf(name, slot)
      if (unconfirmed.get(key)?.owner === owner) unconfirmed.delete(key)
      return Promise.resolve()
    },
    unconfirmed(name, query) {
      const found = [...unconfirmed.values()]
        .filter(
          (claim) =>
            claim.name === name &&
            claim.claimedAt >= query.claimedSince &&
            claim.claimedAt < query.claimedBefore,
        )
        .sort((x, y) => x.claimedAt - y.claimedAt)
      return Promise.resolve(found.slice(0, query.limit).map((claim) => claim.slot))
    },
    takeOver(name, slot, owner, staleBefore, now) {
      const claim = unconfirmed.get(keyOf(name, slot))
      if (claim === undefined || claim.claimedAt >= staleBefore) return Promise.resolve(false)
      claim.owner = owner
      claim.claimedAt = now
      return Promise.resolve(true)
    },
  }
}
