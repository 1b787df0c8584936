/**
 * Prometheus metrics, each case against its baseline in interleaved rounds, medians reported:
 *
 * - route-state requests with metrics on vs bare Fastify (goal ≥ 0.95×; a passing request does
 *   no metrics work; the plugin without metrics is measured beside them);
 * - task throughput (no-op tasks, add → success) with the task collectors following the manager
 *   vs the same manager without them, per CPU second of the process (goal ≥ 0.9×; wall clock
 *   shown beside it);
 * - one scrape of 2,000 routes with each of the four block reasons counted on every route
 *   (goal < 50 ms).
 */
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import Fastify from 'fastify'
import { createEngine } from '../src/index.js'
import { switchyard } from '../src/fastify/index.js'
import { TaskManager } from '../src/tasks/index.js'
import type { Decision } from '../src/core/decision.js'
import { runHttpBenchmark } from './lib/http-harness.js'
import { writeResults } from './lib/results.js'
import { median, percentile } from './lib/stats.js'

const quick = process.argv.includes('--quick')

await runHttpBenchmark(
  'metrics',
  [
    { name: 'fastify', script: 'bench/servers/bare.ts' },
    // The plugin without metrics: what metrics add is the difference from this one.
    { name: 'switchyard-memory', script: 'bench/servers/switchyard-memory.ts' },
    { name: 'switchyard-metrics', script: 'bench/servers/switchyard-metrics.ts' },
  ],
  {
    // Many short rounds: each ratio compares cases measured moments apart, and the median of
    // many of them sheds the rounds another process's burst fell into.
    rounds: quick ? 5 : 11,
    duration: 3,
    warmup: 2,
    connections: 50,
    baseline: 'fastify',
  },
)

// Task throughput with and without the task collectors, alternating which goes first. Each
// round is timed on the wall clock and on the process's CPU time: on a machine shared with
// other work the wall time mostly measures the wait for a core, while the CPU time a task costs
// does not depend on it. The goal reads the CPU figure (the median of per-round ratios of tasks
// per CPU second), the wall figure is shown beside it.
const TASKS = quick ? 20_000 : 30_000
const TASK_ROUNDS = quick ? 5 : 11
const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve))
// One engine for every round: the collectors only need one to register the route metrics.
const taskEngine = createEngine({ store: 'memory' })
// A full collection before each round, so that no round pays for the garbage of the one before.
setFlagsFromString('--expose-gc')
const collectGarbage = runInNewContext('gc') as () => void
async function taskRound(withMetrics: boolean): Promise<{ wall: number; cpu: number }> {
  collectGarbage()
  const manager = new TaskManager({ queues: { default: { concurrency: 50 } } })
  const noop = manager.task({ name: 'noop' }, async () => {})
  const collectors = withMetrics
    ? await (
        await import('../src/metrics/registry.js')
      ).createMetrics({ engine: taskEngine, taskManager: manager })
    : null
  const cpu = process.cpuUsage()
  const started = performance.now()
  for (let index = 0; index < TASKS; index++) void manager.addTask(noop, [])
  while ((manager.queueStats()[0]?.finished ?? 0) < TASKS) await tick()
  const seconds = (performance.now() - started) / 1000
  const used = process.cpuUsage(cpu)
  const cpuSeconds = (used.user + used.system) / 1e6
  if (collectors !== null) {
    const text = await collectors.scrape()
    if (
      !text.includes(
        `switchyard_tasks_finished_total{function="noop",queue="default",status="success"} ${TASKS}`,
      )
    )
      throw new Error('the task collectors did not count every task')
    collectors.close()
  }
  await manager.shutdown()
  return { wall: TASKS / seconds, cpu: TASKS / cpuSeconds }
}
const taskRates = { with: [] as number[], without: [] as number[] }
const cpuRates = { with: [] as number[], without: [] as number[] }
const wallRatios: number[] = []
const cpuRatios: number[] = []
await taskRound(true) // warm-up
await taskRound(false)
for (let round = 0; round < TASK_ROUNDS; round++) {
  const first = round % 2 === 0
  const a = await taskRound(first)
  const b = await taskRound(!first)
  const withRate = first ? a : b
  const withoutRate = first ? b : a
  taskRates.with.push(withRate.wall)
  taskRates.without.push(withoutRate.wall)
  cpuRates.with.push(withRate.cpu)
  cpuRates.without.push(withoutRate.cpu)
  wallRatios.push(withRate.wall / withoutRate.wall)
  cpuRatios.push(withRate.cpu / withoutRate.cpu)
}
await taskEngine.close()
const taskRatio = median(cpuRatios)
const wallRatio = median(wallRatios)
console.log(
  `\n# task throughput: ${TASKS.toLocaleString('en-US')} no-op tasks per round, ${cpuRatios.length} interleaved rounds`,
)
const rate = (values: number[]) => Math.round(median(values)).toLocaleString('en-US')
console.log('| case | median tasks/s (wall) | median tasks per CPU second |')
console.log('|---|---|---|')
console.log(`| without metrics | ${rate(taskRates.without)} | ${rate(cpuRates.without)} |`)
console.log(`| with task collectors | ${rate(taskRates.with)} | ${rate(cpuRates.with)} |`)
console.log(
  `median ratio with/without: ${taskRatio.toFixed(3)} per CPU second (goal ≥ 0.9), ${wallRatio.toFixed(3)} wall; per-round CPU ratios ${cpuRatios.map((ratio) => ratio.toFixed(2)).join(' ')}`,
)
console.log(
  `written ${writeResults('metrics-tasks', { tasks: TASKS, rounds: TASK_ROUNDS, ratio: taskRatio, wall_ratio: wallRatio, with_per_s: median(taskRates.with), without_per_s: median(taskRates.without), with_per_cpu_s: median(cpuRates.with), without_per_cpu_s: median(cpuRates.without) })}`,
)

