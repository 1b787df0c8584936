import pg from 'pg'
import { postgresStore } from '../../../src/tasks/stores/index.js'
import { afterAll } from 'vitest'
import { storeConformance } from './conformance/index.js'
import { PG_URL, serverEnabled, TABLES, uniquePrefix } from './helpers.js'
import { migrationUpgrade } from './migration-upgrade.js'

const prefix = uniquePrefix('pg')
const upgradePrefix = uniquePrefix('pgup')
const enabled = () => serverEnabled(PG_URL, 'postgres.test.ts')

async function dropTables(): Promise<void> {
  const client = new pg.Client({ connectionString: PG_URL })
  await client.connect()
  try {
    for (const p of [prefix, upgradePrefix]) {
      for (const table of TABLES) await client.query(`drop table if exists "${p}${table}"`)
    }
  } finally {
    await client.end()
  }
}

// The upgrade suite runs after the conformance suite's cleanup: drop everything at the end too.
afterAll(async () => {
  if (await enabled()) await dropTables()
})

storeConformance({
  name: 'PostgreSQL',
  enabled,
  open: () => postgresStore({ connectionString: PG_URL, poolSize: 4 }, { tablePrefix: prefix }),
  cleanup: dropTables,
})

migrationUpgrade(
  'PostgreSQL',
  enabled,
  (options) =>
    postgresStore(
      { connectionString: PG_URL, poolSize: 2 },
      { ...options, tablePrefix: upgradePrefix },
    ),
  async (rows, slots) => {
    const client = new pg.Client({ connectionString: PG_URL })
    await client.connect()
    try {
      for (const r of rows) {
        await client.query(
          `insert into "${upgradePrefix}tasks" (task_id, func_name, status, queue, created_ms, finished_ms, duration, body) values ($1, $2, $3, $4, $5, $6, $7, $8)`,
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
        await client.query(
          `insert into "${upgradePrefix}schedule_slots" (schedule_name, slot_ms, claimed_by) values ($1, $2, $3)`,
          [slot.schedule_name, slot.slot_ms, slot.claimed_by],
        )
      }
    } finally {
      await client.end()
    }
  },
)
