/**
 * Redis `records.list` with several filters intersects their indexes into a temporary key. The
 * key must expire on its own: a process that dies between the intersection and the delete
 * (simulated here by a client that drops the DEL) must not leave it behind forever.
 */
import { Redis } from 'ioredis'
import { afterAll, describe, expect, it } from 'vitest'
import { redisStore } from '../../../src/tasks/stores/index.js'
import { makeTask, REDIS_URL, serverEnabled, uniquePrefix } from './helpers.js'

const prefix = `sy-test:${uniquePrefix('redislist')}`
const enabled = await serverEnabled(REDIS_URL, 'redis-list.test.ts')
const raw = enabled ? new Redis(REDIS_URL) : null

afterAll(async () => {
  if (raw === null) return
  const keys = await raw.keys(`${prefix}*`)
  if (keys.length > 0) await raw.del(...keys)
  raw.disconnect()
})

describe.skipIf(!enabled)('Redis task list', () => {
  it('gives the temporary intersection key a TTL', async () => {
    const client = raw!
    // Forwards every command except the DEL of temporary keys (a crash right before it).
    const leaky = {
      call: (command: string, ...args: (string | number)[]) =>
        command === 'DEL' && String(args[0]).includes('tmp:')
          ? Promise.resolve(0)
          : client.call(command, ...args),
      quit: () => Promise.resolve('OK'),
    }
    const store = redisStore({ client: leaky }, { prefix })
    await store.records.save([makeTask({ func_name: 'f', status: 'pending', queue: 'q' })])
    const page = await store.records.list({ funcName: 'f', queue: 'q', page: 1, perPage: 10 })
    expect(page.total).toBe(1)
    const temporary = await client.keys(`${prefix}tmp:*`)
    expect(temporary).toHaveLength(1)
    const ttl = await client.pttl(temporary[0]!)
    expect(ttl).toBeGreaterThan(0)
    expect(ttl).toBeLessThanOrEqual(60_000)
  })
})
