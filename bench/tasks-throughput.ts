/**
 * Task throughput, end to end (add → success), in one process, interleaved rounds:
 *
 * - no-op async tasks: switchyard's TaskManager (default queue with concurrency 50, and with no
 *   limit) vs `p-queue` (concurrency 50) vs BullMQ on the local Redis (worker concurrency 50,
 *   jobs added in bulk, bounded count). Goals: ≥ 1.0× p-queue, ≥ 10× BullMQ.
 * - a small CPU-bound task (fib(20)) on the thread and process executors, with the same work
 *   done inline on the event loop as a reference.
 *
 * Usage: `npm run bench -- tasks-throughput [--quick]`. Prints a table; writes
 * bench/results/tasks-throughput.json. Bounded to well under 60 s.
 *
 * This file is also the module the thread/process workers load `fib` from: its benchmark code
 * runs only outside task workers.
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import { availableParallelism } from 'node:os'
import { Queue, Worker } from 'bullmq'
import { Redis } from 'ioredis'
import PQueue from 'p-queue'
import { isTaskWorker, TaskManager } from '../src/tasks/index.js'
import { median } from './lib/stats.js'

/** The CPU-bound task of the executor cases. */
export function fib(n: number): number {
  return n < 2 ? n : fib(n - 1) + fib(n - 2)
}

const quick = process.argv.includes('--quick')
const ROUNDS = quick ? 3 : 5
const MEMORY_TASKS = quick ? 10_000 : 30_000
const BULLMQ_JOBS = quick ? 2_000 : 6_000
const BULLMQ_ROUNDS = quick ? 1 : 2
const CPU_TASKS = quick ? 100 : 300
const FIB_N = 20
const DEADLINE = Date.now() + 50_000

type CaseName =
  | 'switchyard (queue concurrency 50)'
  | 'switchyard (no queue limit)'
  | 'p-queue (concurrency 50)'
  | 'bullmq (redis, concurrency 50)'

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve))

async function switchyardRound(count: number, concurrency: number | null): Promise<number> {
  const manager = new TaskManager({ queues: { default: { concurrency } } })
  const noop = manager.task({ name: 'noop' }, async () => {})
  const started = performance.now()
  for (let index = 0; index < count; index++) void manager.addTask(noop, [])
  const stats = manager.queueStats()
  while ((stats[0]?.finished ?? 0) < count) {
    await tick()
    stats.splice(0, 1, ...manager.queueStats())
  }
  const seconds = (performance.now() - started) / 1000
  if ((await manager.metrics()).by_status.success !== count) {
    throw new Error('a benchmark task did not succeed')
  }
  await manager.shutdown()
  return count / seconds
}

async function pQueueRound(count: number): Promise<number> {
  const queue = new PQueue({ concurrency: 50 })
  const started = performance.now()
  for (let index = 0; index < count; index++) void queue.add(async () => {})
  await queue.onIdle()
  return count / ((performance.now() - started) / 1000)
}

const redis = { host: '127.0.0.1', port: 6379, maxRetriesPerRequest: null }

async function redisAvailable(): Promise<boolean> {
  const client = new Redis({ ...redis, lazyConnect: true, retryStrategy: () => null })
  client.on('error', () => {})
  try {
    await client.connect()
    await client.ping()
    return true
  } catch {
    return false
  } finally {
    client.disconnect()
  }
}

async function bullmqRound(count: number, round: number): Promise<number> {
  const name = `switchyard-bench-${process.pid}-${round}`
  const prefix = 'switchyard-bench'
  const queue = new Queue(name, { connection: redis, prefix })
  let done = 0
  let finished!: () => void
  const allDone = new Promise<void>((resolve) => (finished = resolve))
  const worker = new Worker(name, async () => {}, {
    connection: redis,
    prefix,
    concurrency: 50,
    autorun: false,
  })
  worker.on('completed', () => {
    if (++done === count) finished()
  })
  await worker.waitUntilReady()
  const started = performance.now()
  void worker.run()
  for (let offset = 0; offset < count; offset += 1000) {
    const size = Math.min(1000, count - offset)
    await queue.addBulk(
      Array.from({ length: size }, (_, index) => ({
        name: 'noop',
        data: { index: offset + index },
        opts: { removeOnComplete: true },
      })),
    )
  }
  await allDone
  const rate = count / ((performance.now() - started) / 1000)
  await worker.close()
  await queue.obliterate({ force: true })
  await queue.close()
  return rate
}

async function executorRound(kind: 'thread' | 'process', manager: TaskManager): Promise<number> {
  const task = manager.getRegisteredTask(`fib-${kind}`)
  if (task === undefined) throw new Error('fib task not registered')
  const started = performance.now()
  const ids: Promise<string>[] = []
  for (let index = 0; index < CPU_TASKS; index++) ids.push(manager.addTask(task, [FIB_N]))
  await Promise.all(ids)
  const stats = (): number => manager.queueStats().reduce((sum, queue) => sum + queue.finished, 0)
  const before = stats()
  while (stats() - before < CPU_TASKS) await tick()
  return CPU_TASKS / ((performance.now() - started) / 1000)
}

