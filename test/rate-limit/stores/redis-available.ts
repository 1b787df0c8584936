/**
 * Whether the test Redis is reachable. Tests may skip only outside CI, and say so loudly.
 */
import { Redis } from 'ioredis'

/** The test Redis URL. */
export const redisUrl = process.env.CTL_REDIS_URL ?? 'redis://127.0.0.1:6379'

async function reachable(): Promise<boolean> {
  const probe = new Redis(redisUrl, {
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  })
  probe.on('error', () => undefined)
  try {
    await probe.connect()
    await probe.ping()
    return true
  } catch {
    return false
  } finally {
    probe.disconnect()
  }
}

/** True when Redis answers; throws in CI when it does not. */
export async function redisAvailable(what: string): Promise<boolean> {
  const available = await reachable()
  if (!available && process.env.CI)
    throw new Error(`Redis is required in CI but ${redisUrl} is unreachable`)
  if (!available) console.warn(`\n!!! Redis at ${redisUrl} unreachable: SKIPPING ${what} !!!\n`)
  return available
}

/** Deletes every key under `prefix`. */
export async function dropPrefix(prefix: string): Promise<void> {
  const client = new Redis(redisUrl)
  try {
    const keys = await client.keys(`${prefix}*`)
    if (keys.length > 0) await client.del(...keys)
  } finally {
    await client.quit()
  }
}
