/**
 * Durable task-store benchmark (issue 8), bounded to < 60 s:
 *
 * 1. Durable enqueue throughput: pending records written in batches of 500 through
 *    `enqueuePending` (the write `addTask` makes for persistent tasks) to SQLite (WAL,
 *    synchronous NORMAL), PostgreSQL and Redis, against the named peer — raw better-sqlite3
 *    inserting the same rows into the same table and indexes with one prepared statement per
 *    row inside one transaction per batch (PERF.md's anchor, plus our indexes). Interleaved rounds, medians, ratio to the peer.
 *    Goal: SQLite ≥ 20k tasks/s (PERF.md: ≥ 40k).
 * 2. List-page latency with 1,000,000 records in SQLite: 200 `listTasks` queries (newest first,
 *    with a mix of status / func_name / queue / since filters, pages 1–5, 50 per page, with the
 *    total count), p50/p95/max. Goal: p95 < 20 ms. Process RSS is reported before and after to
 *    show memory does not follow history size.
 * 3. End to end through the TaskManager: persistent no-op tasks (`persist: true`) added in a loop
 *    to a manager on a fresh SQLite file (default queue, concurrency 50) until every one reaches
 *    `success`, tasks/s; also until shutdown has flushed every record to the file (checked by
 *    counting `success` rows). Peer: the same manager with no store (in-memory records),
 *    interleaved rounds, medians, ratio. Bounded to ~20 s; the whole file stays < 90 s.
 *
 * Usage: `npm run bench -- tasks-store [--quick] [--e2e-only]`. Prints tables; writes
 * bench/results/tasks-store.json (`--e2e-only` writes bench/results/tasks-store-e2e.json).
 */
import { randomUUID } from 'node:crypto'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { Redis } from 'ioredis'
import pg from 'pg'
import { TaskManager } from '../src/tasks/index.js'
import type { StoredTask } from '../src/tasks/record.js'
import { TASK_TABLES } from '../src/tasks/stores/sql/schema.js'
import { benchTask, FUNCS, fillSqliteHistory, median, percentile, T0 } from './lib/task-history.js'
import {
  postgresStore,
  redisStore,
  sqliteStore,
  type DurableTaskStore,
} from '../src/tasks/stores/index.js'

const quick = process.argv.includes('--quick')
const e2eOnly = process.argv.includes('--e2e-only')
const ROUNDS = quick ? 2 : 3
const TASKS_PER_ROUND = quick ? 10_000 : 20_000
const BATCH = 500
const RECORDS = quick ? 200_000 : 1_000_000
const PAGE_QUERIES = 200
const E2E_ROUNDS = quick ? 3 : 5
const E2E_TASKS = quick ? 5_000 : 20_000
const E2E_BUDGET_MS = 20_000
const DEADLINE = Date.now() + 55_000
const PG_URL = process.env.SY_BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
const REDIS_URL = process.env.SY_BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379'

const dir = mkdtempSync(join(tmpdir(), 'sy-bench-store-'))
const task = benchTask

interface EnqueueCase {
  name: string
  run: (tasks: StoredTask[]) => Promise<void>
  close: () => Promise<void>
}

async function reachable(url: string): Promise<boolean> {
  const { createConnection } = await import('node:net')
  const { hostname, port } = new URL(url)
  return new Promise((resolve) => {
    const socket = createConnection({ host: hostname, port: Number(port) })
    socket.setTimeout(1000, () => {
      socket.destroy()
      resolve(false)
    })
    socket.once('connect', () => {
      socket.destroy()
      resolve(true)
    })
    socket.once('error', () => resolve(false))
  })
}

function storeCase(
  name: string,
  store: DurableTaskStore,
  cleanup: () => Promise<void>,
): EnqueueCase {
  return {
    name,
    run: async (tasks) => {
      for (let i = 0; i < tasks.length; i += BATCH) {
        await store.pending.enqueue(tasks.slice(i, i + BATCH), {
          owner: 'bench',
          leaseUntil: Date.now() + 60_000,
        })
      }
    },
    close: async () => {
      await store.close()
      await cleanup()
    },
  }
}

