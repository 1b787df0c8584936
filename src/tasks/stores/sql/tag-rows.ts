/**
 * The tag rows of task records (`task_tags`: one row per tag, by the hash of `key=value`, for
 * the tag filters of the list): which rows a write adds, and their insert-if-absent statements
 * (multi-row for the servers, SQLite's prepared single-row form).
 */
import type { CompiledQuery, Kysely } from 'kysely'
import type { StoredTask } from '../../record.js'
import type { TaskStatus } from '../../status.js'
import { StoreError } from '../errors.js'
import { tagHash, type TaskColumns } from '../rows.js'
import { INSERT_CHUNK, type SqlBackend } from './backend.js'
import type { TaskDatabase } from './schema.js'

type Db = Kysely<TaskDatabase>

/** A row of `task_tags`. */
export interface TagRow {
  task_id: string
  tag_hash: string
  created_ms: number
}

/**
 * The tag rows of the records to insert if absent (tags never change; a row that is known to
 * exist already is skipped, the others are ignored by the database when present).
 */
export function tagRows(
  tasks: readonly StoredTask[],
  columns: readonly TaskColumns[],
  before: ReadonlyMap<string, TaskStatus>,
): TagRow[] {
  const rows: TagRow[] = []
  tasks.forEach((task, index) => {
    const record = task.record
    if (before.has(record.task_id)) return
    // The creation time already parsed for the task row (`columns` follows `tasks`).
    const created = (columns[index] as TaskColumns).created_ms
    for (const [key, value] of Object.entries(record.tags)) {
      rows.push({ task_id: record.task_id, tag_hash: tagHash(key, value), created_ms: created })
    }
  })
  return rows
}

/** Multi-row insert-if-absent statements of `rows` (the servers' path). */
export function tagInserts(
  db: Db,
  dialect: SqlBackend['dialect'],
  rows: readonly TagRow[],
): CompiledQuery[] {
  const queries: CompiledQuery[] = []
  for (let i = 0; i < rows.length; i += INSERT_CHUNK) {
    const insert = db.insertInto('task_tags').values(rows.slice(i, i + INSERT_CHUNK))
    queries.push(
      (dialect === 'mysql' ? insert.ignore() : insert.onConflict((oc) => oc.doNothing())).compile(),
    )
  }
  return queries
}

/** The SQLite single-row insert-if-absent of a tag row: (tag_hash, created_ms, task_id). */
export function compileTagInsert(db: Db): string {
  const compiled = db
    .insertInto('task_tags')
    .values({ tag_hash: 'h', created_ms: 1, task_id: 't' })
    .onConflict((oc) => oc.doNothing())
    .compile()
  if (compiled.parameters.join() !== 'h,1,t') {
    throw new StoreError('Unexpected shape of the compiled tag insert.')
  }
  return compiled.sql
}
