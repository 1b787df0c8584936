/**
 * Task admin benchmark (issue 12), bounded to ~90 s: `GET {tasks}/metrics` (with P95) and the
 * first list page, through Fastify (`inject`, no network), over SQLite histories of 100,000 and
 * 1,000,000 finished records. Per size: 400 requests of each, interleaved, p50/p95/max, and the
 * process RSS before and after (it must not follow the history's size).
 *
 * Peers, on the same 1,000,000-record file with raw better-sqlite3: the first page with a
 * fresh `count(*)` each time, and metrics computed the naive way — a GROUP BY over the records
 * plus every duration read back to find the P95 (what the metric buckets avoid).
 *
 * Goals: metrics p95 < 50 ms, list p95 < 5 ms, RSS not growing with the history.
 * Usage: `npm run bench -- task-admin [--quick]`; writes bench/results/task-admin.json.
 */
import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import Fastify from 'fastify'
import { TaskManager } from '../src/tasks/index.js'
import { taskAdmin } from '../src/tasks/fastify/index.js'
import { sqliteStore } from '../src/tasks/stores/index.js'
import { nodeArgsFor } from './lib/compiled.js'
import { percentile } from './lib/task-history.js'

const quick = process.argv.includes('--quick')
const SIZES = quick ? [20_000, 200_000] : [100_000, 1_000_000]
const REQUESTS = 400
const dir = mkdtempSync(join(tmpdir(), 'sy-bench-admin-'))
const quietLogger = { warn: () => undefined, error: (message: string) => console.error(message) }
const ms = (value: number) => Math.round(value * 100) / 100
const rssMb = () => Math.round(process.memoryUsage().rss / 1e6)

interface Latencies {
  p50_ms: number
  p95_ms: number
  max_ms: number
}

function summary(times: number[]): Latencies {
  return {
    p50_ms: ms(percentile(times, 0.5)),
    p95_ms: ms(percentile(times, 0.95)),
    max_ms: ms(Math.max(...times)),
  }
}

/** Serves `path` through taskAdmin and times the two endpoints. */
async function serve(path: string, records: number) {
  const manager = new TaskManager({ store: sqliteStore(path), logger: quietLogger })
  const app = Fastify()
  await app.register(taskAdmin, { taskManager: manager })
  await app.ready()
  const get = async (url: string) => {
    const started = performance.now()
    const response = await app.inject(url)
    const elapsed = performance.now() - started
    if (response.statusCode !== 200) throw new Error(`${url}: ${String(response.statusCode)}`)
    return { elapsed, body: response.json<Record<string, unknown>>() }
  }
  // Warm up (statements, JIT), and check what is served.
  const first = await get('/tasks/metrics')
  if (first.body.total !== records)
    throw new Error(`metrics total ${String(first.body.total)} ≠ ${String(records)}`)
  await get('/tasks')
  const rssBefore = rssMb()
  const metrics: number[] = []
  const list: number[] = []
  for (let i = 0; i < REQUESTS; i++) {
    metrics.push((await get('/tasks/metrics')).elapsed)
    list.push((await get('/tasks')).elapsed)
  }
  const p95 = (first.body as { p95_duration_seconds: number }).p95_duration_seconds
  await app.close()
  return {
    records,
    metrics: summary(metrics),
    list: summary(list),
    rss_before_mb: rssBefore,
    rss_after_mb: rssMb(),
    served_p95_seconds: p95,
  }
}

