/**
 * Durable task-store benchmark, a few minutes at most:
 *
 * 1. Durable enqueue throughput: pending records written in batches of 500 through
 *    `enqueuePending` (the write `addTask` makes for persistent tasks) to SQLite (WAL,
 *    synchronous NORMAL), PostgreSQL and Redis, against the peers — two raw better-sqlite3
 *    writers, one prepared statement per row inside one transaction per batch, same pragmas:
 *    the anchor the SQLite ratio is given against (a six-column table, primary key only: the
 *    task's id, function, status, queue, creation time and JSON body, no secondary index, no
 *    tag rows), and the store's own rows (its migrated table with the five indexes, the full
 *    row by the same upsert, the tag rows, one change-feed row per batch: what the store's
 *    ratio to it leaves is the store's own work, reported as `ratio_to_same_rows`); pg-boss 10.x
 *    `insert` of the same 500 jobs per call on the same PostgreSQL, with two references: the
 *    store's own statement for a batch replayed with nothing of the store around it (the
 *    database's share), and the same into tables without the five list indexes; BullMQ
 *    `addBulk` of 500 on the same Redis. Interleaved rounds (order rotated), medians, ratio to
 *    raw SQLite, and the median of the per-round ratios PostgreSQL / pg-boss and Redis / BullMQ.
 *    Goals (bench/README.md): store level ≥ 0.8× the raw writer of the same rows on SQLite;
 *    PostgreSQL ≥ 1× pg-boss; Redis ≥ 2× BullMQ (end to end: PostgreSQL ≥ 5× pg-boss, Redis ≥ 4×
 *    BullMQ).
 * 2. Durable end to end against the same peers, same N: switchyard's TaskManager on
 *    PostgreSQL / Redis (persistent no-op tasks added in a loop, concurrency 50, until shutdown
 *    has flushed every `success` record) vs pg-boss (`insert` of 500, 8 `work` loops fetching
 *    500, until every job is stored as completed) and BullMQ (`addBulk` of 500, a worker at
 *    concurrency 50, until every job is completed). Interleaved rounds, per-round ratios.
 * 3. List-page latency with 1,000,000 records in SQLite: 200 `listTasks` queries (newest first,
 *    with a mix of status / func_name / queue / since filters, pages 1–5, 50 per page, with the
 *    total count), p50/p95/max. Goal: p95 < 20 ms. Process RSS is reported before and after to
 *    show memory does not follow history size.
 * 4. End to end through the TaskManager: persistent no-op tasks (`persist: true`) added in a loop
 *    to a manager on a fresh SQLite file (default queue, concurrency 50) until every one reaches
 *    `success`, tasks/s; also until shutdown has flushed every record to the file (checked by
 *    counting `success` rows). Peer: the same manager with no store (in-memory records),
 *    interleaved rounds, medians, ratio. Bounded to ~20 s.
 *
 * PostgreSQL and Redis cases are skipped when their server is unreachable. Every case works in
 * tables, schemas or key prefixes of its own, removed at the end.
 *
 * Usage: `npm run bench -- tasks-store [--quick] [--e2e-only] [--only=sqlite|redis]`. Prints
 * tables; writes bench/results/tasks-store.json (`--e2e-only` writes
 * bench/results/tasks-store-e2e.json, `--only=sqlite` — the SQLite enqueue cases and the SQLite
 * end to end alone — bench/results/tasks-store-sqlite.json, `--only=redis` — the Redis store
 * against BullMQ, enqueue and end to end — bench/results/tasks-store-redis.json).
 */
import { randomUUID } from 'node:crypto'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { Redis } from 'ioredis'
import { TaskManager } from '../src/tasks/index.js'
import type { StoredTask } from '../src/tasks/record.js'
import { deleteRedisKeys, serverReachable } from '../support/servers.js'
import { startBullmq } from './lib/bullmq-peer.js'
import {
  checkSuccessRecords,
  dropPostgresTables,
  managerEndToEnd,
  postgresFactory,
  redisFactory,
} from './lib/durable-e2e.js'
import { startPgBoss } from './lib/pg-boss-peer.js'
import { recordPgWrite } from './lib/pg-replay.js'
import { median, percentile } from './lib/stats.js'
import { benchTask, FUNCS, fillSqliteHistory, T0 } from './lib/task-history.js'
import { openMigratedRaw, openRawSqlite, pkOnlyWriter, storeRowsWriter } from './lib/raw-sqlite.js'
import {
  postgresStore,
  redisStore,
  sqliteStore,
  type DurableTaskStore,
} from '../src/tasks/stores/index.js'

