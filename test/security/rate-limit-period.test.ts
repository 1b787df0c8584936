import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ValidationError } from '../../src/core/errors.js'
import { MAX_PERIOD_MS, parseLimit } from '../../src/rate-limit/limit.js'
import { memoryCounters } from '../../src/rate-limit/counters/memory.js'
import { redisCounters } from '../../src/rate-limit/counters/redis.js'
import type { CounterStore } from '../../src/rate-limit/counters/types.js'
import { rateLimit } from '../../src/fastify/index.js'
import { deleteKeys, redisTestsEnabled, TEST_REDIS_URL, testPrefix } from '../helpers/redis.js'
import { limitedApp, statuses } from '../rate-limit/helpers.js'

const tooLong = ['1/9007199254740991 days', '1/366 days', '5/8785 hours', '1/31536001 seconds']

describe('rate-limit periods are bounded to one year', () => {
  it('accepts exactly one year', () => {
    expect(parseLimit('1/365 days').periodMs).toBe(MAX_PERIOD_MS)
    expect(parseLimit('1/8760 h').periodMs).toBe(MAX_PERIOD_MS)
  })

  it.each(tooLong)('rejects %j with an error naming the limit string', (text) => {
    let error: unknown
    try {
      parseLimit(text)
    } catch (caught) {
      error = caught
    }
    expect(error).toBeInstanceOf(ValidationError)
    expect(error).toMatchObject({ code: 'VALIDATION_ERROR' })
    expect((error as Error).message).toContain(JSON.stringify(text))
    expect((error as Error).message).toContain('one year')
  })

  it('a route decorator with a longer period fails at definition', () => {
    expect(() => rateLimit({ limit: '1/9007199254740991 days' })).toThrow(/one year/)
  })
})

const redisAvailable = await redisTestsEnabled('rate-limit period bound (Redis)')

describe('runtime policies with a longer period are refused and change nothing', () => {
  const prefix = testPrefix('rl-period')
  let client: Redis | undefined
  beforeAll(() => {
    if (redisAvailable) client = new Redis(TEST_REDIS_URL)
  })
  afterAll(async () => {
    await deleteKeys(prefix)
    await client?.quit()
  })

  const backends: [string, () => CounterStore | undefined][] = [
    ['memory', () => memoryCounters({ sweepInterval: 0 })],
    [
      'redis',
      () =>
        client === undefined
          ? undefined
          : redisCounters({ commandTimeout: 10, client, prefix: `${prefix}app:` }),
    ],
  ]

  it.each(backends)('on %s counters', async (name, make) => {
    const counters = make()
    if (counters === undefined) return // Redis skipped (warned above)
    const { app, limits } = await limitedApp([{ path: '/x' }], { rateLimit: { counters } })
    await limits.setRateLimitPolicy({ path: '/x', method: 'GET', limit: '2/minute' })
    for (const limit of tooLong) {
      await expect(
        limits.setRateLimitPolicy({ path: '/x', method: 'GET', limit }),
      ).rejects.toMatchObject({ code: 'VALIDATION_ERROR', message: expect.stringContaining(limit) })
      await expect(limits.global.set({ limit })).rejects.toMatchObject({
        code: 'VALIDATION_ERROR',
      })
      await expect(limits.service('default').set({ limit })).rejects.toMatchObject({
        code: 'VALIDATION_ERROR',
      })
    }
    expect(limits.listRateLimitPolicies().map((p) => p.limit)).toEqual(['2/minute'])
    // the stored policy is still enforced
    expect(await statuses(app, 3)).toEqual([200, 200, 429])
    if (name === 'redis' && client !== undefined) {
      const keys = await client.keys(`${prefix}app:*`)
      expect(keys.length).toBeGreaterThan(0)
      for (const key of keys) expect(await client.pttl(key)).toBeGreaterThan(0)
    }
    await app.close()
  })

  it.skipIf(!redisAvailable)(
    'the Redis script refuses an unbounded rule before writing any key',
    async () => {
      const counters = redisCounters({
        commandTimeout: 10,
        client: client!,
        prefix: `${prefix}script:`,
      })
      for (const algorithm of ['fixed_window', 'sliding_window', 'token_bucket'] as const) {
        // a rule built without parseLimit (its period beyond what Redis can expire)
        const consumed = counters.consume(
          [
            {
              scope: 'global',
              bucket: `ip:${algorithm}`,
              rule: { algorithm, count: 1, periodMs: 86_400_000 * 9007199254740991, burst: 0 },
            },
          ],
          Date.now(),
        )
        await expect(consumed).rejects.toThrow(/invalid rate-limit rule/)
      }
      expect(await client!.keys(`${prefix}script:*`)).toEqual([])
    },
  )
})
