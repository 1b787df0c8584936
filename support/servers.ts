/**
 * Helpers the tests, the benchmarks and the drills share (never part of the package): whether a
 * local server answers, and how to sweep the Redis keys a run left behind.
 */
import { createConnection, createServer } from 'node:net'
import { Redis } from 'ioredis'

/** The port a URL's scheme implies when the URL names none. */
const DEFAULT_PORTS = new Map([
  ['redis:', 6379],
  ['postgres:', 5432],
  ['postgresql:', 5432],
  ['mysql:', 3306],
])

/**
 * True when a TCP connection to the host and port of `url` succeeds within `timeoutMs`; any
 * refusal, error or timeout is false.
 */
export function serverReachable(url: string, timeoutMs = 1000): Promise<boolean> {
  const { hostname, port, protocol } = new URL(url)
  return new Promise((resolve) => {
    const socket = createConnection({
      host: hostname,
      port: port === '' ? (DEFAULT_PORTS.get(protocol) ?? 0) : Number(port),
    })
    const done = (ok: boolean) => {
      socket.destroy()
      resolve(ok)
    }
    socket.setTimeout(timeoutMs, () => done(false))
    socket.once('connect', () => done(true))
    socket.once('error', () => done(false))
  })
}

/** A free TCP port on 127.0.0.1 (free when asked: something else may take it before it is used). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
  })
}

/** Deletes every key under `prefix` on the Redis at `url` (SCAN, never KEYS). */
export async function deleteRedisKeys(url: string, prefix: string): Promise<void> {
  const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 })
  try {
    await client.connect()
    let cursor = '0'
    do {
      const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000)
      cursor = next
      if (keys.length > 0) await client.del(...keys)
    } while (cursor !== '0')
  } finally {
    client.disconnect()
  }
}
