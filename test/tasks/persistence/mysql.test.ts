import mysql from 'mysql2/promise'
import { mysqlStore } from '../../../src/tasks/stores/index.js'
import { afterAll } from 'vitest'
import { storeConformance } from './conformance/index.js'
import { MYSQL_URL, serverEnabled, TABLES, uniquePrefix } from './helpers.js'
import { migrationUpgrade } from './migration-upgrade.js'

const prefix = uniquePrefix('my')
const upgradePrefix = uniquePrefix('myup')
const enabled = () => serverEnabled(MYSQL_URL, 'mysql.test.ts')

async function dropTables(): Promise<void> {
  const connection = await mysql.createConnection(MYSQL_URL)
  try {
    for (const p of [prefix, upgradePrefix]) {
      for (const table of TABLES) await connection.query(`drop table if exists \`${p}${table}\``)
    }
  } finally {
    await connection.end()
  }
}

// The upgrade suite runs after the conformance suite's cleanup: drop everything at the end too.
afterAll(async () => {
  if (await enabled()) await dropTables()
})

storeConformance({
  name: 'MariaDB',
  enabled,
  open: () => mysqlStore({ uri: MYSQL_URL, poolSize: 4 }, { tablePrefix: prefix }),
  cleanup: dropTables,
})

migrationUpgrade(
  'MariaDB',
  enabled,
  (options) =>
    mysqlStore({ uri: MYSQL_URL, poolSize: 2 }, { ...options, tablePrefix: upgradePrefix }),
  async (rows, slots) => {
    const connection = await mysql.createConnection(MYSQL_URL)
    try {
      for (const r of rows) {
        await connection.query(
          `insert into \`${upgradePrefix}tasks\` (task_id, func_name, status, queue, created_ms, finished_ms, duration, body) values (?, ?, ?, ?, ?, ?, ?, ?)`,
          [
            r.task_id,
            r.func_name,
            r.status,
            r.queue,
            r.created_ms,
            r.finished_ms,
            r.duration,
            r.body,
          ],
        )
      }
      for (const slot of slots) {
        await connection.query(
          `insert into \`${upgradePrefix}schedule_slots\` (schedule_name, slot_ms, claimed_by) values (?, ?, ?)`,
          [slot.schedule_name, slot.slot_ms, slot.claimed_by],
        )
      }
    } finally {
      await connection.end()
    }
  },
)
