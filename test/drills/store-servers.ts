/**
 * Which task stores the drills' short forms can use here: SQLite always, PostgreSQL and MariaDB
 * when their local server answers (skipped with a warning otherwise, failing in CI), Redis when
 * `redis-server` can be started (the drills run a private one).
 */
import { execFileSync } from 'node:child_process'
import type { StoreKind } from '../../drill/lib/task-stores.js'
import { serverEnabled } from '../helpers/servers.js'
import { MYSQL_URL, PG_URL } from '../tasks/persistence/helpers.js'

/** True when `redis-server` is installed. */
export const hasRedisServer = (() => {
  try {
    execFileSync('redis-server', ['--version'], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
})()

/** Whether the short form of a drill can run on `kind` (warns when it is skipped). */
export async function storeAvailable(kind: StoreKind, file: string): Promise<boolean> {
  switch (kind) {
    case 'sqlite':
      return true
    case 'postgres':
      return serverEnabled(PG_URL, file)
    case 'mysql':
      return serverEnabled(MYSQL_URL, file)
    case 'redis':
      if (hasRedisServer || process.env.CI !== undefined) return true
      console.warn(`\n!!! ${file}: redis-server is not installed — SKIPPING the Redis store !!!\n`)
      return false
  }
}
