/**
 * A slot's claimer that is only slow — stalled between its claim and its enqueue for longer than
 * the lease — and the instance that takes its claim over both fire the slot. On each real store,
 * two managers on one clock play both orders (the taker-over's enqueue first, then the
 * claimer's; and the other way round): the slot's task is created and run once, and the slot
 * ends confirmed.
 */
import { afterAll, describe, expect, it } from 'vitest'
import { TaskManager, toIso } from '../../../src/tasks/index.js'
import { slotTaskId } from '../../../src/tasks/slot-task-id.js'
import type { DurableTaskStore, ScheduleSlotStore } from '../../../src/tasks/stores/index.js'
import {
  deferred,
  fakeClock,
  fakeTimer,
  quietLogger,
  SCHEDULE_START,
  until,
  type Deferred,
} from '../helpers.js'
import { removeSqliteFiles, storeKinds } from './stores.js'

afterAll(() => removeSqliteFiles())

/** The slot store of `store` with a pause after a won claim or takeover and a signal at confirm. */
function stalled(
  store: DurableTaskStore,
  stall: { after: 'claim' | 'takeOver'; reached: Deferred<void>; resume: Promise<void> },
  confirmed: Deferred<void>,
): DurableTaskStore {
  const slots = store.slots
  const pause = async (won: boolean): Promise<boolean> => {
    if (won) {
      stall.reached.resolve()
      await stall.resume
    }
    return won
  }
  const wrapped: ScheduleSlotStore = {
    ...slots,
    claim: async (...args) => {
      const won = await slots.claim(...args)
      return stall.after === 'claim' ? pause(won) : won
    },
    takeOver: async (...args) => {
      const won = await slots.takeOver(...args)
      return stall.after === 'takeOver' ? pause(won) : won
    },
    confirm: async (...args) => {
      await slots.confirm(...args)
      confirmed.resolve()
    },
  }
  Object.defineProperty(store, 'slots', { value: wrapped })
  return store
}

/** Tasks this manager created or ran (waiting, running or finished). */
function handled(manager: TaskManager): number {
  return manager
    .queueStats()
    .reduce((sum, queue) => sum + queue.pending + queue.running + queue.finished, 0)
}

for (const kind of storeKinds('slow')) {
  describe(`a slow claimer and its taker-over on ${kind.name}`, async () => {
    const test = (await kind.enabled()) ? it : it.skip
    afterAll(async () => {
      if (await kind.enabled()) await kind.cleanup()
    })

    for (const first of ['taker-over', 'claimer'] as const) {
      test(`the ${first} enqueues first: the slot's task runs once, the slot is confirmed`, async () => {
        const name = `slow-${first}`
        const slot = SCHEDULE_START + 60_000
        const clock = fakeClock(SCHEDULE_START)
        const runs: string[] = []
        // The claimer stalls after its claim; the taker-over, in the second order, after its
        // takeover, until the claimer has enqueued.
        const claimerStall = { after: 'claim' as const, reached: deferred(), resume: deferred() }
        const takerStall = {
          after: first === 'claimer' ? ('takeOver' as const) : ('claim' as const),
          reached: deferred(),
          resume: deferred(),
        }
        if (first === 'taker-over') takerStall.resume.resolve()
        const confirms = [deferred(), deferred()]
        const stores = [
          stalled(
            kind.open(),
            { ...claimerStall, resume: claimerStall.resume.promise },
            confirms[0]!,
          ),
          stalled(kind.open(), { ...takerStall, resume: takerStall.resume.promise }, confirms[1]!),
        ]
        const timers = [fakeTimer(), fakeTimer()]
        const [claimer, taker] = stores.map((store, i) => {
          const manager = new TaskManager({
            store,
            clock,
            timer: timers[i],
            logger: quietLogger,
          })
          manager.schedule({ every: 60 }, () => void runs.push(i === 0 ? 'claimer' : 'taker'), {
            name,
          })
          return manager
        }) as [TaskManager, TaskManager]
        try {
          await claimer.startup()
          await taker.startup()
          // The claimer wins the slot and stalls before its enqueue.
          clock.advance(60_100)
          timers[0]!.fire()
          await claimerStall.reached.promise
          // Past the lease (30 s) the taker-over's tick finds the claim stale and takes it over.
          clock.advance(31_000)
          timers[1]!.fire()
          if (first === 'taker-over') {
            await confirms[1]!.promise
            await until(() => runs.length === 1)
            claimerStall.resume.resolve()
            await confirms[0]!.promise
            // The claimer's fire has returned: had it created the task, it would be queued.
            expect(handled(claimer)).toBe(0)
          } else {
            await takerStall.reached.promise
            claimerStall.resume.resolve()
            await confirms[0]!.promise
            await until(() => runs.length === 1)
            takerStall.resume.resolve()
            await confirms[1]!.promise
            expect(handled(taker)).toBe(0)
          }
          expect(runs).toEqual([first === 'claimer' ? 'claimer' : 'taker'])
          const id = slotTaskId(name, slot)
          // Read through the manager that did not run it: the winner's write reached the store.
          const reader = first === 'claimer' ? taker : claimer
          await until(async () => (await reader.getTask(id))?.status === 'success')
          expect((await reader.getTask(id))?.tags.slot).toBe(toIso(slot))
          const window = { claimedSince: 0, claimedBefore: clock.now() + 1, limit: 10 }
          expect(await stores[0]!.slots.unconfirmed(name, window)).toEqual([])
        } finally {
          claimerStall.resume.resolve()
          takerStall.resume.resolve()
          await claimer.shutdown()
          await taker.shutdown()
        }
        expect(runs).toHaveLength(1)
      })
    }
  })
}