/** The peers: raw queries on the same file. */
function peers(path: string) {
  const db = new Database(path, { readonly: true })
  const page = db.prepare(
    'select body from switchyard_tasks order by created_ms desc, task_id desc limit 50',
  )
  const count = db.prepare('select count(*) as n from switchyard_tasks')
  const groups = db.prepare(
    'select func_name, status, count(*) as n, sum(duration) as d from switchyard_tasks group by func_name, status',
  )
  const durations = db.prepare(
    "select duration from switchyard_tasks where status in ('success', 'failed') order by duration",
  )
  const time = (run: () => unknown, rounds: number) => {
    const times: number[] = []
    for (let i = 0; i < rounds; i++) {
      const started = performance.now()
      run()
      times.push(performance.now() - started)
    }
    return times
  }
  let exactP95 = 0
  const list = time(() => {
    page.all()
    count.get()
  }, 20)
  const naive = time(() => {
    groups.all()
    const all = durations.all() as { duration: number }[]
    exactP95 = all[Math.ceil(0.95 * all.length) - 1]?.duration ?? 0
  }, 3)
  db.close()
  return {
    list_with_count: summary(list),
    naive_metrics: summary(naive),
    exact_p95_seconds: exactP95,
  }
}

try {
  const results = []
  let peer: ReturnType<typeof peers> | null = null
  for (const size of SIZES) {
    const path = join(dir, `admin-${String(size)}.db`)
    const setup = sqliteStore(path)
    await setup.init()
    await setup.close()
    // Filled by a child process: this process's heap and RSS hold nothing of the fill.
    const buildSeconds = Number(
      execFileSync(
        process.execPath,
        [...nodeArgsFor('bench/lib/fill-history-main.ts'), path, String(size)],
        {
          encoding: 'utf8',
        },
      ).trim(),
    )
    const result = await serve(path, size)
    results.push({ ...result, build_seconds: Math.round(buildSeconds * 10) / 10 })
    if (size === SIZES.at(-1)) peer = peers(path)
    rmSync(path, { force: true })
  }
  console.log(
    `\nTask admin over SQLite, through Fastify inject, ${String(REQUESTS)} requests each (ms)`,
  )
  console.log(
    'records'.padEnd(12),
    'endpoint'.padEnd(28),
    'p50'.padStart(8),
    'p95'.padStart(8),
    'max'.padStart(8),
    'RSS MB before→after'.padStart(22),
  )
  for (const r of results) {
    for (const [name, l] of [
      ['GET /tasks/metrics', r.metrics],
      ['GET /tasks (first page)', r.list],
    ] as const) {
      console.log(
        r.records.toLocaleString().padEnd(12),
        name.padEnd(28),
        String(l.p50_ms).padStart(8),
        String(l.p95_ms).padStart(8),
        String(l.max_ms).padStart(8),
        `${String(r.rss_before_mb)}→${String(r.rss_after_mb)}`.padStart(22),
      )
    }
  }
  if (peer !== null) {
    console.log(
      `\nPeers on the ${SIZES.at(-1)!.toLocaleString()}-record file (raw better-sqlite3):`,
    )
    console.log('  first page + count(*):', peer.list_with_count)
    console.log('  naive metrics (GROUP BY + every duration for the P95):', peer.naive_metrics)
    const served = results.at(-1)!.served_p95_seconds
    console.log(
      `  P95 served ${String(served)} s vs exact ${String(peer.exact_p95_seconds)} s: ${(
        (Math.abs(served - peer.exact_p95_seconds) / peer.exact_p95_seconds) *
        100
      ).toFixed(2)} % off`,
    )
  }
  const largest = results.at(-1)!
  console.log(
    `\nGoals: metrics p95 < 50 ms → ${largest.metrics.p95_ms < 50 ? 'met' : 'NOT met'}; list p95 < 5 ms → ${largest.list.p95_ms < 5 ? 'met' : 'NOT met'}; RSS ${String(results[0]!.rss_after_mb)} MB at ${results[0]!.records.toLocaleString()} vs ${String(largest.rss_after_mb)} MB at ${largest.records.toLocaleString()}`,
  )
  mkdirSync('bench/results', { recursive: true })
  writeFileSync('bench/results/task-admin.json', JSON.stringify({ results, peer, quick }, null, 2))
} finally {
  rmSync(dir, { recursive: true, force: true })
}
