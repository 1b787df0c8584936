/**
 * SQLite's partial indexes of failures: the list filters they were made for still read them
 * (SQLite uses a partial index only for a query that states the index's condition in the same
 * form), and they hold exactly the failures (the dead letters index: those not retried).
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { TaskListQuery } from '../../../src/tasks/stores/ports.js'
import type { RawSqlite } from '../../../src/tasks/stores/sql/backend.js'
import { SqlTaskStore } from '../../../src/tasks/stores/sql/sql-store.js'
import { makeTask } from './helpers.js'

const dir = mkdtempSync(join(tmpdir(), 'sy-sqlite-partial-'))
const raw = new Database(join(dir, 'tasks.db'))
/** Every statement text the store prepares, in order. */
const prepared: string[] = []
const prepare = raw.prepare.bind(raw)
raw.prepare = (text: string) => {
  prepared.push(text)
  return prepare(text)
}
// better-sqlite3's typings of `transaction` are wider than the store's structural type.
const store = new SqlTaskStore({ dialect: 'sqlite', database: raw as unknown as RawSqlite })

beforeAll(async () => {
  await store.init()
  const failed = makeTask({ func_name: 'mail', status: 'failed', queue: 'emails' })
  const retried = makeTask({ func_name: 'mail', status: 'failed', queue: 'emails' })
  retried.record.retried_as = 'retry-1'
  const expired = makeTask({ func_name: 'mail', status: 'expired', queue: 'emails' })
  const done = makeTask({ func_name: 'mail', status: 'success', queue: 'emails' })
  const waiting = makeTask({ func_name: 'mail', status: 'pending', queue: 'emails' })
  for (const task of [failed, retried, expired, done]) task.record.end_time = task.record.created_at
  await store.records.save([failed, retried, expired, done, waiting])
})

afterAll(async () => {
  await store.close()
  rmSync(dir, { recursive: true, force: true })
})

/** The indexes SQLite's plan reads for the statements `list` prepares. */
async function indexesRead(query: Partial<TaskListQuery>) {
  const from = prepared.length
  const page = await store.records.list({ page: 1, perPage: 20, countLimit: 1000, ...query })
  const plans = prepared
    .slice(from)
    .filter((text) => /^\s*select/i.test(text))
    .flatMap((text) => {
      const params = Array<null>(text.split('?').length - 1).fill(null)
      return prepare(`explain query plan ${text}`).all(...params) as { detail: string }[]
    })
  return { page, details: plans.map((row) => row.detail).join('\n') }
}

/** The ids an index holds, read through the index itself (INDEXED BY, with its condition). */
function idsIn(index: string): string[] {
  const { sql } = prepare('select sql from sqlite_master where name = ?').get(index) as {
    sql: string
  }
  const condition = sql.slice(sql.toLowerCase().lastIndexOf(' where ') + ' where '.length)
  const rows = prepare(
    `select task_id from switchyard_tasks indexed by ${index} where ${condition}`,
  ).all() as { task_id: string }[]
  return rows.map((row) => row.task_id).sort()
}

describe('SQLite failure indexes', () => {
  it('serve a status and queue filter (the failures index)', async () => {
    const { page, details } = await indexesRead({ status: 'failed', queue: 'emails' })
    expect(page.items).toHaveLength(2)
    expect(details).toContain('switchyard_tasks_failures')
  })

  it('serve Dead Letters: a failure status, not retried (the dead letters index)', async () => {
    const { page, details } = await indexesRead({ status: 'failed', retried: false })
    expect(page.items.map((task) => task.record.retried_as)).toEqual([null])
    expect(details).toContain('switchyard_tasks_dead_letters')
  })

  it('are written without an IN list, and hold exactly the failures', () => {
    const definitions = prepare(
      "select name, sql from sqlite_master where name in ('switchyard_tasks_failures', 'switchyard_tasks_dead_letters')",
    ).all() as { name: string; sql: string }[]
    expect(definitions).toHaveLength(2)
    for (const { sql } of definitions) expect(sql.toLowerCase()).not.toMatch(/\sin\s*\(/)
    const rows = prepare('select task_id, status, retried_as from switchyard_tasks').all() as {
      task_id: string
      status: string
      retried_as: string | null
    }[]
    const failures = rows.filter((row) => ['failed', 'expired'].includes(row.status))
    expect(failures).toHaveLength(3)
    const ids = (list: typeof rows) => list.map((row) => row.task_id).sort()
    expect(idsIn('switchyard_tasks_failures')).toEqual(ids(failures))
    expect(idsIn('switchyard_tasks_dead_letters')).toEqual(
      ids(failures.filter((row) => row.retried_as === null)),
    )
  })
})
