/**
 * The local servers the integration tests use (Redis, PostgreSQL, MariaDB): one reachability
 * probe for all. A suite skips only when `CI` is unset and its server is unreachable, with a
 * loud warning; in CI an unreachable server makes its tests run and fail.
 */
import { createConnection } from 'node:net'

/** True when a TCP connection to the server of `url` succeeds within a second. */
export function serverReachable(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url)
  const defaults: Record<string, number> = { 'redis:': 6379, 'postgres:': 5432, 'mysql:': 3306 }
  return new Promise((resolve) => {
    const socket = createConnection({
      host: hostname,
      port: Number(port || defaults[new URL(url).protocol] || 0),
    })
    const done = (ok: boolean) => {
      socket.destroy()
      resolve(ok)
    }
    socket.setTimeout(1000, () => done(false))
    socket.once('connect', () => done(true))
    socket.once('error', () => done(false))
  })
}

/** Whether the tests of `file` that need the server at `url` run; warns when they are skipped. */
export async function serverEnabled(url: string, file: string): Promise<boolean> {
  if (await serverReachable(url)) return true
  if (process.env.CI !== undefined) return true // in CI the tests run and fail loudly
  console.warn(`\n!!! ${file}: ${url} is unreachable — SKIPPING these tests (set CI to fail) !!!\n`)
  return false
}
