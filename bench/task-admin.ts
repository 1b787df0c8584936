/**
 * Task admin benchmark, bounded to ~90 s: `GET {tasks}/metrics` (with P95) and the
 * first list page, through Fastify over HTTP on 127.0.0.1 (one keep-alive connection), over SQLite histories of 100,000 and
 * 1,000,000 finished records. Per size: 400 requests of each, interleaved, p50/p95/max, and the
 * process RSS before and after (it must not follow the history's size).
 *
 * Peers, on the same 1,000,000-record file with raw better-sqlite3: the first page with a
 * fresh `count(*)` each time, and metrics computed the naive way — a GROUP BY over the records
 * plus every duration read back to find the P95 (what the metric buckets avoid).
 *
 * `--full` adds a 10,000,000-record history (its fill alone takes minutes; the peers stay on the
 * 1,000,000-record file).
 *
 * Goals: metrics p95 < 50 ms, list p95 < 5 ms (over 10M records with `--full`), RSS not
 * growing with the history.
 * Usage: `npm run bench -- task-admin [--quick | --full]`; writes bench/results/task-admin.json.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { Agent, request as httpRequest } from 'node:http'
import { tmpdir } from 'node:os'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import Fastify from 'fastify'
import { TaskManager } from '../src/tasks/index.js'
import { taskAdmin } from '../src/tasks/fastify/index.js'
import { sqliteStore } from '../src/tasks/stores/index.js'
import { fillHistoryDatabase } from './lib/fill-history.js'
import { percentile } from './lib/stats.js'

const quick = process.argv.includes('--quick')
const full = process.argv.includes('--full')
const SIZES = quick
  ? [20_000, 200_000]
  : full
    ? [100_000, 1_000_000, 10_000_000]
    : [100_000, 1_000_000]
/** The history the raw better-sqlite3 peers run on (their naive metrics read every record). */
const PEER_SIZE = SIZES[1] as number
const REQUESTS = 400
const dir = mkdtempSync(join(tmpdir(), 'sy-bench-admin-'))
const quietLogger = {
  warn: () => undefined,
  error: (fields: object | string, message?: string) => console.error(message ?? fields, fields),
}
const ms = (value: number) => Math.round(value * 100) / 100
// A full collection before each memory reading, so the figures compare live memory, not
// garbage that happens to be waiting (the flag must be set before `gc` is looked up).
setFlagsFromString('--expose-gc')
const collect = runInNewContext('gc') as () => void
const memory = () => {
  collect()
  const usage = process.memoryUsage()
  return { rss_mb: Math.round(usage.rss / 1e6), heap_mb: Math.round(usage.heapUsed / 1e6) }
}
/** CPU time of this process (user + system), ms. */
const cpuMs = () => {
  const usage = process.cpuUsage()
  return (usage.user + usage.system) / 1000
}

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
  const base = await app.listen({ host: '127.0.0.1', port: 0 })
  // Real HTTP over one keep-alive connection: Fastify's inject() keeps every response alive
  // (measured: ~40 kB of heap per request), which would hide what the mount itself keeps.
  const agent = new Agent({ keepAlive: true, maxSockets: 1 })
  const get = (url: string) =>
    new Promise<{ elapsed: number; body: Record<string, unknown> }>((resolve, reject) => {
      const started = performance.now()
      const request = httpRequest(`${base}${url}`, { agent }, (response) => {
        let text = ''
        response.setEncoding('utf8')
        response.on('data', (chunk: string) => (text += chunk))
        response.on('end', () => {
          const elapsed = performance.now() - started
          if (response.statusCode !== 200)
            reject(new Error(`${url}: ${String(response.statusCode)}`))
          else resolve({ elapsed, body: JSON.parse(text) as Record<string, unknown> })
        })
      })
      request.on('error', reject)
      request.end()
    })
  // Warm up (statements, JIT), and check what is served.
  const first = await get('/tasks/metrics')
  if (first.body.total !== records)
    throw new Error(`metrics total ${String(first.body.total)} ≠ ${String(records)}`)
  await get('/tasks')
  const before = memory()
  const metrics: number[] = []
  const list: number[] = []
  for (let i = 0; i < REQUESTS; i++) {
    metrics.push((await get('/tasks/metrics')).elapsed)
    list.push((await get('/tasks')).elapsed)
  }
  // CPU per request, in blocks of one endpoint: unlike latency, it does not move with the
  // machine's other load.
  const cpuPer = async (url: string) => {
    const started = cpuMs()
    for (let i = 0; i < REQUESTS; i++) await get(url)
    return ms((cpuMs() - started) / REQUESTS)
  }
  const cpu = { metrics_ms: await cpuPer('/tasks/metrics'), list_ms: await cpuPer('/tasks') }
  const after = memory()
  const p95 = (first.body as { p95_duration_seconds: number }).p95_duration_seconds
  agent.destroy()
  await app.close()
  return {
    records,
    metrics: summary(metrics),
    list: summary(list),
    cpu_per_request: cpu,
    memory_before: before,
    memory_after: after,
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
    const buildSeconds = await fillHistoryDatabase(path, size)
    const result = await serve(path, size)
    results.push({ ...result, build_seconds: Math.round(buildSeconds * 10) / 10 })
    if (size === PEER_SIZE) peer = peers(path)
    rmSync(path, { force: true })
  }
  console.log(`\nTask admin over SQLite, HTTP on 127.0.0.1, ${String(REQUESTS)} requests each (ms)`)
  console.log(
    'records'.padEnd(12),
    'endpoint'.padEnd(28),
    'p50'.padStart(8),
    'p95'.padStart(8),
    'max'.padStart(8),
    'CPU/req'.padStart(9),
  )
  for (const r of results) {
    for (const [name, l, cpu] of [
      ['GET /tasks/metrics', r.metrics, r.cpu_per_request.metrics_ms],
      ['GET /tasks (first page)', r.list, r.cpu_per_request.list_ms],
    ] as const) {
      console.log(
        r.records.toLocaleString().padEnd(12),
        name.padEnd(28),
        String(l.p50_ms).padStart(8),
        String(l.p95_ms).padStart(8),
        String(l.max_ms).padStart(8),
        String(cpu).padStart(9),
      )
    }
    console.log(
      ''.padEnd(12),
      `memory after a GC, before → after the requests: RSS ${String(r.memory_before.rss_mb)} → ${String(r.memory_after.rss_mb)} MB, heap ${String(r.memory_before.heap_mb)} → ${String(r.memory_after.heap_mb)} MB`,
    )
  }
  if (peer !== null) {
    console.log(`\nPeers on the ${PEER_SIZE.toLocaleString()}-record file (raw better-sqlite3):`)
    console.log('  first page + count(*):', peer.list_with_count)
    console.log('  naive metrics (GROUP BY + every duration for the P95):', peer.naive_metrics)
    const served = results.find((r) => r.records === PEER_SIZE)!.served_p95_seconds
    console.log(
      `  P95 served ${String(served)} s vs exact ${String(peer.exact_p95_seconds)} s: ${(
        (Math.abs(served - peer.exact_p95_seconds) / peer.exact_p95_seconds) *
        100
      ).toFixed(2)} % off`,
    )
  }
  const largest = results.at(-1)!
  console.log(
    `\nGoals: metrics p95 < 50 ms → ${largest.metrics.p95_ms < 50 ? 'met' : 'NOT met'}; list p95 < 5 ms → ${largest.list.p95_ms < 5 ? 'met' : 'NOT met'}; heap ${String(results[0]!.memory_after.heap_mb)} MB at ${results[0]!.records.toLocaleString()} vs ${String(largest.memory_after.heap_mb)} MB at ${largest.records.toLocaleString()} (RSS ${String(results[0]!.memory_after.rss_mb)} vs ${String(largest.memory_after.rss_mb)} MB)`,
  )
  mkdirSync('bench/results', { recursive: true })
  writeFileSync('bench/results/task-admin.json', JSON.stringify({ results, peer, quick }, null, 2))
} finally {
  rmSync(dir, { recursive: true, force: true })
}
