/**
 * The four durable task stores as the task drills use them: a SQLite file in a temporary
 * folder, the local PostgreSQL and MariaDB under a fresh table prefix (dropped afterwards), and
 * a private `redis-server` (never the shared one). Children open a store from the environment
 * variables {@link storeEnv} sets, so the parent and every child see the same one.
 */
import { randomUUID } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import mysql from 'mysql2/promise'
import pg from 'pg'
import {
  mysqlStore,
  postgresStore,
  redisStore,
  sqliteStore,
  type DurableTaskStore,
} from '../../src/tasks/index.js'
import { TASK_TABLES } from '../../src/tasks/stores/sql/schema.js'
import type { DrillFigure } from './drill.js'
import type { DrillChild } from './child.js'
import { freePort } from '../../support/servers.js'
import { PrivateRedis } from './private-redis.js'

/** The durable store kinds. */
export type StoreKind = 'sqlite' | 'postgres' | 'mysql' | 'redis'

/** Every kind, in the order the drills run them. */
export const STORE_KINDS: readonly StoreKind[] = ['sqlite', 'postgres', 'mysql', 'redis']

/** The local database servers (overridable like the test suite's). */
const PG_URL = process.env.SY_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
const MYSQL_URL = process.env.SY_TEST_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test'

/** One store a drill opened: where it lives, and how to remove it. */
export interface DrillStore {
  kind: StoreKind
  url: string
  prefix: string
  /** Drops its tables / stops its Redis / deletes its file. */
  dispose(): Promise<void>
}

/** Opens a fresh, empty namespace of `kind`. */
export async function drillStore(kind: StoreKind, name: string): Promise<DrillStore> {
  const prefix = `drill_${name}_${randomUUID().slice(0, 8)}_`
  switch (kind) {
    case 'sqlite': {
      const dir = mkdtempSync(join(tmpdir(), `sy-drill-${name}-`))
      return {
        kind,
        url: join(dir, 'tasks.db'),
        prefix: '',
        dispose: () => Promise.resolve(rmSync(dir, { recursive: true, force: true })),
      }
    }
    case 'postgres':
      return {
        kind,
        url: PG_URL,
        prefix,
        dispose: async () => {
          const client = new pg.Client({ connectionString: PG_URL })
          await client.connect()
          for (const table of TASK_TABLES)
            await client.query(`drop table if exists "${prefix}${table}"`)
          await client.end()
        },
      }
    case 'mysql':
      return {
        kind,
        url: MYSQL_URL,
        prefix,
        dispose: async () => {
          const connection = await mysql.createConnection(MYSQL_URL)
          for (const table of TASK_TABLES)
            await connection.query(`drop table if exists \`${prefix}${table}\``)
          await connection.end()
        },
      }
    case 'redis': {
      const redis = new PrivateRedis(await freePort())
      await redis.start()
      return { kind, url: redis.url, prefix: `${prefix}:`, dispose: () => redis.stop() }
    }
  }
}

/** The environment that tells a child which store to open. */
export function storeEnv(store: DrillStore): Record<string, string> {
  return { SY_STORE_KIND: store.kind, SY_STORE_URL: store.url, SY_STORE_PREFIX: store.prefix }
}

/**
 * In a child: opens the store {@link storeEnv} describes (the test suite's multi-process
 * children too), with SQL pools of `poolSize` connections.
 */
export function openStoreFromEnv(poolSize = 4): DurableTaskStore {
  return openStore(
    {
      kind: process.env.SY_STORE_KIND as StoreKind,
      url: process.env.SY_STORE_URL ?? '',
      prefix: process.env.SY_STORE_PREFIX ?? '',
    },
    poolSize,
  )
}

/** Opens the store `where` describes (kind, URL or SQLite path, prefix), SQL pools of `poolSize`. */
export function openStore(
  where: Pick<DrillStore, 'kind' | 'url' | 'prefix'>,
  poolSize = 4,
): DurableTaskStore {
  const { kind, url, prefix } = where
  switch (kind) {
    case 'sqlite':
      return sqliteStore(url)
    case 'postgres':
      return postgresStore({ connectionString: url, poolSize }, { tablePrefix: prefix })
    case 'mysql':
      return mysqlStore({ uri: url, poolSize }, { tablePrefix: prefix })
    case 'redis':
      return redisStore({ url }, { prefix })
    default:
      throw new Error(`unknown store kind ${String(kind)}`)
  }
}

/** What one round of a task drill works with. */
export interface StoreRound {
  store: DrillStore
  /** An empty file the round's children append to (its path goes to them as `SY_OUT`). */
  out: string
  /** The children the round started: push each one, so that it is killed afterwards. */
  children: DrillChild[]
}

/**
 * Runs `body` on a fresh store of `kind` with an empty output file; afterwards, however it
 * ended, kills every child it started and removes the store and the file.
 */
export async function storeRound<T>(
  kind: StoreKind,
  name: string,
  body: (round: StoreRound) => Promise<T>,
): Promise<T> {
  const store = await drillStore(kind, name)
  const dir = mkdtempSync(join(tmpdir(), `sy-drill-${name}-`))
  const out = join(dir, `${name}.txt`)
  writeFileSync(out, '')
  const children: DrillChild[] = []
  try {
    return await body({ store, out, children })
  } finally {
    for (const child of children) await child.kill()
    await store.dispose()
    rmSync(dir, { recursive: true, force: true })
  }
}

/** The figures of `round` on every store kind, run one after the other (they share the machine). */
export async function onEveryStore(
  round: (kind: StoreKind) => Promise<DrillFigure[]>,
): Promise<DrillFigure[]> {
  const figures: DrillFigure[] = []
  for (const kind of STORE_KINDS) figures.push(...(await round(kind)))
  return figures
}
