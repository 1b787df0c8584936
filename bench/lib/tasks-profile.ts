/**
 * A profiling aid, not a benchmark: runs a fixed number of no-op async tasks through a
 * TaskManager (queue concurrency 50) or p-queue (concurrency 50) the way `tasks-throughput.ts`
 * does, between two `callgrind_control` calls, so that instructions per task can be counted.
 *
 * Usage (compiled first with `tsc -p tsconfig.bench.json`):
 *
 *     valgrind --tool=callgrind --smc-check=all-non-file --separate-threads=yes \
 *       node --predictable --min-semi-space-size=16 --max-semi-space-size=16 \
 *       bench/.out/bench/lib/tasks-profile.js switchyard 50000
 *     callgrind_annotate --inclusive=yes callgrind.out.<pid>.1-01
 *
 * `switchyard`, `switchyard-metrics` (the same with the Prometheus task collectors following the
 * manager) or `p-queue`, then the task count. The `.1-01` file is the main thread's count
 * between the two calls; its Ir divided by the task count is the cost per task (with
 * `--predictable` the garbage collector runs on the main thread, so it is included, and runs
 * repeat to ±0.5 %). `--rounds=n` repeats the measured round; `--no-callgrind` runs without
 * valgrind and prints the wall time (e.g. under `--cpu-prof` to see where the time goes).
 */
import { execFile } from 'node:child_process'
import PQueue from 'p-queue'
import { createEngine } from '../../src/index.js'
import { createMetrics } from '../../src/metrics/registry.js'
import { TaskManager } from '../../src/tasks/index.js'

const which = process.argv[2] ?? 'switchyard'
const count = Number(process.argv[3] ?? 50_000)
const underCallgrind = !process.argv.includes('--no-callgrind')
const roundsArg = process.argv.find((arg) => arg.startsWith('--rounds='))
const rounds = roundsArg === undefined ? 1 : Number(roundsArg.slice('--rounds='.length))

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve))

async function switchyardRound(tasks: number, withMetrics = false): Promise<void> {
  const manager = new TaskManager({ queues: { default: { concurrency: 50 } } })
  const noop = manager.task({ name: 'noop' }, async () => {})
  const collectors = withMetrics
    ? await createMetrics({ engine: createEngine({ store: 'memory' }), taskManager: manager })
    : null
  for (let index = 0; index < tasks; index++) void manager.addTask(noop, [])
  const stats = manager.queueStats()
  while ((stats[0]?.finished ?? 0) < tasks) {
    await tick()
    stats.splice(0, 1, ...manager.queueStats())
  }
  if ((await manager.metrics()).by_status.success !== tasks) {
    throw new Error('a task did not succeed')
  }
  collectors?.close()
  await manager.shutdown()
}

async function pQueueRound(tasks: number): Promise<void> {
  const queue = new PQueue({ concurrency: 50 })
  for (let index = 0; index < tasks; index++) void queue.add(async () => {})
  await queue.onIdle()
}

const round =
  which === 'p-queue'
    ? pQueueRound
    : which === 'switchyard-metrics'
      ? (tasks: number) => switchyardRound(tasks, true)
      : switchyardRound

/** Runs `callgrind_control <flag> <pid>` without blocking the event loop. */
function control(flag: string): Promise<void> {
  if (!underCallgrind) return Promise.resolve()
  return new Promise((resolve, reject) => {
    execFile('callgrind_control', [flag, String(process.pid)], (error) => {
      if (error === null) resolve()
      else reject(new Error(`callgrind_control ${flag} failed`, { cause: error }))
    })
  })
}

// Warm both up in every mode, as the benchmark does in its one process: the first task run
// installs the AsyncLocalStorage of the task context, whose promise hooks (Node 20) then cost
// every promise of the process, p-queue's included.
for (let warm = 0; warm < 3; warm++) {
  await switchyardRound(10_000)
  await switchyardRound(10_000, true)
  await pQueueRound(10_000)
}
await control('-z')
const started = performance.now()
for (let index = 0; index < rounds; index++) await round(count)
const ms = performance.now() - started
await control('-d')
console.log(`${which}: ${rounds} × ${count} tasks in ${ms.toFixed(0)} ms`)
