import { afterAll, describe, expect, it } from 'vitest'
import {
  OneOffScheduler,
  ScheduleError,
  ScheduleOnceUnsupportedError,
  SchedulerLoop,
} from '../../../src/tasks/scheduling/index.js'
import type { DurableTaskStore, OneOffEntry } from '../../../src/tasks/stores/index.js'
import { manualTimer, ManualClock, tickAt } from './fakes.js'
import { removeSqliteFiles, storeKinds } from './stores.js'

const T0 = Date.parse('2026-11-21T12:00:00Z')

function entry(runKey: string, runAt: number): OneOffEntry {
  return {
    run_key: runKey,
    func_name: 'report',
    run_at: runAt,
    args: [runKey],
    encrypted_args: null,
    tags: {},
    priority: null,
    queue: null,
    idempotency_key: null,
    created_at: T0,
  }
}

afterAll(() => removeSqliteFiles())

describe('one-off scheduling needs a capable store', () => {
  // What both schedulers take besides their store: one owner on a stopped clock.
  const scheduler = (lease: { leaseMs?: number } = {}) => ({
    owner: 'a',
    clock: new ManualClock(T0),
    fire: () => undefined,
    timer: manualTimer,
    ...lease,
  })

  it('throws ScheduleOnceUnsupportedError without one', () => {
    const make = (store: unknown) => () =>
      new OneOffScheduler({ store: store as DurableTaskStore['oneOffs'], ...scheduler() })
    expect(make(null)).toThrow(ScheduleOnceUnsupportedError)
    expect(make({ supportsOneOff: false })).toThrow(/one-off schedule support/)
  })

  it('a periodic loop refuses a slot lease under one second', () => {
    const make = (leaseMs: number) => () =>
      new SchedulerLoop({ store: {} as DurableTaskStore['slots'], ...scheduler({ leaseMs }) })
    expect(make(999)).toThrow(ScheduleError)
    expect(make(Number.NaN)).toThrow(ScheduleError)
    expect(make(1000)).not.toThrow()
  })

  it('refuses a claim lease under one second', () => {
    const store = { supportsOneOff: true } as unknown as DurableTaskStore['oneOffs']
    const make = (leaseMs: number) => () =>
      new OneOffScheduler({ store, ...scheduler({ leaseMs }) })
    expect(make(999)).toThrow(ScheduleError)
    expect(make(1000)).not.toThrow()
  })
})