function rawSqliteCase(): EnqueueCase {
  const db = new Database(join(dir, 'raw.db'))
  db.pragma('journal_mode = WAL')
  db.pragma('synchronous = NORMAL')
  db.exec(
    'create table tasks (task_id text primary key, func_name text, status text, queue text, created_ms integer, body text)',
  )
  const insert = db.prepare('insert into tasks values (?, ?, ?, ?, ?, ?)')
  const batch = db.transaction((rows: StoredTask[]) => {
    for (const row of rows) {
      const r = row.record
      insert.run(
        r.task_id,
        r.func_name,
        r.status,
        r.queue,
        Date.parse(r.created_at),
        JSON.stringify(row),
      )
    }
  })
  return {
    name: 'peer: raw better-sqlite3 (same rows+schema)',
    run: (tasks) => {
      for (let i = 0; i < tasks.length; i += BATCH) batch(tasks.slice(i, i + BATCH))
      return Promise.resolve()
    },
    close: () => {
      db.close()
      return Promise.resolve()
    },
  }
}

async function enqueueBench(): Promise<
  Record<string, { median: number; rounds: number[]; ratio: number }>
> {
  const cases: EnqueueCase[] = [
    rawSqliteCase(),
    storeCase('switchyard SQLite', sqliteStore(join(dir, 'enqueue.db')), () => Promise.resolve()),
  ]
  if (await reachable(PG_URL)) {
    const prefix = `bench_${randomUUID().slice(0, 8)}_`
    cases.push(
      storeCase(
        'switchyard PostgreSQL',
        postgresStore({ connectionString: PG_URL }, { tablePrefix: prefix }),
        async () => {
          const client = new pg.Client({ connectionString: PG_URL })
          await client.connect()
          for (const table of TASK_TABLES) {
            await client.query(`drop table if exists "${prefix}${table}"`)
          }
          await client.end()
        },
      ),
    )
  } else console.warn('PostgreSQL unreachable: skipping its case')
  if (await reachable(REDIS_URL)) {
    const prefix = `sy-bench:${randomUUID().slice(0, 8)}:`
    cases.push(
      storeCase('switchyard Redis', redisStore({ url: REDIS_URL }, { prefix }), async () => {
        const client = new Redis(REDIS_URL)
        let cursor = '0'
        do {
          const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000)
          cursor = next
          if (keys.length > 0) await client.del(...keys)
        } while (cursor !== '0')
        client.disconnect()
      }),
    )
  } else console.warn('Redis unreachable: skipping its case')
  // Warm up (schema, statement caches, connections).
  for (const c of cases) await c.run(Array.from({ length: BATCH }, (_, i) => task(i)))
  const results = new Map<string, number[]>(cases.map((c) => [c.name, []]))
  for (let round = 0; round < ROUNDS && Date.now() < DEADLINE - 35_000; round++) {
    const order = cases.map((_, i) => cases[(i + round) % cases.length]!)
    for (const c of order) {
      const tasks = Array.from({ length: TASKS_PER_ROUND }, (_, i) => task(i))
      const started = performance.now()
      await c.run(tasks)
      results.get(c.name)!.push(TASKS_PER_ROUND / ((performance.now() - started) / 1000))
    }
  }
  for (const c of cases) await c.close()
  const peer = median(results.get(cases[0]!.name)!)
  const summary: Record<string, { median: number; rounds: number[]; ratio: number }> = {}
  console.log('\nDurable enqueue (pending records, batches of 500), tasks/s')
  console.log(
    'case'.padEnd(50),
    'median'.padStart(10),
    'min–max'.padStart(20),
    'vs peer'.padStart(9),
  )
  for (const [name, rounds] of results) {
    const m = median(rounds)
    summary[name] = { median: Math.round(m), rounds: rounds.map(Math.round), ratio: m / peer }
    console.log(
      name.padEnd(50),
      String(Math.round(m)).padStart(10),
      `${Math.round(Math.min(...rounds))}–${Math.round(Math.max(...rounds))}`.padStart(20),
      `${(m / peer).toFixed(2)}×`.padStart(9),
    )
  }
  return summary
}

