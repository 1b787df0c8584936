/**
 * Where the SQLite store's durable enqueue spends its time: the store's `pending.enqueue` of
 * batches of 500 against raw better-sqlite3 writes that add, one at a time, what the store
 * writes per task (the full row in the store's table, its status index, its list indexes partial
 * on the history (and, for comparison, the five full ones of the schema before), the tag row,
 * the upsert form). Every case writes the same tasks, WAL with synchronous NORMAL, one
 * transaction per batch; rounds interleaved with the order rotated; CPU µs per task from
 * `process.cpuUsage()` (the figure that does not move with the machine's other load) and
 * tasks/s, medians.
 *
 * Usage (compiled, like every bench): `npx tsc -p tsconfig.bench.json && node
 * bench/.out/bench/lib/sqlite-enqueue-breakdown.js [rounds] [tasks per round]`.
 *
 * Instructions per task (repeatable on a busy machine): one case under callgrind,
 *
 *     valgrind --tool=callgrind --smc-check=all-non-file --separate-threads=yes \
 *       node --predictable --min-semi-space-size=16 --max-semi-space-size=16 \
 *       bench/.out/bench/lib/sqlite-enqueue-breakdown.js 1 10000 --callgrind=<case number>
 *
 * then the `.1-01` file's total Ir (`callgrind_annotate`) divided by the task count.
 */
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { StoredTask } from '../../src/tasks/record.js'
import { sqliteStore } from '../../src/tasks/stores/index.js'
import { tagHash } from '../../src/tasks/stores/rows.js'
import {
  openMigratedRaw,
  openRawSqlite,
  pkOnlyWriter,
  storeRowsWriter,
  storeRowValues,
} from './raw-sqlite.js'
import { median } from './stats.js'
import { benchTask } from './task-history.js'

const args = process.argv.slice(2).filter((arg) => !arg.startsWith('--'))
const ROUNDS = Number(args[0] ?? 7)
const TASKS = Number(args[1] ?? 20_000)
/** `--callgrind=<case number>`: run that case once between two `callgrind_control` calls. */
const callgrindCase = process.argv.find((arg) => arg.startsWith('--callgrind='))
/**
 * `--status=success`: every case writes finished records instead (the store by `records.save`):
 * what a task's terminal write costs, the other half of a durable task's writes.
 */
const STATUS = process.argv.includes('--status=success') ? 'success' : 'pending'
const BATCH = 500
const dir = mkdtempSync(join(tmpdir(), 'sy-bench-breakdown-'))

interface Case {
  name: string
  run: (batch: StoredTask[]) => void | Promise<void>
}

/** A raw database at the store's settings. */
function open(name: string) {
  return openRawSqlite(join(dir, `${name}.db`))
}

/** The current baseline of tasks-store.ts: six columns, primary key only. */
function rawPkOnly(): Case {
  return { name: 'raw: 6 columns, primary key only', run: pkOnlyWriter(open('pk-only')) }
}

/**
 * Which secondary indexes of the task table a raw case writes: none; the status index only (what
 * claims read); the store's own (schema 13: the status index, and the list indexes partial on
 * the history, so that a pending row does not enter them); or the five full list indexes a store
 * had before schema 13 (and MySQL still has).
 */
type Indexes = 'none' | 'status' | 'lean' | 'full'

/** The statements that create `indexes` on the raw `tasks` table. */
function indexStatements(indexes: Indexes): string {
  const history = "where status not in ('pending', 'running')"
  const status =
    'create index tasks_status on tasks (status, created_ms, task_id, func_name, queue);'
  switch (indexes) {
    case 'none':
      return ''
    case 'status':
      return status
    case 'lean':
      return `${status}
        create index tasks_created on tasks (created_ms, task_id) ${history};
        create index tasks_func on tasks (func_name, created_ms, task_id) ${history};
        create index tasks_queue on tasks (queue, created_ms, task_id) ${history};
        create index tasks_finished on tasks (finished_ms) where finished_ms is not null;`
    case 'full':
      return `create index tasks_created on tasks (created_ms, task_id);
        create index tasks_status on tasks (status, created_ms, task_id);
        create index tasks_func on tasks (func_name, created_ms, task_id);
        create index tasks_queue on tasks (queue, created_ms, task_id);
        create index tasks_finished on tasks (finished_ms);`
  }
}