function inlineRound(): number {
  const started = performance.now()
  for (let index = 0; index < CPU_TASKS; index++) fib(FIB_N)
  return CPU_TASKS / ((performance.now() - started) / 1000)
}

async function main(): Promise<void> {
  const results = new Map<string, number[]>()
  const record = (name: string, rate: number): void => {
    results.set(name, [...(results.get(name) ?? []), rate])
  }
  const ratiosToPQueue: number[] = []
  const ratiosUnlimitedToPQueue: number[] = []
  const withBullmq = await redisAvailable()
  if (!withBullmq)
    console.warn('WARNING: Redis at 127.0.0.1:6379 is unreachable; BullMQ is skipped.')

  // Warm-up (JIT) for the in-memory cases.
  await switchyardRound(5_000, 50)
  await pQueueRound(5_000)

  const memoryCases: CaseName[] = [
    'switchyard (queue concurrency 50)',
    'p-queue (concurrency 50)',
    'switchyard (no queue limit)',
  ]
  for (let round = 0; round < ROUNDS && Date.now() < DEADLINE; round++) {
    const order = memoryCases.map(
      (_, index) => memoryCases[(index + round) % memoryCases.length] as CaseName,
    )
    const rates: Partial<Record<CaseName, number>> = {}
    for (const name of order) {
      const rate =
        name === 'p-queue (concurrency 50)'
          ? await pQueueRound(MEMORY_TASKS)
          : await switchyardRound(MEMORY_TASKS, name === 'switchyard (no queue limit)' ? null : 50)
      rates[name] = rate
      record(name, rate)
    }
    const pq = rates['p-queue (concurrency 50)'] as number
    ratiosToPQueue.push((rates['switchyard (queue concurrency 50)'] as number) / pq)
    ratiosUnlimitedToPQueue.push((rates['switchyard (no queue limit)'] as number) / pq)
    if (withBullmq && round < BULLMQ_ROUNDS && Date.now() < DEADLINE - 15_000) {
      record('bullmq (redis, concurrency 50)', await bullmqRound(BULLMQ_JOBS, round))
    }
  }

  // Executors on a CPU-bound task.
  const size = Math.min(2, availableParallelism())
  const manager = new TaskManager({ maxSyncThreads: size, maxProcessWorkers: size })
  manager.task(
    { name: 'fib-thread', executor: 'thread', module: import.meta.url, exportName: 'fib' },
    fib,
  )
  manager.task(
    { name: 'fib-process', executor: 'process', module: import.meta.url, exportName: 'fib' },
    fib,
  )
  await executorRound('thread', manager) // warm-up: starts the workers
  await executorRound('process', manager)
  for (let round = 0; round < 3 && Date.now() < DEADLINE; round++) {
    record(
      `thread executor (${size} threads), fib(${FIB_N})`,
      await executorRound('thread', manager),
    )
    record(
      `process executor (${size} processes), fib(${FIB_N})`,
      await executorRound('process', manager),
    )
    record(`inline on the event loop, fib(${FIB_N})`, inlineRound())
  }
  await manager.shutdown()

  const table = [...results].map(([name, rates]) => ({
    case: name,
    'median tasks/s': Math.round(median(rates)),
    'min–max': `${Math.round(Math.min(...rates))}–${Math.round(Math.max(...rates))}`,
    rounds: rates.length,
  }))
  console.log('\nTask throughput (end to end, add → success)')
  console.table(table)
  const pQueue = median(ratiosToPQueue)
  const bullRates = results.get('bullmq (redis, concurrency 50)')
  const switchyard = median(results.get('switchyard (queue concurrency 50)') ?? [0])
  const vsBull = bullRates === undefined ? null : switchyard / median(bullRates)
  console.log(
    `switchyard / p-queue (median of per-round ratios): ${pQueue.toFixed(2)}× (goal ≥ 1.0×); no queue limit: ${median(ratiosUnlimitedToPQueue).toFixed(2)}×`,
  )
  console.log(
    vsBull === null
      ? 'switchyard / BullMQ: skipped (no Redis)'
      : `switchyard / BullMQ (medians): ${vsBull.toFixed(1)}× (goal ≥ 10×)`,
  )
  mkdirSync('bench/results', { recursive: true })
  writeFileSync(
    'bench/results/tasks-throughput.json',
    JSON.stringify(
      {
        date: new Date().toISOString(),
        node: process.version,
        tasks_per_round: { memory: MEMORY_TASKS, bullmq: BULLMQ_JOBS, cpu: CPU_TASKS },
        cases: table,
        ratio_to_p_queue: { median: pQueue, per_round: ratiosToPQueue, goal: 1.0 },
        ratio_unlimited_to_p_queue: {
          median: median(ratiosUnlimitedToPQueue),
          per_round: ratiosUnlimitedToPQueue,
        },
        ratio_to_bullmq: { median: vsBull, goal: 10 },
      },
      null,
      2,
    ) + '\n',
  )
}

if (!isTaskWorker()) await main()
