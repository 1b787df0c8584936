import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  ALGORITHMS,
  type Algorithm,
  type CounterOutcome,
  type CounterRule,
} from '../../src/rate-limit/algorithms.js'
import { memoryCounters } from '../../src/rate-limit/counters/memory.js'
import { MAX_BATCH, redisCounters } from '../../src/rate-limit/counters/redis.js'
import type { CounterCheck } from '../../src/rate-limit/counters/types.js'
import { rateLimit } from '../../src/fastify/index.js'
import { limitedApp, statuses } from './helpers.js'
import { redisTestsEnabled, TEST_REDIS_URL } from '../helpers/redis.js'

const url = TEST_REDIS_URL
const prefix = `test:rl:${process.pid}:`
const run = promisify(execFile)

/** The outcome fields alone (memory counters hand back their algorithm steps, which carry more). */
const verdicts = (outcomes: readonly CounterOutcome[]): CounterOutcome[] =>
  outcomes.map(({ allowed, effective, remaining, resetAt, retryAfterMs }) => ({
    allowed,
    effective,
    remaining,
    resetAt,
    retryAfterMs,
  }))

type Method = (...args: unknown[]) => unknown

/** `target` with its methods bound, where `replace` may swap one (by name) for another. */
function intercepted(
  target: Redis,
  replace: (property: string | symbol, method: Method) => Method,
): Redis {
  return new Proxy(target, {
    get(object, property, receiver) {
      const value = Reflect.get(object, property, receiver) as unknown
      if (typeof value !== 'function') return value
      return replace(property, (value as Method).bind(object))
    },
  })
}

/** A client over `target` that counts its EVALSHA and EVAL calls. */
function countingClient(target: Redis) {
  let calls = 0
  const client = intercepted(target, (property, method) =>
    property === 'evalsha' || property === 'eval'
      ? (...args) => {
          calls++
          return method(...args)
        }
      : method,
  )
  return { client, calls: () => calls, resetCalls: () => (calls = 0) }
}

const available = await redisTestsEnabled('Redis rate-limit tests')