const quick = process.argv.includes('--quick')
const e2eOnly = process.argv.includes('--e2e-only')
/**
 * `--only=sqlite`: the SQLite cases alone, enqueue against both raw writers, then end to end;
 * `--only=redis`: the Redis store and BullMQ alone, enqueue then end to end
 * (`npm run bench` hands on only the `--` arguments).
 */
const sqliteOnly = process.argv.includes('--only=sqlite')
const redisOnly = process.argv.includes('--only=redis')
const RAW_SCHEMA = 'peer: raw better-sqlite3, store schema'
const ROUNDS = quick ? 3 : 5
const TASKS_PER_ROUND = quick ? 10_000 : 20_000
const BATCH = 500
const RECORDS = quick ? 200_000 : 1_000_000
const PAGE_QUERIES = 200
const E2E_ROUNDS = quick ? 3 : 5
const E2E_TASKS = quick ? 5_000 : 20_000
const E2E_BUDGET_MS = 20_000
/** Enqueue rounds stop starting after this long (the peers make a round ~5 s). */
const ENQUEUE_BUDGET_MS = 40_000
const PG_URL = process.env.SY_BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
const REDIS_URL = process.env.SY_BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379'
const PG_REPLAY = "raw: the store's PostgreSQL statement, replayed"
const PG_REPLAY_NO_INDEXES = 'raw: the same, without the five list indexes'
const PG_BOSS = 'peer: pg-boss insert'
const PG_BOSS_E2E = 'peer: pg-boss insert + work'
const BULLMQ = 'peer: BullMQ addBulk'
const BULLMQ_E2E = 'peer: BullMQ addBulk + Worker'
/** Each store case against its queue peer: [ours, enqueue peer, end-to-end peer, result key]. */
const PAIRS = [
  ['switchyard PostgreSQL', PG_BOSS, PG_BOSS_E2E, 'postgres_vs_pg_boss'],
  ['switchyard Redis', BULLMQ, BULLMQ_E2E, 'redis_vs_bullmq'],
] as const
const PEER_ROUNDS = quick ? 3 : 5
const PEER_TASKS = quick ? 5_000 : 20_000

const dir = mkdtempSync(join(tmpdir(), 'sy-bench-store-'))
const task = benchTask

