/**
 * Child of the `task-kill` drill. A TaskManager on the store named by the environment registers
 * one persistent task that appends its argument to `SY_OUT` (one line, O_APPEND, so the lines
 * of two processes never interleave) after a short await: some runs are always in flight.
 *
 * - `SY_MODE=load`: enqueues tasks through `addTask` in small batches until killed (at most
 *   `SY_MAX` of them) and reports the numbers of every acknowledged batch (`ack`).
 * - `SY_MODE=recover`: only starts, so that it recovers and runs the pending work; `stop`
 *   shuts it down cleanly.
 */
import { appendFileSync } from 'node:fs'
import { TaskManager } from '../../src/tasks/index.js'
import { tellParent } from '../lib/child.js'
import { openStoreFromEnv } from '../lib/task-stores.js'

const out = process.env.SY_OUT ?? ''
const mode = process.env.SY_MODE
const max = Number(process.env.SY_MAX ?? '1000')
/** Tasks per batch of `addTask` calls and ms between batches: up to 1,000 tasks a second. */
const BATCH = 10
const PACE_MS = 10
const MAX_IN_FLIGHT = 8

const manager = new TaskManager({
  store: openStoreFromEnv(),
  // A short lease, so that the dead process's work is taken over within about a second.
  leaseSeconds: 1,
  queues: { default: { concurrency: 50 } },
  logger: { warn: () => undefined, error: (message) => console.error(message) },
})
const record = manager.task(
  { name: 'drill-record', persist: true, requeueOnInterrupt: true },
  async (n: number) => {
    await new Promise((resolve) => setTimeout(resolve, Math.random() * 5))
    appendFileSync(out, `${String(n)}\n`)
    return n
  },
)
process.on('message', (message: { type?: string }) => {
  if (message.type !== 'stop') return
  void manager.shutdown().then(() => process.exit(0))
})
await manager.startup()
tellParent({ type: 'started' })

if (mode === 'load') {
  let next = 0
  let inFlight = 0
  while (next < max) {
    // Batches overlap (up to MAX_IN_FLIGHT) so that a slow store still sees a steady load.
    if (inFlight >= MAX_IN_FLIGHT) {
      await new Promise((resolve) => setTimeout(resolve, 2))
      continue
    }
    const batch = Array.from({ length: Math.min(BATCH, max - next) }, (_, i) => next + i)
    next += batch.length
    inFlight++
    void Promise.all(
      batch.map((n) =>
        manager.addTask(record, [n]).then(
          () => n,
          () => null,
        ),
      ),
    ).then((acked) => {
      inFlight--
      tellParent({ type: 'ack', ids: acked.filter((n) => n !== null) })
    })
    await new Promise((resolve) => setTimeout(resolve, PACE_MS))
  }
}
