import { describe, expect, it } from 'vitest'
import { memorySlotStore } from '../../../src/tasks/scheduling/memory-slot-store.js'
import { SchedulerLoop } from '../../../src/tasks/scheduling/index.js'
import { manualTimer, ManualClock, tickAt } from './fakes.js'

const T0 = Date.parse('2026-11-21T12:00:00Z')
const everything = { claimedSince: 0, claimedBefore: T0 + 3_600_000, limit: 10 }

describe('the in-process slot store', () => {
  it('claims once, confirms by the holder only, and hands a stale claim over once', async () => {
    const store = memorySlotStore()
    expect(await store.claim('s', T0, 'a', T0)).toBe(true)
    expect(await store.claim('s', T0, 'b', T0)).toBe(false)
    expect(await store.claim('s', T0 + 1000, 'a', T0 + 1000)).toBe(true)
    expect(await store.unconfirmed('s', everything)).toEqual([T0, T0 + 1000])
    expect(await store.unconfirmed('other', everything)).toEqual([])
    expect(await store.unconfirmed('s', { ...everything, limit: 1 })).toEqual([T0])
    await store.confirm('s', T0 + 1000, 'b')
    await store.confirm('s', T0 + 1000, 'a')
    expect(await store.unconfirmed('s', everything)).toEqual([T0])
    // Fresh claims and confirmed ones are never taken over.
    expect(await store.takeOver('s', T0, 'b', T0, T0 + 10)).toBe(false)
    expect(await store.takeOver('s', T0 + 1000, 'b', T0 + 60_000, T0 + 60_000)).toBe(false)
    expect(await store.takeOver('s', T0, 'b', T0 + 30_000, T0 + 60_000)).toBe(true)
    expect(await store.takeOver('s', T0, 'c', T0 + 30_000, T0 + 60_000)).toBe(false)
    await store.confirm('s', T0, 'a')
    expect(await store.unconfirmed('s', everything)).toEqual([T0])
    await store.confirm('s', T0, 'b')
    expect(await store.unconfirmed('s', everything)).toEqual([])
  })

  it('forgets the oldest claims past its bound', async () => {
    const store = memorySlotStore(3)
    for (let i = 0; i < 4; i++) expect(await store.claim('s', T0 + i, 'a', T0)).toBe(true)
    expect(await store.unconfirmed('s', everything)).toEqual([T0 + 1, T0 + 2, T0 + 3])
    // The forgotten slot is older than anything the loop asks for again.
    expect(await store.claim('s', T0 + 3, 'a', T0)).toBe(false)
  })

  it('lets a loop fire again a slot whose enqueue failed, once, after the lease', async () => {
    const clock = new ManualClock(T0 + 1)
    const fired: number[] = []
    let failures = 2
    const loop = new SchedulerLoop({
      store: memorySlotStore(),
      owner: 'only',
      clock,
      timer: manualTimer,
      leaseMs: 5_000,
      onError: () => undefined,
      fire: (_name, slot) => {
        if (failures-- > 0) throw new Error('queue is full')
        fired.push(slot)
      },
    })
    loop.add('hourly', { every: 3600 })
    loop.start()
    const slot = T0 + 3_600_000
    for (const at of [slot, slot + 4_000, slot + 6_000, slot + 9_000, slot + 12_000]) {
      await tickAt(clock, at, loop)
    }
    // Failed at the slot and at its first retry (6 s); fired at the second (12 s).
    expect(fired).toEqual([slot])
    await tickAt(clock, slot + 60_000, loop)
    expect(fired).toEqual([slot])
    await loop.stop()
  })
})
