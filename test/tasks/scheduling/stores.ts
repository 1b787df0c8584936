/** The four real stores, for the scheduling tests (each with its own namespace). */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import {
  mysqlStore,
  postgresStore,
  redisStore,
  sqliteStore,
  type DurableTaskStore,
} from '../../../src/tasks/stores/index.js'
import mysql from 'mysql2/promise'
import pg from 'pg'
import { Redis } from 'ioredis'
import {
  TABLES,
  MYSQL_URL,
  PG_URL,
  REDIS_URL,
  serverEnabled,
  uniquePrefix,
} from '../persistence/helpers.js'

/** A backend: opens new instances over one namespace. */
export interface StoreKind {
  name: string
  enabled: () => Promise<boolean>
  open: () => DurableTaskStore
  /** Drops the namespace (tables or keys). */
  cleanup: () => Promise<void>
}

const dir = mkdtempSync(join(tmpdir(), 'sy-sched-'))

/** The four backends; `tag` keeps files apart. SQL tables are dropped by `dropAll`. */
export function storeKinds(tag: string): StoreKind[] {
  const prefix = uniquePrefix(tag)
  return [
    {
      name: 'sqlite',
      enabled: () => Promise.resolve(true),
      open: () => sqliteStore(join(dir, `${tag}.db`)),
      cleanup: () => Promise.resolve(),
    },
    {
      name: 'postgres',
      enabled: () => serverEnabled(PG_URL, tag),
      open: () => postgresStore({ connectionString: PG_URL, poolSize: 2 }, { tablePrefix: prefix }),
      cleanup: async () => {
        const client = new pg.Client({ connectionString: PG_URL })
        await client.connect()
        for (const table of TABLES) await client.query(`drop table if exists "${prefix}${table}"`)
        await client.end()
      },
    },
    {
      name: 'mysql',
      enabled: () => serverEnabled(MYSQL_URL, tag),
      open: () => mysqlStore({ uri: MYSQL_URL, poolSize: 2 }, { tablePrefix: prefix }),
      cleanup: async () => {
        const connection = await mysql.createConnection(MYSQL_URL)
        for (const table of TABLES)
          await connection.query(`drop table if exists \`${prefix}${table}\``)
        await connection.end()
      },
    },
    {
      name: 'redis',
      enabled: () => serverEnabled(REDIS_URL, tag),
      open: () => redisStore({ url: REDIS_URL }, { prefix: `sy-test:${prefix}` }),
      cleanup: async () => {
        const client = new Redis(REDIS_URL)
        const keys = await client.keys(`sy-test:${prefix}*`)
        if (keys.length > 0) await client.del(...keys)
        client.disconnect()
      },
    },
  ]
}

/** Removes the SQLite files. */
export function removeSqliteFiles(): void {
  rmSync(dir, { recursive: true, force: true })
}
