/**
 * The local servers the integration tests use (Redis, PostgreSQL, MariaDB): one reachability
 * probe for all. A suite skips only when `CI` is unset and its server is unreachable, with a
 * loud warning; in CI an unreachable server makes its tests run and fail.
 */
import { serverReachable } from '../../support/servers.js'

/** Whether the tests of `file` that need the server at `url` run; warns when they are skipped. */
export async function serverEnabled(url: string, file: string): Promise<boolean> {
  if (await serverReachable(url)) return true
  if (process.env.CI !== undefined) return true // in CI the tests run and fail loudly
  console.warn(`\n!!! ${file}: ${url} is unreachable — SKIPPING these tests (set CI to fail) !!!\n`)
  return false
}