const ROUTES = 2000
const block = (code: string): Decision => ({
  action: 'block',
  statusCode: code === 'RATE_LIMITED' ? 429 : 503,
  body: { error: { code, message: code } },
  headers: [],
})
const decisions: Decision[] = [
  block('MAINTENANCE_MODE'),
  block('ROUTE_DISABLED'),
  block('RATE_LIMITED'),
  { action: 'not_found' },
]
const engine = createEngine({ store: 'memory', service: 'bench' })
const app = Fastify({ logger: false })
await app.register(switchyard, { engine, metrics: { public: true } })
for (let i = 0; i < ROUTES; i++) app.get(`/scrape/r${i}/:id`, () => 'ok')
await app.ready()
// Count every reason on every route through the plugin's own observer, as blocked requests do.
const metrics = (await import('../src/metrics/registry.js')).createMetrics
const collectors = await metrics({ engine })
for (const slot of engine.registeredRoutes())
  for (const decision of decisions) collectors.routes.observe(slot, decision)
const timings: number[] = []
// CPU time beside wall time: on a loaded machine the wall time mostly measures the wait for a core.
const cpuTimings: number[] = []
let bytes = 0
const rounds = quick ? 20 : 50
for (let round = 0; round < rounds + 5; round++) {
  const started = performance.now()
  const cpu = process.cpuUsage()
  const text = await collectors.scrape()
  const elapsed = performance.now() - started
  const used = process.cpuUsage(cpu)
  if (round >= 5) cpuTimings.push((used.user + used.system) / 1000)
  bytes = text.length
  if (round >= 5) timings.push(elapsed) // the first rounds warm up
}
const scrapeMs = median(timings)
console.log(
  `\n# metrics scrape: ${ROUTES} routes × ${decisions.length} reasons (+ ${ROUTES} route_state series), ${rounds} rounds`,
)
const cpuMs = median(cpuTimings)
console.log('| median ms | p95 ms | median CPU ms | body bytes |')
console.log('|---|---|---|---|')
console.log(
  `| ${scrapeMs.toFixed(2)} | ${percentile(timings, 0.95).toFixed(2)} | ${cpuMs.toFixed(2)} | ${bytes.toLocaleString('en-US')} |`,
)
console.log(
  `written ${writeResults('metrics-scrape', { routes: ROUTES, median_ms: scrapeMs, median_cpu_ms: cpuMs, bytes })}`,
)
collectors.close()
await app.close()
