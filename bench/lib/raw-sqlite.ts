/**
 * What the SQLite benchmarks write with better-sqlite3 directly, to compare with the store:
 * the database settings, the six-column anchor table, and a pending task's row of the store's
 * own table, in one place so that every raw writer writes the same thing.
 */
import Database from 'better-sqlite3'
import type { StoredTask } from '../../src/tasks/record.js'

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

/** A pending task's row as the store writes it (claimed by `bench` until `leaseUntil`). */
export function storeRowValues(row: StoredTask, created: number, leaseUntil: number): unknown[] {
  const r = row.record
  return [
    r.task_id,
    r.func_name,
    r.status,
    r.queue,
    created,
    null,
    r.duration,
    r.progress,
    r.progress_message,
    JSON.stringify(row),
    'bench',
    leaseUntil,
    null,
  ]
}