/** The store's table with `indexes`; `tags` adds the tag rows, `upsert` the ON CONFLICT form. */
function rawStoreSchema(options: { indexes: Indexes; tags: boolean; upsert: boolean }): Case {
  const name = `schema-${JSON.stringify(options).replace(/[^a-z0-9]/gi, '')}`
  const db = open(name)
  db.exec(`create table tasks (task_id varchar(255) primary key, func_name varchar(255) not null,
    status varchar(16) not null, queue varchar(255) not null, created_ms bigint not null,
    finished_ms bigint, duration double precision not null default 0, claimed_by varchar(255),
    lease_until bigint, claim_token varchar(64), body text not null, progress double precision,
    progress_message text)`)
  if (options.indexes !== 'none') db.exec(indexStatements(options.indexes))
  db.exec(`create table task_tags (tag_hash char(32) not null, created_ms bigint not null,
    task_id varchar(255) not null, primary key (tag_hash, created_ms, task_id)) without rowid`)
  const conflict = options.upsert
    ? ` on conflict (task_id) do update set func_name = excluded.func_name, status = excluded.status,
      queue = excluded.queue, created_ms = excluded.created_ms, finished_ms = excluded.finished_ms,
      duration = excluded.duration, progress = excluded.progress,
      progress_message = excluded.progress_message, body = excluded.body,
      claimed_by = excluded.claimed_by, lease_until = excluded.lease_until`
    : ''
  const insert = db.prepare(
    `insert into tasks (task_id, func_name, status, queue, created_ms, finished_ms, duration,
      progress, progress_message, body, claimed_by, lease_until, claim_token)
      values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)${conflict}`,
  )
  const tag = db.prepare(
    'insert into task_tags (tag_hash, created_ms, task_id) values (?, ?, ?) on conflict do nothing',
  )
  const lease = Date.now() + 60_000
  // One statement per row, as the store runs them.
  const write = db.transaction((rows: StoredTask[]) => {
    for (const row of rows) {
      const r = row.record
      const created = Date.parse(r.created_at)
      insert.run(...storeRowValues(row, created, lease))
      if (options.tags) {
        for (const [key, value] of Object.entries(r.tags))
          tag.run(tagHash(key, value), created, r.task_id)
      }
    }
  })
  const label = [
    'raw: store table',
    { none: '', status: '+ status index', lean: '+ lean indexes', full: '+ 5 full indexes' }[
      options.indexes
    ],
    options.tags ? '+ tag rows' : '',
    options.upsert ? '+ upsert' : '',
  ]
    .filter((part) => part !== '')
    .join(' ')
  return { name: label, run: write }
}

async function main() {
  const store = sqliteStore(join(dir, 'store.db'))
  await store.init()
  // A file migrated by the store, written raw: what the store writes, without the store.
  const storeRows = storeRowsWriter(await openMigratedRaw(join(dir, 'migrated.db')))
  const cases: Case[] = [
    rawPkOnly(),
    rawStoreSchema({ indexes: 'none', tags: false, upsert: false }),
    rawStoreSchema({ indexes: 'status', tags: false, upsert: false }),
    rawStoreSchema({ indexes: 'lean', tags: false, upsert: false }),
    rawStoreSchema({ indexes: 'lean', tags: true, upsert: false }),
    rawStoreSchema({ indexes: 'lean', tags: true, upsert: true }),
    rawStoreSchema({ indexes: 'full', tags: true, upsert: true }),
    {
      name: "raw: the store's own file and writes",
      run: (batch) => storeRows(batch, Date.now() + 60_000),
    },
    STATUS === 'pending'
      ? {
          name: 'store: pending.enqueue',
          run: (batch) =>
            store.pending.enqueue(batch, { owner: 'bench', leaseUntil: Date.now() + 60_000 }),
        }
      : { name: 'store: records.save', run: (batch) => store.records.save(batch) },
  ]
  const runAll = async (c: Case, tasks: StoredTask[]) => {
    for (let i = 0; i < tasks.length; i += BATCH) await c.run(tasks.slice(i, i + BATCH))
  }
  if (callgrindCase !== undefined) {
    const c = cases[Number(callgrindCase.slice('--callgrind='.length))]!
    for (let warm = 0; warm < 3; warm++)
      await runAll(
        c,
        Array.from({ length: 5_000 }, (_, i) => benchTask(i, STATUS)),
      )
    const tasks = Array.from({ length: TASKS }, (_, i) => benchTask(i, STATUS))
    execFileSync('callgrind_control', ['-z', String(process.pid)])
    await runAll(c, tasks)
    execFileSync('callgrind_control', ['-d', String(process.pid)])
    console.log(`${c.name}: ${String(TASKS)} tasks`)
    await store.close()
    return
  }
  for (const c of cases)
    await runAll(
      c,
      Array.from({ length: 2_000 }, (_, i) => benchTask(i, STATUS)),
    )
  const cpu = new Map<string, number[]>(cases.map((c) => [c.name, []]))
  const rate = new Map<string, number[]>(cases.map((c) => [c.name, []]))
  for (let round = 0; round < ROUNDS; round++) {
    for (let k = 0; k < cases.length; k++) {
      const c = cases[(k + round) % cases.length]!
      const tasks = Array.from({ length: TASKS }, (_, i) => benchTask(i, STATUS))
      const cpuBefore = process.cpuUsage()
      const started = performance.now()
      await runAll(c, tasks)
      const elapsed = performance.now() - started
      const used = process.cpuUsage(cpuBefore)
      cpu.get(c.name)!.push((used.user + used.system) / TASKS)
      rate.get(c.name)!.push(TASKS / (elapsed / 1000))
    }
  }
  await store.close()
  const base = median(cpu.get(cases[0]!.name)!)
  const baseRate = median(rate.get(cases[0]!.name)!)
  console.log(
    `${STATUS} records, ${String(TASKS)} tasks per round, batches of ${String(BATCH)}, ${String(ROUNDS)} rounds (medians)`,
  )
  console.log('case'.padEnd(48), 'CPU µs/task'.padStart(12), 'tasks/s'.padStart(10), 'rate ×')
  for (const c of cases) {
    const us = median(cpu.get(c.name)!)
    const r = median(rate.get(c.name)!)
    console.log(
      c.name.padEnd(48),
      us.toFixed(2).padStart(12),
      String(Math.round(r)).padStart(10),
      `${(r / baseRate).toFixed(2)}× (CPU ${(base / us).toFixed(2)}×)`,
    )
  }
}

try {
  await main()
} finally {
  rmSync(dir, { recursive: true, force: true })
}
