/**
 * Grouped queue on Redis, side by side: persistent no-op tasks end to end through a TaskManager
 * on a Redis store, into a queue with `groupConcurrency: 1` and 100 groups (task `i` in group
 * `i % 100`), against the same queue without group options (the same concurrency, 50). Every
 * start of the grouped queue passes the store's gate (one Lua call for the starts asked for in
 * one turn) and every end releases its place, so the ratio is the price of the cross-instance
 * group limit.
 *
 * Method (PERF.md): each round runs both cases on fresh key prefixes, in alternating order;
 * 5 rounds (`--quick`: 3), medians, min–max and the median of the per-round ratios. Time runs
 * from the first add until shutdown has flushed every record; the stored outcome is checked.
 *
 * Goal: grouped ≥ 0.5× ungrouped. Usage: `npm run bench -- tasks-groups [--quick]`; writes
 * bench/results/tasks-groups.json.
 */
import { loadavg } from 'node:os'
import { TaskManager } from '../src/tasks/index.js'
import { checkSuccessRecords, redisFactory, type StoreFactory } from './lib/durable-e2e.js'
import { writeResults } from './lib/results.js'
import { median } from './lib/stats.js'
import { serverReachable } from '../support/servers.js'

const quick = process.argv.includes('--quick')
const ROUNDS = quick ? 3 : 5
const COUNT = quick ? 3_000 : 10_000
const GROUPS = 100
const REDIS_URL = process.env.SY_BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379'
const quietLogger = {
  warn: () => undefined,
  error: (fields: object | string, message?: string) => console.error(message ?? fields, fields),
}

/** Tasks per second of one case on a fresh store. */
async function run(factory: StoreFactory, grouped: boolean): Promise<number> {
  const manager = new TaskManager({
    store: factory.open(),
    queues: { work: grouped ? { concurrency: 50, groupConcurrency: 1 } : { concurrency: 50 } },
    logger: quietLogger,
  })
  const noop = manager.task({ name: 'noop', persist: true, queue: 'work' }, async () => {})
  await manager.startup()
  try {
    const started = performance.now()
    const adds: Promise<string>[] = []
    for (let i = 0; i < COUNT; i++) {
      adds.push(manager.addTask(noop, [], grouped ? { group: `g${String(i % GROUPS)}` } : {}))
    }
    await Promise.all(adds)
    const finished = () => manager.queueStats().find((q) => q.name === 'work')?.finished ?? 0
    while (finished() < COUNT) await new Promise((resolve) => setTimeout(resolve, 1))
    await manager.shutdown()
    const elapsed = performance.now() - started
    await checkSuccessRecords(factory.reopen(), COUNT)
    return (COUNT / elapsed) * 1000
  } finally {
    await factory.cleanup()
  }
}

if (!(await serverReachable(REDIS_URL))) {
  console.warn(`No Redis at ${REDIS_URL}: tasks-groups skipped.`)
} else {
  const plain: number[] = []
  const groups: number[] = []
  const ratios: number[] = []
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? [false, true] : [true, false]
    const rates = new Map<boolean, number>()
    for (const grouped of order) rates.set(grouped, await run(redisFactory(REDIS_URL), grouped))
    plain.push(rates.get(false)!)
    groups.push(rates.get(true)!)
    ratios.push(rates.get(true)! / rates.get(false)!)
  }
  const figures = {
    count: COUNT,
    groups: GROUPS,
    rounds: ROUNDS,
    load_average: loadavg(),
    ungrouped_tasks_per_s: {
      median: median(plain),
      min: Math.min(...plain),
      max: Math.max(...plain),
    },
    grouped_tasks_per_s: {
      median: median(groups),
      min: Math.min(...groups),
      max: Math.max(...groups),
    },
    ratio_grouped_to_ungrouped: median(ratios),
    goal: '≥ 0.5×',
  }
  const r = (n: number) => Math.round(n).toLocaleString('en')
  console.log(
    `\nRedis, ${COUNT.toLocaleString('en')} persistent no-op tasks, concurrency 50, ${String(ROUNDS)} rounds; load average ${loadavg()
      .map((n) => n.toFixed(2))
      .join(' ')}`,
  )
  console.log(
    `ungrouped                   ${r(median(plain))} tasks/s (${r(Math.min(...plain))}–${r(Math.max(...plain))})`,
  )
  console.log(
    `100 groups, groupConcurrency 1 ${r(median(groups))} tasks/s (${r(Math.min(...groups))}–${r(Math.max(...groups))})`,
  )
  console.log(`ratio (median of rounds)    ${median(ratios).toFixed(2)}× (goal ≥ 0.5×)`)
  console.log(`results: ${writeResults('tasks-groups', figures)}`)
}
