/**
 * Drill 3, three instances on one schedule. Three processes run the same `schedule({ every: 1 })`
 * on one durable store — 1,000 slots on SQLite and PostgreSQL, 300 on MariaDB and Redis — and
 * one of them is SIGKILLed at a random moment midway and started again.
 *
 * Time: a thousand one-second slots would take a quarter of an hour in real time, so the drill
 * drives one clock for all three processes over IPC (the manager's public `clock` and `timer`
 * options, see `drill/children/schedule-clock.ts`): every step it sends the next second to each
 * process, which runs its scheduler tick (and lease renewal) for that instant. The store, the
 * claims and the task runs are real; only the passing of time is compressed.
 *
 * Counted per store: slots that ran twice (goal 0) and slots in the range that never ran (goal
 * 0), and how the slots were shared between the processes. A slot's task is created once,
 * whoever fires it; but a process killed after its task started and before that start was
 * stored leaves a pending record that another instance adopts and runs again after the lease
 * (tasks run at least once). The full form kills at a random moment and may meet that window;
 * the short form kills once the last slot's task is finished in the store.
 */
import { readFileSync } from 'node:fs'
import { startChild, type DrillChild } from '../lib/child.js'
import { exactly, measured, type Drill, type DrillFigure, type DrillScale } from '../lib/drill.js'
import { slotTaskId } from '../../src/tasks/slot-task-id.js'
import {
  onEveryStore,
  openStore,
  storeEnv,
  storeRound,
  type StoreKind,
} from '../lib/task-stores.js'

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Real ms between two steps (one simulated second) of the shared clock. */
const STEP_MS = 20

/** What one store's round measured. */
export interface SlotRound {
  kind: StoreKind
  slots: number
  duplicates: number
  missed: number
  /** Numbers (1-based) of the slots never run. */
  missedSlots: number[]
  /** Slots run by each process: the two that lived throughout, the killed one, its successor. */
  share: string
  /** Slot (1-based) after which one process was killed. */
  killedAt: number
}

/** Slots each process count per store (full / short). */
function slotCount(kind: StoreKind, scale: DrillScale): number {
  if (scale === 'short') return 60
  return kind === 'sqlite' || kind === 'postgres' ? 1000 : 300
}

/** One round on one store. */
export function slotRound(kind: StoreKind, scale: DrillScale): Promise<SlotRound> {
  const slots = slotCount(kind, scale)
  return storeRound(kind, 'slots', async ({ store, out, children }) => {
    const start = Math.ceil(Date.now() / 1000) * 1000
    const env = (startMs: number) => ({
      ...storeEnv(store),
      SY_OUT: out,
      SY_START_MS: String(startMs),
    })
    // The first one alone creates the schema; the other two start on a migrated store.
    children.push(startChild('schedule-clock', env(start)))
    await children[0]!.waitFor('started')
    children.push(
      startChild('schedule-clock', env(start)),
      startChild('schedule-clock', env(start)),
    )
    await Promise.all(children.map((child) => child.waitFor('started')))
    const live = new Set(children)
    const killedAt = Math.round(slots * (0.4 + Math.random() * 0.2))
    let now = start
    // A few steps past the last slot let the last ticks land.
    for (let step = 1; step <= slots + 3; step++) {
      now = start + step * 1000
      for (const child of live) child.send({ type: 'time', now })
      if (step !== killedAt) {
        await sleep(STEP_MS)
      } else {
        if (scale === 'full') {
          // A random moment of the step: maybe mid-claim, maybe mid-run.
          await sleep(Math.random() * STEP_MS)
        } else {
          // The short form (a CI test) kills between slots, never inside the crash window: once
          // the last slot's task is finished in the store. A process killed after a task
          // started and before its end was stored leaves a record another instance adopts and
          // runs again once the lease ends (at least once); that is the full form's territory.
          const reader = openStore(store, 1)
          try {
            const id = slotTaskId('drill-slot', now)
            const limit = performance.now() + 10_000
            let nudged = performance.now()
            for (;;) {
              const status = (await reader.records.get(id))?.record.status
              if (status === 'success') break
              if (performance.now() > limit) {
                throw new Error(`slot ${now} never finished (its task: ${status ?? 'none'})`)
              }
              // A tick that came while the previous one still ran (a loaded machine) was
              // skipped: the same instant again runs it.
              if (performance.now() - nudged > 100) {
                for (const child of live) child.send({ type: 'time', now })
                nudged = performance.now()
              }
              await sleep(5)
            }
          } finally {
            await reader.close()
          }
        }
        const victim = children[2]!
        live.delete(victim)
        await victim.kill()
        const successor = startChild('schedule-clock', env(now))
        children.push(successor)
        live.add(successor)
      }
    }
    const lines = () =>
      readFileSync(out, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => {
          const [slot = '', pid = ''] = line.split(' ')
          return { slot: Number(slot), pid: Number(pid) }
        })
        .filter(({ slot }) => slot > start && slot <= start + slots * 1000)
    // The last slots' runs may still be on their way.
    const deadline = performance.now() + 10_000
    while (new Set(lines().map(({ slot }) => slot)).size < slots && performance.now() < deadline) {
      for (const child of live) child.send({ type: 'time', now })
      await sleep(50)
    }
    for (const child of live) child.send({ type: 'stop' })
    await Promise.race([Promise.all([...live].map((child) => child.exited)), sleep(10_000)])
    const fired = lines()
    const ran = new Set(fired.map(({ slot }) => slot))
    const distinct = ran.size
    const missedSlots = Array.from({ length: slots }, (_, i) => i + 1).filter(
      (n) => !ran.has(start + n * 1000),
    )
    const byPid = (child: DrillChild | undefined) =>
      fired.filter(({ pid }) => pid === child?.process.pid).length
    return {
      kind,
      slots,
      duplicates: fired.length - distinct,
      missed: slots - distinct,
      missedSlots,
      share: `${byPid(children[0])} / ${byPid(children[1])} / ${byPid(children[2])} + ${byPid(children[3])}`,
      killedAt,
    }
  })
}

/** Runs the drill on every store, one after the other. */
export function scheduleSlots(scale: DrillScale): Promise<DrillFigure[]> {
  return onEveryStore(async (kind) => {
    const round = await slotRound(kind, scale)
    return [
      measured(`${kind}: slots (one process killed after slot ${round.killedAt})`, round.slots),
      exactly(`${kind}: slots run twice`, round.duplicates, 0),
      exactly(`${kind}: slots never run`, round.missed, 0),
      ...(round.missedSlots.length === 0
        ? []
        : [
            measured(
              `${kind}: slots never run (numbers)`,
              round.missedSlots.slice(0, 10).join(', '),
            ),
          ]),
      measured(`${kind}: slots run by A / B / C (killed) + C'`, round.share),
    ]
  })
}

/** The drill. */
export const scheduleSlotsDrill: Drill = {
  name: 'schedule-slots',
  title: 'three processes, one every-second schedule, one SIGKILLed and restarted midway',
  run: scheduleSlots,
}