describe.skipIf(!available)('Redis counters', () => {
  let client: Redis
  beforeAll(() => {
    client = new Redis(url)
  })
  afterAll(async () => {
    const keys = await client.keys(`${prefix}*`)
    if (keys.length > 0) await client.del(...keys)
    await client.quit()
  })

  it('match the memory counters outcome for outcome, for every algorithm', async () => {
    const t0 = 1_800_000_000_000
    // 5 requests per 10 s with burst 2, at irregular times across three windows
    const offsets = [
      0, 1, 2, 3, 4, 5, 6, 7, 2500, 4000, 9999, 10_000, 10_001, 12_000, 15_000, 15_001, 19_999,
      21_000, 26_000, 26_001, 40_000,
    ]
    for (const algorithm of ALGORITHMS) {
      const memory = memoryCounters({ sweepInterval: 0 })
      const redis = redisCounters({ commandTimeout: 10, client, prefix: `${prefix}parity:` })
      const rule: CounterRule = { algorithm, count: 5, periodMs: 10_000, burst: 2 }
      const checks: CounterCheck[] = [
        { scope: 'global', bucket: `ip:${algorithm}`, rule: { ...rule, count: 8, burst: 0 } },
        { scope: 'route:default:GET:/p', bucket: `ip:${algorithm}`, rule },
      ]
      for (const offset of offsets) {
        const expected = verdicts(memory.consume(checks, t0 + offset))
        expect({ algorithm, offset, outcomes: await redis.consume(checks, t0 + offset) }).toEqual({
          algorithm,
          offset,
          outcomes: expected,
        })
      }
    }
  })

  it('peek matches the memory counters for every algorithm, counts nothing and writes nothing', async () => {
    const t0 = 1_800_000_000_000
    const offsets = [0, 1, 2, 3, 4, 5, 6, 7, 2500, 9999, 10_000, 10_001, 15_000, 21_000, 40_000]
    for (const algorithm of ALGORITHMS) {
      const memory = memoryCounters({ sweepInterval: 0 })
      const redis = redisCounters({ commandTimeout: 10, client, prefix: `${prefix}peek:` })
      const rule: CounterRule = { algorithm, count: 5, periodMs: 10_000, burst: 2 }
      // the first limit blocks before the second: a peek still evaluates both
      const checks: CounterCheck[] = [
        { scope: 'global', bucket: `ip:${algorithm}`, rule: { ...rule, count: 3, burst: 0 } },
        { scope: 'route:default:GET:/p', bucket: `ip:${algorithm}`, rule },
      ]
      const fresh = await redis.peek(checks, t0)
      expect(fresh.map((outcome) => outcome.allowed)).toEqual([true, true])
      expect(await client.exists(redis.keyOf('global', `ip:${algorithm}`))).toBe(0)
      for (const offset of offsets) {
        const now = t0 + offset
        const expected = verdicts(memory.peek(checks, now))
        expect(expected).toHaveLength(2)
        expect({ algorithm, offset, peeked: await redis.peek(checks, now) }).toEqual({
          algorithm,
          offset,
          peeked: expected,
        })
        // peeking twice gives the same answer: nothing was counted
        expect(verdicts(await redis.peek(checks, now))).toEqual(expected)
        expect(await redis.consume(checks, now)).toEqual(verdicts(memory.consume(checks, now)))
      }
    }
  })

  it('a blocked limit stops evaluation: later counters are not touched', async () => {
    const redis = redisCounters({ commandTimeout: 10, client, prefix: `${prefix}order:` })
    const rule = (count: number): CounterRule => ({
      algorithm: 'fixed_window',
      count,
      periodMs: 60_000,
      burst: 0,
    })
    const checks = [
      { scope: 'global', bucket: 'ip:a', rule: rule(1) },
      { scope: 'route:default:GET:/o', bucket: 'ip:a', rule: rule(5) },
    ]
    const now = 1_800_000_000_000
    expect((await redis.consume(checks, now)).map((o) => o.allowed)).toEqual([true, true])
    expect((await redis.consume(checks, now)).map((o) => o.allowed)).toEqual([false])
    // the route counter saw only the first request: 5 - 2 = 3 left after one more
    expect((await redis.consume(checks.slice(1), now))[0]?.remaining).toBe(3)
  })

  it('keys expire with their window', async () => {
    const redis = redisCounters({ commandTimeout: 10, client, prefix: `${prefix}ttl:` })
    const now = Date.now()
    await redis.consume(
      [
        {
          scope: 'global',
          bucket: 'ip:t',
          rule: { algorithm: 'moving_window', count: 3, periodMs: 5000, burst: 0 },
        },
      ],
      now,
    )
    const ttl = await client.pttl(redis.keyOf('global', 'ip:t'))
    expect(ttl).toBeGreaterThan(0)
    expect(ttl).toBeLessThanOrEqual(5000)
  })

  it('resets exactly one scope, never a prefix or substring of another', async () => {
    const redis = redisCounters({ commandTimeout: 10, client, prefix: `${prefix}reset:` })
    const rule: CounterRule = { algorithm: 'fixed_window', count: 1, periodMs: 60_000, burst: 0 }
    const scopes = [
      'route:default:GET:/a',
      'route:default:GET:/a/b',
      'route:default:GET:/ab',
      'route:default:GET:/a*',
    ]
    const now = 1_800_000_000_000
    for (const scope of scopes) await redis.consume([{ scope, bucket: 'ip:x', rule }], now)
    await redis.reset('route:default:GET:/a')
    const allowed = async (scope: string) =>
      (await redis.consume([{ scope, bucket: 'ip:x', rule }], now))[0]?.allowed
    expect(await allowed('route:default:GET:/a')).toBe(true)
    expect(await allowed('route:default:GET:/a/b')).toBe(false)
    expect(await allowed('route:default:GET:/ab')).toBe(false)
    await redis.reset('route:default:GET:/a*')
    expect(await allowed('route:default:GET:/a/b')).toBe(false)
    expect(await allowed('route:default:GET:/a*')).toBe(true)
  })

  it('recovers when Redis lost the script (NOSCRIPT)', async () => {
    const redis = redisCounters({ commandTimeout: 10, client, prefix: `${prefix}noscript:` })
    await client.script('FLUSH')
    const outcomes = await redis.consume(
      [
        {
          scope: 'global',
          bucket: 'ip:n',
          rule: { algorithm: 'token_bucket', count: 2, periodMs: 1000, burst: 0 },
        },
      ],
      Date.now(),
    )
    expect(outcomes[0]?.allowed).toBe(true)
  })

  for (const algorithm of [
    'fixed_window',
    'moving_window',
    'token_bucket',
    'sliding_window',
  ] as Algorithm[]) {
    it(`two processes sharing ${algorithm} counters allow exactly the limit in total`, async () => {
      const shared = `${prefix}procs:${algorithm}:`
      const now = String(1_800_000_000_000 + 12_345)
      const args = (n: number) => [
        '--import',
        'tsx',
        'test/rate-limit/fixtures/redis-consumer.ts',
        url,
        shared,
        algorithm,
        String(n),
        now,
      ]
      const [a, b] = await Promise.all([
        run(process.execPath, args(40)),
        run(process.execPath, args(40)),
      ])
      const total =
        (JSON.parse(a.stdout) as { allowed: number }).allowed +
        (JSON.parse(b.stdout) as { allowed: number }).allowed
      expect(total).toBe(55) // 50 + burst 5, out of 80
    })
  }

  it('end to end: one round trip per request for route + global limits', async () => {
    const { client: counting, calls, resetCalls } = countingClient(client)
    const counters = redisCounters({
      commandTimeout: 10,
      client: counting,
      prefix: `${prefix}e2e:`,
    })
    const { app, limits } = await limitedApp(
      [{ path: '/x', hooks: [rateLimit({ limit: '3/minute' })] }],
      {
        rateLimit: { counters },
      },
    )
    await limits.global.set({ limit: '100/minute' })
    resetCalls()
    expect(await statuses(app, 4)).toEqual([200, 200, 200, 429])
    expect(calls()).toBe(4)
    const res = await app.inject('/x')
    expect(res.json()).toMatchObject({ error: { code: 'RATE_LIMITED', limit: '3/minute' } })
    await limits.resetRateLimit('/x')
    expect(await statuses(app, 1)).toEqual([200])
  })

  it('requests of one event-loop turn share one EVALSHA, with exactly the outcomes of separate calls', async () => {
    const { client: counting, calls } = countingClient(client)
    const batched = redisCounters({
      commandTimeout: 10,
      client: counting,
      prefix: `${prefix}batch:`,
    })
    const separate = memoryCounters({ sweepInterval: 0 })
    const now = 1_800_000_000_000 + 777
    const checks = (i: number): CounterCheck[] => [
      {
        scope: 'global',
        bucket: 'ip:shared',
        rule: { algorithm: 'sliding_window', count: 40, periodMs: 60_000, burst: 0 },
      },
      {
        scope: 'route:default:GET:/b',
        bucket: `ip:${i % 3}`,
        rule: { algorithm: 'fixed_window', count: 10, periodMs: 60_000, burst: 0 },
      },
    ]
    // 60 requests issued in the same turn: 3 clients × 10 on the route, 40 in total globally
    const outcomes = await Promise.all(
      Array.from({ length: 60 }, (_, i) => batched.consume(checks(i), now)),
    )
    expect(calls()).toBe(1)
    const expected = Array.from({ length: 60 }, (_, i) =>
      verdicts(separate.consume(checks(i), now)),
    )
    expect(outcomes).toEqual(expected)
    expect(outcomes.filter((o) => o.length === 2 && o.every((x) => x.allowed))).toHaveLength(30)
  })

  it('a batch whose requests share some rules and not others counts each limit by its own rule', async () => {
    const batched = redisCounters({ commandTimeout: 10, client, prefix: `${prefix}rules:` })
    const separate = memoryCounters({ sweepInterval: 0 })
    const now = 1_800_000_000_000 + 4_321
    // Each rule is sent once per batch and named by its index: reused objects, in a different
    // order from one request to the next, next to rules seen only once.
    const fixed: CounterRule = { algorithm: 'fixed_window', count: 5, periodMs: 60_000, burst: 0 }
    const sliding: CounterRule = {
      algorithm: 'sliding_window',
      count: 7,
      periodMs: 60_000,
      burst: 0,
    }
    const bucket: CounterRule = { algorithm: 'token_bucket', count: 4, periodMs: 60_000, burst: 1 }
    const checks = (i: number): CounterCheck[] => {
      const own: CounterRule = {
        algorithm: 'moving_window',
        count: 1 + (i % 4),
        periodMs: 1_000,
        burst: 0,
      }
      if (i % 3 === 0)
        return [
          { scope: 'global', bucket: 'ip:a', rule: fixed },
          { scope: 'route:default:GET:/m', bucket: 'ip:a', rule: sliding },
        ]
      if (i % 3 === 1) return [{ scope: 'service:s', bucket: 'ip:b', rule: bucket }]
      return [
        { scope: 'route:default:GET:/m', bucket: 'ip:c', rule: sliding },
        { scope: 'global', bucket: 'ip:c', rule: fixed },
        { scope: `route:default:GET:/own${i % 2}`, bucket: 'ip:c', rule: own },
      ]
    }
    const outcomes = await Promise.all(
      Array.from({ length: 40 }, (_, i) => batched.consume(checks(i), now)),
    )
    const expected = Array.from({ length: 40 }, (_, i) =>
      verdicts(separate.consume(checks(i), now)),
    )
    expect(outcomes).toEqual(expected)
    expect(outcomes.some((o) => o.some((x) => !x.allowed))).toBe(true)
  })

  it(`splits a turn of more than ${MAX_BATCH} requests into several EVALSHA, counting exactly`, async () => {
    const { client: counting, calls } = countingClient(client)
    const batched = redisCounters({
      commandTimeout: 10,
      client: counting,
      prefix: `${prefix}split:`,
    })
    const rule: CounterRule = { algorithm: 'token_bucket', count: 250, periodMs: 60_000, burst: 0 }
    const check: CounterCheck[] = [{ scope: 'global', bucket: 'ip:s', rule }]
    const now = Date.now()
    const outcomes = await Promise.all(
      Array.from({ length: 300 }, () => batched.consume(check, now)),
    )
    expect(calls()).toBe(Math.ceil(300 / MAX_BATCH))
    expect(outcomes.filter((o) => o[0]?.allowed === true)).toHaveLength(250)
    expect(outcomes.at(-1)?.[0]).toMatchObject({ allowed: false, remaining: 0 })
  })

  it('a failed batch rejects every request in it, and the next turn works again', async () => {
    let failing = true
    const flaky = intercepted(client, (property, method) =>
      property === 'evalsha' && failing
        ? () => Promise.reject(new Error('connection lost'))
        : method,
    )
    const counters = redisCounters({ commandTimeout: 10, client: flaky, prefix: `${prefix}flaky:` })
    const check: CounterCheck[] = [
      {
        scope: 'global',
        bucket: 'ip:f',
        rule: { algorithm: 'fixed_window', count: 5, periodMs: 60_000, burst: 0 },
      },
    ]
    const results = await Promise.allSettled([
      counters.consume(check, Date.now()),
      counters.consume(check, Date.now()),
    ])
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected'])
    failing = false
    expect((await counters.consume(check, Date.now()))[0]).toMatchObject({
      allowed: true,
      remaining: 4,
    })
  })

  it('a client that throws instead of rejecting fails the batch, not the process', async () => {
    const throwing = intercepted(client, (property, method) =>
      property === 'evalsha'
        ? () => {
            throw new Error('not connected')
          }
        : method,
    )
    const counters = redisCounters({
      commandTimeout: 10,
      client: throwing,
      prefix: `${prefix}throwing:`,
    })
    const check: CounterCheck[] = [
      {
        scope: 'global',
        bucket: 'ip:t',
        rule: { algorithm: 'fixed_window', count: 5, periodMs: 60_000, burst: 0 },
      },
    ]
    await expect(counters.consume(check, Date.now())).rejects.toThrow('not connected')
  })

  it('close() still answers the requests of the current turn', async () => {
    const own = new Redis(url)
    const counters = redisCounters({ commandTimeout: 10, client: own, prefix: `${prefix}close:` })
    const pending = counters.consume(
      [
        {
          scope: 'global',
          bucket: 'ip:c',
          rule: { algorithm: 'fixed_window', count: 5, periodMs: 60_000, burst: 0 },
        },
      ],
      Date.now(),
    )
    await counters.close()
    expect((await pending)[0]?.allowed).toBe(true)
    await own.quit()
  })

  it('fails open when Redis is unreachable', async () => {
    const broken = new Redis('redis://127.0.0.1:1', {
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
      enableOfflineQueue: false,
    })
    const { app } = await limitedApp([{ path: '/x', hooks: [rateLimit({ limit: '1/minute' })] }], {
      rateLimit: { counters: redisCounters({ commandTimeout: 10, client: broken, prefix }) },
    })
    expect(await statuses(app, 3)).toEqual([200, 200, 200])
    broken.disconnect()
  })
})