async function listBench(): Promise<Record<string, number>> {
  const path = join(dir, 'list.db')
  const store = sqliteStore(path)
  await store.init()
  const rssBefore = process.memoryUsage().rss
  // Build the history fast: raw batched inserts in the store's schema.
  const buildSeconds = fillSqliteHistory(path, RECORDS)
  const windows = [undefined, T0 + RECORDS * 10 - 3_600_000, T0 + RECORDS * 10 - 6 * 3_600_000]
  const measure = async (target: DurableTaskStore): Promise<number[]> => {
    const times: number[] = []
    for (let q = 0; q < PAGE_QUERIES; q++) {
      const kind = q % 5
      const started = performance.now()
      await target.records.list({
        page: 1 + (q % 5),
        perPage: 50,
        status: kind === 1 ? 'failed' : undefined,
        funcName: kind === 2 ? FUNCS[q % FUNCS.length] : undefined,
        queue: kind === 3 ? 'emails' : undefined,
        since: kind === 4 ? windows[q % windows.length] : undefined,
      })
      times.push(performance.now() - started)
    }
    return times
  }
  const times = await measure(store)
  await store.close()
  // The same queries counting every time (no total cache): the cost of a cold dashboard view.
  const uncached = sqliteStore(path, { totalCacheMs: 0 })
  const coldTimes = await measure(uncached)
  await uncached.close()
  const rssAfter = process.memoryUsage().rss
  const result = {
    records: RECORDS,
    build_seconds: Math.round(buildSeconds * 10) / 10,
    p50_ms: Math.round(percentile(times, 0.5) * 100) / 100,
    p95_ms: Math.round(percentile(times, 0.95) * 100) / 100,
    max_ms: Math.round(Math.max(...times) * 100) / 100,
    uncached_total_p50_ms: Math.round(percentile(coldTimes, 0.5) * 100) / 100,
    uncached_total_p95_ms: Math.round(percentile(coldTimes, 0.95) * 100) / 100,
    rss_before_mb: Math.round(rssBefore / 1e6),
    rss_after_mb: Math.round(rssAfter / 1e6),
  }
  console.log(
    `\nList page (50 per page, with total; totals cached 5 s per filter) over ${RECORDS.toLocaleString()} SQLite records, ${PAGE_QUERIES} queries`,
  )
  console.log(result)
  return result
}

const quietLogger = { warn: () => undefined, error: (message: string) => console.error(message) }
const nextTick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve))

interface ManagerRound {
  /** Added → every task `success` in the manager. */
  successPerSecond: number
  /** Added → shutdown finished (every record flushed to the store); null without a store. */
  flushedPerSecond: number | null
}

/** One round: `count` no-op tasks through a fresh manager, durable on SQLite or in memory. */
async function managerRound(count: number, round: number, durable: boolean): Promise<ManagerRound> {
  const path = join(dir, `e2e-${String(round)}.db`)
  const manager = new TaskManager({
    store: durable ? path : undefined,
    queues: { default: { concurrency: 50 } },
    logger: quietLogger,
  })
  const noop = manager.task({ name: 'noop', persist: durable }, async () => {})
  await manager.startup()
  const started = performance.now()
  const adds: Promise<string>[] = []
  for (let index = 0; index < count; index++) adds.push(manager.addTask(noop, []))
  await Promise.all(adds)
  // (A manager on a durable store keeps only its newest finished records in memory: count
  // finished tasks in the queue stats, and check the stored outcome after shutdown.)
  while ((manager.queueStats()[0]?.finished ?? 0) < count) await nextTick()
  if (!durable && (await manager.metrics()).by_status.success !== count) {
    throw new Error('a benchmark task did not succeed')
  }
  const successSeconds = (performance.now() - started) / 1000
  await manager.shutdown()
  const flushedSeconds = (performance.now() - started) / 1000
  if (!durable) return { successPerSecond: count / successSeconds, flushedPerSecond: null }
  const check = sqliteStore(path)
  try {
    const page = await check.records.list({ status: 'success', page: 1, perPage: 1 })
    if (page.total !== count) {
      throw new Error(`expected ${String(count)} success rows, found ${String(page.total)}`)
    }
  } finally {
    await check.close()
  }
  return { successPerSecond: count / successSeconds, flushedPerSecond: count / flushedSeconds }
}