interface EnqueueCase {
  name: string
  run: (tasks: StoredTask[]) => Promise<void>
  close: () => Promise<void>
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

/**
 * Raw better-sqlite3 writing exactly what the store writes for a pending batch, into a file the
 * store itself migrated ({@link storeRowsWriter}). What is left between it and the store is the
 * store's own work.
 */
async function rawStoreSchemaCase(): Promise<EnqueueCase> {
  const db = await openMigratedRaw(join(dir, 'raw-schema.db'))
  const batch = storeRowsWriter(db)
  return {
    name: RAW_SCHEMA,
    run: (tasks) => {
      for (let i = 0; i < tasks.length; i += BATCH)
        batch(tasks.slice(i, i + BATCH), Date.now() + 60_000)
      return Promise.resolve()
    },
    close: () => {
      db.close()
      return Promise.resolve()
    },
  }
}

function rawSqliteCase(): EnqueueCase {
  const db = openRawSqlite(join(dir, 'raw.db'))
  const batch = pkOnlyWriter(db)
  return {
    name: 'peer: raw better-sqlite3 (6 columns, primary key only)',
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

type EnqueueSummary = Record<
  string,
  {
    median: number
    rounds: number[]
    ratio: number
    ratio_to_same_rows?: number
    /** CPU of this process per task (the store's or the peer's client side), µs, median. */
    client_cpu_us: number
    /** CPU of the Redis server per task, µs, median (Redis cases). */
    redis_cpu_us?: number
  }
>

/**
 * Reads the Redis server's own CPU time (`INFO cpu`, user + system, in µs), so that an
 * enqueue's cost can be split between this process and Redis.
 */
function redisCpuReader(url: string): { cpu(): Promise<number>; close(): Promise<void> } {
  let client: Redis | null = null
  return {
    async cpu() {
      client ??= new Redis(url)
      const info = await client.info('cpu')
      const seconds = (field: string) =>
        Number(new RegExp(`${field}:([\\d.]+)`).exec(info)?.[1] ?? 0)
      return (seconds('used_cpu_user') + seconds('used_cpu_sys')) * 1e6
    },
    async close() {
      await client?.quit()
    },
  }
}

/** The median over rounds of `ours / peer` (rounds where both ran), or undefined. */
function pairedRatio(ours: number[] | undefined, peer: number[] | undefined): number | undefined {
  if (ours === undefined || peer === undefined || ours.length === 0) return undefined
  const ratios = ours.slice(0, peer.length).map((value, index) => value / peer[index]!)
  return ratios.length === 0 ? undefined : median(ratios)
}

async function enqueueBench(): Promise<{
  cases: EnqueueSummary
  ratios: Record<string, number>
}> {
  const cases: EnqueueCase[] = redisOnly
    ? []
    : [
        rawSqliteCase(),
        await rawStoreSchemaCase(),
        storeCase('switchyard SQLite', sqliteStore(join(dir, 'enqueue.db')), () =>
          Promise.resolve(),
        ),
      ]
  if (!sqliteOnly && !redisOnly && (await serverReachable(PG_URL))) {
    const prefix = `bench_${randomUUID().slice(0, 8)}_`
    cases.push(
      storeCase(
        'switchyard PostgreSQL',
        postgresStore({ connectionString: PG_URL }, { tablePrefix: prefix }),
        () => dropPostgresTables(PG_URL, prefix),
      ),
    )
    for (const dropIndexes of [false, true]) {
      const replayPrefix = `bench_${randomUUID().slice(0, 8)}_`
      const recorded = await recordPgWrite(PG_URL, replayPrefix, BATCH, { dropIndexes })
      cases.push({
        name: dropIndexes ? PG_REPLAY_NO_INDEXES : PG_REPLAY,
        run: async (tasks) => {
          for (let i = 0; i < tasks.length; i += BATCH) await recorded.replay()
        },
        close: async () => {
          await recorded.close()
          await dropPostgresTables(PG_URL, replayPrefix)
        },
      })
    }
    const boss = await startPgBoss(PG_URL, 'enqueue')
    cases.push({
      name: PG_BOSS,
      run: (tasks) => boss.enqueue('enqueue', tasks, BATCH),
      close: () => boss.close(),
    })
  } else if (!sqliteOnly && !redisOnly) console.warn('PostgreSQL unreachable: skipping its cases')
  if (!sqliteOnly && (await serverReachable(REDIS_URL))) {
    const prefix = `sy-bench:${randomUUID().slice(0, 8)}:`
    cases.push(
      storeCase('switchyard Redis', redisStore({ url: REDIS_URL }, { prefix }), () =>
        deleteRedisKeys(REDIS_URL, prefix),
      ),
    )
    const bull = startBullmq(REDIS_URL)
    cases.push({
      name: BULLMQ,
      run: (tasks) => bull.enqueue(tasks, BATCH),
      close: () => bull.close(),
    })
  } else if (!sqliteOnly) console.warn('Redis unreachable: skipping its cases')
  // Warm up (schema, statement caches, connections).
  for (const c of cases) await c.run(Array.from({ length: BATCH }, (_, i) => task(i)))
  const results = new Map<string, number[]>(cases.map((c) => [c.name, []]))
  const clientCpu = new Map<string, number[]>(cases.map((c) => [c.name, []]))
  const redisCpu = new Map<string, number[]>(cases.map((c) => [c.name, []]))
  const redisInfo = redisCpuReader(REDIS_URL)
  const deadline = Date.now() + ENQUEUE_BUDGET_MS
  for (let round = 0; round < ROUNDS && Date.now() < deadline; round++) {
    const order = cases.map((_, i) => cases[(i + round) % cases.length]!)
    for (const c of order) {
      const tasks = Array.from({ length: TASKS_PER_ROUND }, (_, i) => task(i))
      const redisBefore =
        c.name.includes('Redis') || c.name === BULLMQ ? await redisInfo.cpu() : null
      const cpuBefore = process.cpuUsage()
      const started = performance.now()
      await c.run(tasks)
      results.get(c.name)!.push(TASKS_PER_ROUND / ((performance.now() - started) / 1000))
      const cpu = process.cpuUsage(cpuBefore)
      clientCpu.get(c.name)!.push((cpu.user + cpu.system) / TASKS_PER_ROUND)
      if (redisBefore !== null)
        redisCpu.get(c.name)!.push(((await redisInfo.cpu()) - redisBefore) / TASKS_PER_ROUND)
    }
  }
  await redisInfo.close()
  for (const c of cases) await c.close()
  const peer = median(results.get(cases[0]!.name)!)
  const summary: EnqueueSummary = {}
  console.log('\nDurable enqueue (pending records, batches of 500), tasks/s')
  console.log(
    'case'.padEnd(50),
    'median'.padStart(10),
    'min–max'.padStart(20),
    'vs peer'.padStart(9),
    'client µs'.padStart(10),
    'Redis µs'.padStart(9),
  )
  for (const [name, rounds] of results) {
    const m = median(rounds)
    const client = median(clientCpu.get(name) ?? [])
    const server = redisCpu.get(name) ?? []
    summary[name] = {
      median: Math.round(m),
      rounds: rounds.map(Math.round),
      ratio: m / peer,
      client_cpu_us: Math.round(client * 100) / 100,
      ...(server.length > 0 ? { redis_cpu_us: Math.round(median(server) * 100) / 100 } : {}),
    }
    if (name === 'switchyard SQLite') {
      // Against the raw writer of the store's own rows (same schema), per round.
      summary[name].ratio_to_same_rows = pairedRatio(rounds, results.get(RAW_SCHEMA))
    }
    console.log(
      name.padEnd(50),
      String(Math.round(m)).padStart(10),
      `${Math.round(Math.min(...rounds))}–${Math.round(Math.max(...rounds))}`.padStart(20),
      `${(m / peer).toFixed(2)}×`.padStart(9),
      client.toFixed(2).padStart(10),
      (server.length > 0 ? median(server).toFixed(2) : '').padStart(9),
    )
  }
  const sameRows = summary['switchyard SQLite']?.ratio_to_same_rows
  if (sameRows !== undefined)
    console.log(
      `switchyard SQLite / ${RAW_SCHEMA} (median of per-round ratios): ${sameRows.toFixed(2)}×`,
    )
  const ratios: Record<string, number> = {}
  for (const [ours, other, , key] of PAIRS) {
    const ratio = pairedRatio(results.get(ours), results.get(other))
    if (ratio === undefined) continue
    ratios[key] = ratio
    console.log(`${ours} / ${other} (median of per-round ratios): ${ratio.toFixed(2)}×`)
  }
  return { cases: summary, ratios }
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

const quietLogger = {
  warn: () => undefined,
  error: (fields: object | string, message?: string) => console.error(message ?? fields, fields),
}
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
  await checkSuccessRecords(sqliteStore(path), count)
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

/** One end-to-end case against a server: a round's elapsed ms for `tasks`. */
interface PeerCase {
  name: string
  round: (tasks: StoredTask[]) => Promise<number>
  close: () => Promise<void>
}

/**
 * Durable end to end against the queue peers on the same server, same N: switchyard's manager
 * on PostgreSQL vs pg-boss (insert of 500, 8 `work` loops fetching 500), and on Redis vs
 * BullMQ (addBulk of 500, a worker at concurrency 50). Interleaved rounds, order rotated.
 */
async function peersEndToEnd(): Promise<{
  cases: Record<string, { median: number; rounds: number[] }>
  ratios: Record<string, number>
}> {
  const cases: PeerCase[] = []
  if (!redisOnly && (await serverReachable(PG_URL))) {
    cases.push({
      name: 'switchyard PostgreSQL',
      round: (tasks) => managerEndToEnd(postgresFactory(PG_URL), tasks.length),
      close: () => Promise.resolve(),
    })
    const boss = await startPgBoss(PG_URL, 'enqueue')
    cases.push({
      name: PG_BOSS_E2E,
      round: (tasks) => boss.endToEnd(tasks, BATCH),
      close: () => boss.close(),
    })
  }
  if (await serverReachable(REDIS_URL)) {
    cases.push({
      name: 'switchyard Redis',
      round: (tasks) => managerEndToEnd(redisFactory(REDIS_URL), tasks.length),
      close: () => Promise.resolve(),
    })
    const bull = startBullmq(REDIS_URL)
    cases.push({
      name: BULLMQ_E2E,
      round: (tasks) => bull.endToEnd(tasks, BATCH),
      close: () => bull.close(),
    })
  }
  const make = (count: number) => Array.from({ length: count }, (_, i) => task(i))
  for (const c of cases) await c.round(make(1_000))
  const results = new Map<string, number[]>(cases.map((c) => [c.name, []]))
  for (let round = 0; round < PEER_ROUNDS; round++) {
    for (let i = 0; i < cases.length; i++) {
      const c = cases[(i + round) % cases.length]!
      const ms = await c.round(make(PEER_TASKS))
      results.get(c.name)!.push(PEER_TASKS / (ms / 1000))
    }
  }
  for (const c of cases) await c.close()
  console.log(
    `\nDurable end to end vs the queue peers: ${PEER_TASKS.toLocaleString()} no-op tasks enqueued (batches of 500) and run until stored as done, tasks/s`,
  )
  const summary: Record<string, { median: number; rounds: number[] }> = {}
  for (const [name, rounds] of results) {
    summary[name] = { median: Math.round(median(rounds)), rounds: rounds.map(Math.round) }
    console.log(
      name.padEnd(50),
      String(Math.round(median(rounds))).padStart(10),
      `${String(Math.round(Math.min(...rounds)))}–${String(Math.round(Math.max(...rounds)))}`.padStart(
        20,
      ),
    )
  }
  const ratios: Record<string, number> = {}
  for (const [ours, , other, key] of PAIRS) {
    const ratio = pairedRatio(results.get(ours), results.get(other))
    if (ratio === undefined) continue
    ratios[key] = ratio
    console.log(`${ours} / ${other} (median of per-round ratios): ${ratio.toFixed(2)}×`)
  }
  return { cases: summary, ratios }
}

try {
  if (e2eOnly) {
    const e2e = await managerBench()
    mkdirSync('bench/results', { recursive: true })
    writeFileSync('bench/results/tasks-store-e2e.json', JSON.stringify({ e2e, quick }, null, 2))
    process.exit(0)
  }
  if (sqliteOnly) {
    const { cases: enqueue } = await enqueueBench()
    const e2e = await managerBench()
    mkdirSync('bench/results', { recursive: true })
    writeFileSync(
      'bench/results/tasks-store-sqlite.json',
      JSON.stringify({ enqueue, e2e, quick, load: loadavg() }, null, 2),
    )
    process.exit(0)
  }
  if (redisOnly) {
    const { cases: enqueue, ratios } = await enqueueBench()
    const peersE2e = await peersEndToEnd()
    mkdirSync('bench/results', { recursive: true })
    writeFileSync(
      'bench/results/tasks-store-redis.json',
      JSON.stringify(
        {
          enqueue,
          peers_e2e: peersE2e.cases,
          ratios,
          e2e_ratios: peersE2e.ratios,
          quick,
          load: loadavg(),
        },
        null,
        2,
      ),
    )
    process.exit(0)
  }
  const { cases: enqueue, ratios: enqueueRatios } = await enqueueBench()
  const peersE2e = await peersEndToEnd()
  const list = await listBench()
  const e2e = await managerBench()
  const peers: Record<string, { enqueue?: number; e2e?: number }> = {}
  for (const [, , , key] of PAIRS) {
    peers[key] = { enqueue: enqueueRatios[key], e2e: peersE2e.ratios[key] }
  }
  mkdirSync('bench/results', { recursive: true })
  writeFileSync(
    'bench/results/tasks-store.json',
    JSON.stringify(
      { enqueue, peers_e2e: peersE2e.cases, peers, list, e2e, quick, load: loadavg() },
      null,
      2,
    ),
  )
  const sqlite = enqueue['switchyard SQLite']?.median ?? 0
  console.log(
    `\nGoals: SQLite enqueue ≥ 20,000/s → ${sqlite >= 20_000 ? 'met' : 'NOT met'}; list p95 < 20 ms → ${list.p95_ms! < 20 ? 'met' : 'NOT met'}`,
  )
} finally {
  rmSync(dir, { recursive: true, force: true })
}
