import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { afterAll } from 'vitest'
import { sqliteStore } from '../../../src/tasks/stores/index.js'
import { storeConformance } from './conformance/index.js'
import { migrationUpgrade } from './migration-upgrade.js'

const dir = mkdtempSync(join(tmpdir(), 'sy-tasks-sqlite-'))
const path = join(dir, 'tasks.db')
const upgradeDir = mkdtempSync(join(tmpdir(), 'sy-tasks-sqlite-upgrade-'))

afterAll(() => rmSync(upgradeDir, { recursive: true, force: true }))

storeConformance({
  name: 'SQLite',
  enabled: () => Promise.resolve(true),
  open: () => sqliteStore(path),
  cleanup: () => {
    rmSync(dir, { recursive: true, force: true })
    return Promise.resolve()
  },
})

migrationUpgrade(
  'SQLite',
  () => Promise.resolve(true),
  (options) => sqliteStore(join(upgradeDir, 'upgrade.db'), options),
  (rows, slots) => {
    const raw = new Database(join(upgradeDir, 'upgrade.db'))
    const insert = raw.prepare(
      'insert into switchyard_tasks (task_id, func_name, status, queue, created_ms, finished_ms, duration, body) values (@task_id, @func_name, @status, @queue, @created_ms, @finished_ms, @duration, @body)',
    )
    for (const row of rows) insert.run(row)
    const insertSlot = raw.prepare(
      'insert into switchyard_schedule_slots (schedule_name, slot_ms, claimed_by) values (@schedule_name, @slot_ms, @claimed_by)',
    )
    for (const slot of slots) insertSlot.run(slot)
    raw.close()
    return Promise.resolve()
  },
)
