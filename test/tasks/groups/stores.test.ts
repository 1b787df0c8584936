/**
 * Grouped and rate-limited queues on every durable store (SQLite, PostgreSQL, MariaDB, Redis):
 * the limits hold through the store's gates, also between two managers sharing it. Each test
 * opens its own namespace (table or key prefix), so parallel files never collide.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import mysql from 'mysql2/promise'
import pg from 'pg'
import {
  mysqlStore,
  postgresStore,
  redisStore,
  sqliteStore,
} from '../../../src/tasks/stores/index.js'
import type { DurableTaskStore } from '../../../src/tasks/stores/ports.js'
import { deleteKeys } from '../../helpers/redis.js'
import {
  MYSQL_URL,
  PG_URL,
  REDIS_URL,
  serverEnabled,
  TABLES,
  uniquePrefix,
} from '../persistence/helpers.js'
import { groupBehaviour, type GroupTarget } from './behaviour.js'

/** A target whose every `open` takes a fresh namespace and `again` reuses the last one. */
function target(
  name: string,
  enabled: () => Promise<boolean>,
  make: (namespace: string) => DurableTaskStore,
  drop: (namespaces: readonly string[]) => Promise<void>,
): GroupTarget {
  const namespaces: string[] = []
  return {
    name,
    enabled,
    open: () => {
      namespaces.push(uniquePrefix(`grp${namespaces.length}`))
      return make(namespaces.at(-1)!)
    },
    again: () => make(namespaces.at(-1)!),
    cleanup: () => drop(namespaces),
  }
}

const dir = mkdtempSync(join(tmpdir(), 'sy-groups-'))
groupBehaviour(
  target(
    'SQLite',
    () => Promise.resolve(true),
    (namespace) => sqliteStore(join(dir, `${namespace}.db`)),
    () => {
      rmSync(dir, { recursive: true, force: true })
      return Promise.resolve()
    },
  ),
)

groupBehaviour(
  target(
    'PostgreSQL',
    () => serverEnabled(PG_URL, 'groups/stores.test.ts'),
    (tablePrefix) => postgresStore({ connectionString: PG_URL }, { tablePrefix }),
    async (namespaces) => {
      const client = new pg.Client({ connectionString: PG_URL })
      await client.connect()
      try {
        for (const p of namespaces) {
          for (const table of TABLES) await client.query(`drop table if exists "${p}${table}"`)
        }
      } finally {
        await client.end()
      }
    },
  ),
)

groupBehaviour(
  target(
    'MariaDB',
    () => serverEnabled(MYSQL_URL, 'groups/stores.test.ts'),
    (tablePrefix) => mysqlStore({ uri: MYSQL_URL }, { tablePrefix }),
    async (namespaces) => {
      const connection = await mysql.createConnection(MYSQL_URL)
      try {
        for (const p of namespaces) {
          for (const table of TABLES)
            await connection.query(`drop table if exists \`${p}${table}\``)
        }
      } finally {
        await connection.end()
      }
    },
  ),
)

groupBehaviour(
  target(
    'Redis',
    () => serverEnabled(REDIS_URL, 'groups/stores.test.ts'),
    (namespace) => redisStore({ url: REDIS_URL, prefix: `sy-test:${namespace}` }),
    async (namespaces) => {
      for (const namespace of namespaces) await deleteKeys(`sy-test:${namespace}`, REDIS_URL)
    },
  ),
)
