/**
 * What the SQLite benchmarks write with better-sqlite3 directly, to compare with the store:
 * the database settings, the six-column anchor table, and a pending task's row of the store's
 * own table, in one place so that every raw writer writes the same thing.
 */
import Database from 'better-sqlite3'
import type { StoredTask } from '../../src/tasks/record.js'
import { sqliteStore } from '../../src/tasks/stores/index.js'
import { tagHash } from '../../src/tasks/stores/rows.js'
import { CLAIM_COLUMNS, RECORD_COLUMNS } from '../../src/tasks/stores/sql/records.js'

/** A raw database at the store's settings: WAL and synchronous NORMAL. */
export function openRawSqlite(path: string): Database.Database {
  const db = new Database(path)
  db.pragma('journal_mode = WAL')
  db.pragma('synchronous = NORMAL')
  return db
}

/**
 * The anchor the store-level goal is measured against: six columns, primary key only, one
 * transaction per batch. Returns the batch writer.
 */
export function pkOnlyWriter(db: Database.Database): (rows: StoredTask[]) => void {
  db.exec(
    'create table tasks (task_id text primary key, func_name text, status text, queue text, created_ms integer, body text)',
  )
  const insert = db.prepare('insert into tasks values (?, ?, ?, ?, ?, ?)')
  return db.transaction((rows: StoredTask[]) => {
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
}

/** The columns of the store's task table, in the order of {@link storeRowValues}. */
export const STORE_TASK_COLUMNS =
  'task_id, func_name, status, queue, created_ms, finished_ms, duration, progress, progress_message, body, claimed_by, lease_until, claim_token'

/**
 * A task's row as the store writes it: a pending one claimed by `bench` until `leaseUntil`, a
 * finished one with its end time and no claim.
 */
export function storeRowValues(row: StoredTask, created: number, leaseUntil: number): unknown[] {
  const r = row.record
  const finished = r.end_time === null ? null : Date.parse(r.end_time)
  return [
    r.task_id,
    r.func_name,
    r.status,
    r.queue,
    created,
    finished,
    r.duration,
    r.progress,
    r.progress_message,
    JSON.stringify(row),
    finished === null ? 'bench' : null,
    finished === null ? leaseUntil : null,
    null,
  ]
}

/** A raw database on a file the store itself migrated first (its tables and every index). */
export async function openMigratedRaw(path: string): Promise<Database.Database> {
  const store = sqliteStore(path)
  await store.init()
  await store.close()
  return openRawSqlite(path)
}

/**
 * Writes what the store writes for a batch into a file the store itself migrated (its table with
 * every index, its tag table): per task the full row by the same upsert (claim columns set for a
 * pending record) and its tag rows (insert-if-absent, the same hash), one change-feed row per
 * batch, one transaction per batch. Returns the batch writer; `leaseUntil` is a pending row's
 * lease end.
 */
export function storeRowsWriter(
  db: Database.Database,
): (rows: StoredTask[], leaseUntil: number) => void {
  const columns = STORE_TASK_COLUMNS
  const overwritten = [...RECORD_COLUMNS, ...CLAIM_COLUMNS]
  const upsert = db.prepare(
    `insert into switchyard_tasks (${columns}) values (${columns
      .split(',')
      .map(() => '?')
      .join(', ')}) on conflict (task_id) do update set ${overwritten
      .map((column) => `${column} = excluded.${column}`)
      .join(', ')}`,
  )
  const tag = db.prepare(
    'insert into switchyard_task_tags (tag_hash, created_ms, task_id) values (?, ?, ?) on conflict do nothing',
  )
  const change = db.prepare(
    'insert into switchyard_task_changes (origin, task_ids, changed_ms) values (?, ?, ?)',
  )
  return db.transaction((rows: StoredTask[], leaseUntil: number) => {
    for (const row of rows) {
      const r = row.record
      const created = Date.parse(r.created_at)
      upsert.run(...storeRowValues(row, created, leaseUntil))
      for (const [key, value] of Object.entries(r.tags))
        tag.run(tagHash(key, value), created, r.task_id)
    }
    change.run('raw', JSON.stringify(rows.map((row) => row.record.task_id)), Date.now())
  })
}
