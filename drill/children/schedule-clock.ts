/**
 * Child of the `schedule-slots` drill: a TaskManager on the store named by the environment runs
 * `schedule({ every: 1 })` on a clock the drill drives. The manager's public `clock` and `timer`
 * options are fed from the drill's `time` messages (the same instant to every process), so a
 * thousand one-second slots pass in a few seconds of real time while the store claims, leases
 * and writes stay real. A `time` message repeating the current instant runs every callback
 * again (a nudge). Each run appends `<slot ms> <pid>` to `SY_OUT` (O_APPEND).
 *
 * Env: the store (`drill/lib/task-stores.ts`), `SY_OUT`, `SY_START_MS` (the clock's first
 * instant). Messages: `time` `{ now }`, `stop`.
 */
import { appendFileSync } from 'node:fs'
import {
  getTaskContext,
  systemTaskClock,
  TaskManager,
  type LoopTimer,
  type TaskClock,
} from '../../src/tasks/index.js'
import { tellParent } from '../lib/child.js'
import { openStoreFromEnv } from '../lib/task-stores.js'

const out = process.env.SY_OUT ?? ''
let now = Number(process.env.SY_START_MS)

/** The drill's clock: waits (retry backoff) stay real, "now" is the drill's. */
const clock: TaskClock = {
  now: () => now,
  sleep: (ms, signal) => systemTaskClock.sleep(ms, signal),
}

interface Interval {
  callback: () => void
  ms: number
  next: number
}
const intervals = new Map<number, Interval>()
let nextHandle = 1
/** Repeating callbacks due on the drill's clock: each runs once per `time` that reaches it. */
const timer: LoopTimer = {
  setInterval(callback, ms) {
    const handle = nextHandle++
    intervals.set(handle, { callback, ms, next: now + ms })
    return handle
  },
  clearInterval(handle) {
    intervals.delete(handle as number)
  },
}

const manager = new TaskManager({
  store: openStoreFromEnv(),
  clock,
  timer,
  logger: { warn: () => undefined, error: (message) => console.error(message) },
})
manager.schedule(
  { every: 1 },
  () => {
    const slot = getTaskContext()?.tags.slot ?? 'missing'
    appendFileSync(out, `${String(Date.parse(slot))} ${String(process.pid)}\n`)
  },
  { name: 'drill-slot' },
)
process.on('message', (message: { type?: string; now?: number }) => {
  if (message.type === 'time' && typeof message.now === 'number') {
    // The same instant again is a nudge: every callback runs once more. A scheduler tick that
    // came while the previous one still ran was skipped (ticks never overlap), and on this
    // clock nothing else would run it until the next instant.
    const nudge = message.now === now
    now = message.now
    for (const interval of [...intervals.values()]) {
      if (interval.next > now && !nudge) continue
      interval.next = now + interval.ms
      interval.callback()
    }
  } else if (message.type === 'stop') {
    void manager.shutdown().then(() => process.exit(0))
  }
})
await manager.startup()
tellParent({ type: 'started' })
