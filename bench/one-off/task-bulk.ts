/**
 * Bulk retry by filter, one-off measurement: 10,000 failed records of a function of their own in
 * a SQLite store — alone, or (`--history=N`) next to N records of the synthetic history of the
 * task benchmarks — then `POST {tasks}/bulk-retry {"filter": {"status": "failed", "func_name":
 * "job"}}` through Fastify (inject), three rounds on fresh copies; prints the wall time of each
 * call, its answer and the load average.
 *
 * Goal: select-all retry of 10,000 failed tasks under 5 s (over a 1,000,000-record history).
 * Usage: `npx tsx bench/one-off/task-bulk.ts [count] [--history=1000000]` (outside `npm run
 * bench`, which runs only the scripts directly under bench/).
 */
import { randomUUID } from 'node:crypto'
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import Fastify from 'fastify'
import { TaskManager } from '../../src/tasks/index.js'
import { taskAdmin } from '../../src/tasks/fastify/index.js'
import type { StoredTask } from '../../src/tasks/record.js'
import { sqliteStore } from '../../src/tasks/stores/index.js'
import { fillHistoryDatabase } from '../lib/fill-history.js'

const positional = process.argv.slice(2).filter((arg) => !arg.startsWith('--'))
const COUNT = Number(positional[0] ?? 10_000)
const HISTORY = Number(
  process.argv.find((arg) => arg.startsWith('--history='))?.slice('--history='.length) ?? 0,
)
const dir = mkdtempSync(join(tmpdir(), 'sy-bulk-'))
/** The history every round starts from (copied: a round changes its file). */
const template = join(dir, 'template.db')
if (HISTORY > 0) {
  const seconds = await fillHistoryDatabase(template, HISTORY)
  process.stdout.write(`history of ${HISTORY} records written in ${seconds.toFixed(1)} s\n`)
}

function failedTask(created: number): StoredTask {
  const at = new Date(created).toISOString()
  return {
    record: {
      task_id: randomUUID(),
      func_name: 'job',
      status: 'failed',
      created_at: at,
      start_time: at,
      end_time: at,
      duration: 0.01,
      retries_used: 0,
      error: 'Error: boom',
      logs: [],
      stacktrace: null,
      tags: {},
      source: 'manual',
      priority: null,
      executor: 'async',
      queue: 'default',
      progress: null,
      progress_message: null,
      expires_at: null,
      retry_of: null,
      retried_as: null,
    },
    args: [1, 'two'],
    encrypted_args: null,
    idempotency_key: null,
  }
}

async function round(index: number): Promise<number> {
  const path = join(dir, `round-${index}.db`)
  if (HISTORY > 0) copyFileSync(template, path)
  const manager = new TaskManager({
    store: sqliteStore(path),
    queues: { default: { concurrency: 4 } },
  })
  // The retried runs wait: the measurement is the retry, not the runs.
  manager.task({ name: 'job' }, () => new Promise(() => undefined))
  const app = Fastify()
  await app.register(taskAdmin, { taskManager: manager })
  await app.ready()
  const store = manager.durableStore!
  const start = Date.now() - 3_600_000
  for (let i = 0; i < COUNT; i += 1000) {
    const batch = Array.from({ length: Math.min(1000, COUNT - i) }, (_, j) =>
      failedTask(start + i + j),
    )
    await store.records.save(batch)
  }
  const began = performance.now()
  const response = await app.inject({
    method: 'POST',
    url: '/tasks/bulk-retry',
    payload: { filter: { status: 'failed', func_name: 'job' } },
  })
  const ms = performance.now() - began
  const load = loadavg()[0]!.toFixed(2)
  process.stdout.write(
    `${COUNT} failed → ${response.body} in ${(ms / 1000).toFixed(2)} s (load average ${load})\n`,
  )
  await app.close()
  rmSync(path, { force: true })
  return ms
}

const times: number[] = []
for (let i = 0; i < 3; i++) times.push(await round(i))
rmSync(dir, { recursive: true, force: true })
times.sort((a, b) => a - b)
process.stdout.write(`median ${(times[1]! / 1000).toFixed(2)} s (goal < 5 s)\n`)