async function managerBench(): Promise<Record<string, number | number[]>> {
  const deadline = Date.now() + E2E_BUDGET_MS
  // Warm up both paths (module load, schema, JIT).
  await managerRound(500, -1, true)
  await managerRound(500, -2, false)
  const durable: ManagerRound[] = []
  const memory: ManagerRound[] = []
  for (let round = 0; round < E2E_ROUNDS && Date.now() < deadline; round++) {
    if (round % 2 === 0) {
      durable.push(await managerRound(E2E_TASKS, round, true))
      memory.push(await managerRound(E2E_TASKS, round, false))
    } else {
      memory.push(await managerRound(E2E_TASKS, round, false))
      durable.push(await managerRound(E2E_TASKS, round, true))
    }
  }
  const durableSuccess = durable.map((r) => r.successPerSecond)
  const durableFlushed = durable.map((r) => r.flushedPerSecond ?? Number.NaN)
  const memorySuccess = memory.map((r) => r.successPerSecond)
  const peer = median(memorySuccess)
  const result = {
    tasks_per_round: E2E_TASKS,
    sqlite_success_per_s: Math.round(median(durableSuccess)),
    sqlite_success_rounds: durableSuccess.map(Math.round),
    sqlite_flushed_per_s: Math.round(median(durableFlushed)),
    sqlite_flushed_rounds: durableFlushed.map(Math.round),
    memory_success_per_s: Math.round(peer),
    memory_success_rounds: memorySuccess.map(Math.round),
    ratio_sqlite_to_memory: Math.round((median(durableSuccess) / peer) * 100) / 100,
  }
  console.log(
    `\nTaskManager end to end: ${E2E_TASKS.toLocaleString()} no-op tasks added in a loop → success (queue concurrency 50), tasks/s`,
  )
  console.log(
    'case'.padEnd(50),
    'median'.padStart(10),
    'min–max'.padStart(20),
    'vs peer'.padStart(9),
  )
  const rows: [string, number[]][] = [
    ['peer: TaskManager, no store (memory)', memorySuccess],
    ['TaskManager on SQLite, persist: true', durableSuccess],
    ['  …until shutdown flushed every record', durableFlushed],
  ]
  for (const [name, rounds] of rows) {
    const m = median(rounds)
    console.log(
      name.padEnd(50),
      String(Math.round(m)).padStart(10),
      `${String(Math.round(Math.min(...rounds)))}–${String(Math.round(Math.max(...rounds)))}`.padStart(
        20,
      ),
      `${(m / peer).toFixed(2)}×`.padStart(9),
    )
  }
  return result
}

try {
  if (e2eOnly) {
    const e2e = await managerBench()
    mkdirSync('bench/results', { recursive: true })
    writeFileSync('bench/results/tasks-store-e2e.json', JSON.stringify({ e2e, quick }, null, 2))
    process.exit(0)
  }
  const enqueue = await enqueueBench()
  const list = await listBench()
  const e2e = await managerBench()
  mkdirSync('bench/results', { recursive: true })
  writeFileSync(
    'bench/results/tasks-store.json',
    JSON.stringify({ enqueue, list, e2e, quick }, null, 2),
  )
  const sqlite = enqueue['switchyard SQLite']?.median ?? 0
  console.log(
    `\nGoals: SQLite enqueue ≥ 20,000/s → ${sqlite >= 20_000 ? 'met' : 'NOT met'}; list p95 < 20 ms → ${list.p95_ms! < 20 ? 'met' : 'NOT met'}`,
  )
} finally {
  rmSync(dir, { recursive: true, force: true })
}
