/**
 * PostgreSQL for the route-control store tests: the real server at `SY_TEST_PG_URL` (default
 * postgres://postgres@127.0.0.1:5432/test). Tests skip only when `CI` is unset and the server
 * is unreachable, with a loud warning. Every test file uses its own table prefix, and drops
 * its tables afterwards.
 */
import { randomUUID } from 'node:crypto'
import pg from 'pg'
import { serverEnabled } from './servers.js'

/** The PostgreSQL the tests use. */
export const TEST_PG_URL = process.env.SY_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test'

/** Whether PostgreSQL tests run; prints the warning when they are skipped. */
export function postgresTestsEnabled(file: string): Promise<boolean> {
  return serverEnabled(TEST_PG_URL, file)
}

/** A unique table prefix for one test file or case (lower case, as PostgreSQL folds it). */
export function testTablePrefix(name: string): string {
  return `sy_${name}_${randomUUID().slice(0, 8)}_`.toLowerCase()
}

/** Runs `work` on a connection of its own. */
export async function withClient<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: TEST_PG_URL })
  await client.connect()
  try {
    return await work(client)
  } finally {
    await client.end()
  }
}

/** Drops every table and function whose name starts with one of `prefixes`. */
export async function dropPrefixed(prefixes: readonly string[]): Promise<void> {
  if (prefixes.length === 0) return
  await withClient(async (client) => {
    for (const prefix of prefixes) {
      const pattern = `${prefix.replace(/_/g, '\\_')}%`
      const tables = await client.query<{ name: string }>(
        `SELECT tablename AS name FROM pg_tables WHERE schemaname = current_schema() AND tablename LIKE $1`,
        [pattern],
      )
      for (const { name } of tables.rows) await client.query(`DROP TABLE IF EXISTS "${name}"`)
      const functions = await client.query<{ name: string }>(
        `SELECT proname AS name FROM pg_proc WHERE proname LIKE $1`,
        [pattern],
      )
      for (const { name } of functions.rows) await client.query(`DROP FUNCTION IF EXISTS "${name}"`)
    }
  })
}

/** Ends the listening connections of the stores on `prefix` (`pg_terminate_backend`). */
export function terminateListeners(prefix: string): Promise<number> {
  return withClient(async (client) => {
    const { rows } = await client.query<{ pid: number }>(
      `SELECT pid FROM pg_stat_activity WHERE application_name = $1`,
      [`${prefix}listener`],
    )
    for (const { pid } of rows) await client.query('SELECT pg_terminate_backend($1)', [pid])
    return rows.length
  })
}