for (const kind of storeKinds('sched')) {
  describe(`scheduling on ${kind.name}`, async () => {
    const test = (await kind.enabled()) ? it : it.skip
    const stores: DurableTaskStore[] = []
    const open = () => {
      const store = kind.open()
      stores.push(store)
      return store
    }
    afterAll(async () => {
      for (const store of stores) await store.close()
      if (await kind.enabled()) await kind.cleanup()
    })

    test('two loops fire a 1-second schedule for 10 s: no duplicate, no missing slot', async () => {
      const clock = new ManualClock(T0 + 137)
      const fired: number[] = []
      const name = `every-second-${kind.name}`
      const loops = [open(), open()].map((store, i) => {
        const loop = new SchedulerLoop({
          store: store.slots,
          owner: `instance-${i}`,
          clock,
          timer: manualTimer,
          fire: (_name, slot) => {
            fired.push(slot)
          },
        })
        loop.add(name, { every: 1 })
        loop.start()
        return loop
      })
      // Uneven ticks, sometimes both loops at once, sometimes one lagging behind the other.
      const steps = [250, 400, 350, 1000, 90, 910, 1500, 500, 700, 300, 1000, 1000, 1000, 1005]
      let turn = 0
      for (const step of steps) {
        clock.time += step
        if (turn % 3 === 0) await Promise.all(loops.map((loop) => loop.tick()))
        else await loops[turn % 2]!.tick()
        turn++
      }
      await Promise.all(loops.map((loop) => loop.tick()))
      const expected = Array.from({ length: 10 }, (_, i) => T0 + (i + 1) * 1000)
      expect(clock.time - T0).toBeGreaterThanOrEqual(10_000)
      expect(fired.filter((slot) => slot <= T0 + 10_000).sort()).toEqual(expected)
      expect(new Set(fired).size).toBe(fired.length)
      await Promise.all(loops.map((loop) => loop.stop()))
    })

    test('a slot claimed by a dead instance is taken over after the lease and fired once', async () => {
      const name = `takeover-${kind.name}`
      const setup = open()
      // The "dead" instance claimed slot T0 and never confirmed it; slot T0 - 60 s was confirmed.
      expect(await setup.slots.claim(name, T0, 'dead', T0)).toBe(true)
      expect(await setup.slots.claim(name, T0 - 60_000, 'done', T0 - 60_000)).toBe(true)
      await setup.slots.confirm(name, T0 - 60_000, 'done')
      const clock = new ManualClock(T0 + 1)
      const fired: { slot: number; by: string; takenOver: boolean }[] = []
      const loops = ['a', 'b'].map((owner) => {
        const loop = new SchedulerLoop({
          store: open().slots,
          owner,
          clock,
          timer: manualTimer,
          leaseMs: 30_000,
          fire: (_name, slot, takenOver) => {
            fired.push({ slot, by: owner, takenOver })
          },
        })
        loop.add(name, { every: 60 })
        loop.start()
        return loop
      })
      const firedSlots = () => fired.map(({ slot }) => slot)
      // Within the lease the claim may still be on its way to its task: nobody touches it.
      for (; clock.time < T0 + 30_000; clock.time += 5_000) {
        await Promise.all(loops.map((loop) => loop.tick()))
      }
      expect(firedSlots()).toEqual([])
      for (; clock.time <= T0 + 125_000; clock.time += 5_000) {
        await Promise.all(loops.map((loop) => loop.tick()))
      }
      expect(firedSlots().sort()).toEqual([T0, T0 + 60_000, T0 + 120_000])
      // Only the dead instance's slot is fired as a takeover (its fire checks for the task).
      expect(fired.filter(({ takenOver }) => takenOver).map(({ slot }) => slot)).toEqual([T0])
      const window = { claimedSince: 0, claimedBefore: clock.time + 1, limit: 10 }
      expect(await setup.slots.unconfirmed(name, window)).toEqual([])
      await Promise.all(loops.map((loop) => loop.stop()))
    })

    test('a slot whose enqueue failed is fired again after the lease', async () => {
      const name = `retry-${kind.name}`
      const clock = new ManualClock(T0 + 1)
      const fired: number[] = []
      const errors: unknown[] = []
      let failures = 1
      const loop = new SchedulerLoop({
        store: open().slots,
        owner: 'only',
        clock,
        timer: manualTimer,
        leaseMs: 10_000,
        onError: (error) => errors.push(error),
        fire: (_name, slot) => {
          if (failures-- > 0) throw new Error('queue is full')
          fired.push(slot)
        },
      })
      loop.add(name, { every: 3600 })
      loop.start()
      const slot = Math.ceil((T0 + 1) / 3_600_000) * 3_600_000
      await tickAt(clock, slot + 1, loop)
      expect(errors).toHaveLength(1)
      expect(fired).toEqual([])
      await tickAt(clock, slot + 5_000, loop)
      expect(fired).toEqual([])
      await tickAt(clock, slot + 11_000, loop)
      expect(fired).toEqual([slot])
      await tickAt(clock, slot + 30_000, loop)
      expect(fired).toEqual([slot])
      await loop.stop()
    })

    test('one-off entries fire exactly once across instances, from a horizon window', async () => {
      const a = open()
      const b = open()
      const clock = new ManualClock(T0)
      const fired: string[] = []
      const schedulers = [a, b].map(
        (store, i) =>
          new OneOffScheduler({
            store: store.oneOffs,
            owner: `s${i}`,
            clock,
            timer: manualTimer,
            fire: (e) => {
              fired.push(e.run_key)
            },
          }),
      )
      await a.oneOffs.upsert(entry('soon', T0 + 2_000))
      await a.oneOffs.upsert(entry('replaced', T0 + 3_000))
      await b.oneOffs.upsert(entry('replaced', T0 + 4_000))
      await a.oneOffs.upsert(entry('far', T0 + 400_000))
      await a.oneOffs.upsert(entry('cancelled', T0 + 1_000))
      expect(await b.oneOffs.cancel('cancelled')).toBe(true)
      await Promise.all(schedulers.map((s) => s.tick()))
      // The far entry is beyond the 300 s horizon: not held in memory yet.
      expect(schedulers[0]!.windowSize).toBe(2)
      for (let t = 1; t <= 10; t++) {
        await tickAt(clock, T0 + t * 1000, ...schedulers)
      }
      expect(fired.sort()).toEqual(['replaced', 'soon'])
      // Refills every 150 s bring the far entry into the window; it fires once at its time.
      for (let t = 150; t <= 450; t += 150) {
        await tickAt(clock, T0 + t * 1000, ...schedulers)
      }
      expect(fired.sort()).toEqual(['far', 'replaced', 'soon'])
      expect(await a.oneOffs.count()).toBe(0)
    })

    test('a crash between claim and run loses nothing; a restarted scheduler re-arms', async () => {
      const store = open()
      const clock = new ManualClock(T0)
      await store.oneOffs.upsert(entry('crashy', T0 + 1_000))
      await store.oneOffs.upsert(entry('after-restart', T0 + 5_000))
      const crashing = new OneOffScheduler({
        store: store.oneOffs,
        owner: 'crasher',
        clock,
        timer: manualTimer,
        leaseMs: 30_000,
        fire: () => {
          throw new Error('process died')
        },
        onError: () => undefined,
      })
      await crashing.tick()
      await tickAt(clock, T0 + 1_000, crashing)
      await crashing.stop()
      expect(await store.oneOffs.count()).toBe(2)
      // A fresh scheduler (a new process) refills from the store at its first tick.
      const fired: string[] = []
      const fresh = new OneOffScheduler({
        store: open().oneOffs,
        owner: 'fresh',
        clock,
        timer: manualTimer,
        fire: (e) => {
          fired.push(e.run_key)
        },
      })
      fresh.start()
      await tickAt(clock, T0 + 5_000, fresh)
      expect(fired).toEqual(['after-restart'])
      // The crashed claim's lease ends; the next refill claims and fires it.
      await tickAt(clock, T0 + 160_000, fresh)
      expect(fired).toEqual(['after-restart', 'crashy'])
      expect(await store.oneOffs.count()).toBe(0)
      await fresh.stop()
    })
  })
}
