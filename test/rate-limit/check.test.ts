/**
 * engine.rateLimits.check / consume: the answer of a route's limits for one caller, as data,
 * on memory and Redis counters.
 */
import { afterAll, describe, expect, it } from 'vitest'
import { rateLimit } from '../../src/fastify/index.js'
import type { RequestView } from '../../src/core/enforcement.js'
import { redisCounters } from '../../src/rate-limit/counters/redis.js'
import type { RateLimitingOptions } from '../../src/rate-limit/options.js'
import { deleteKeys, redisTestsEnabled, testPrefix, TEST_REDIS_URL } from '../helpers/redis.js'
import { limitedApp, type TestRoute } from './helpers.js'

/** A request as the limits see it; inject() requests come from 127.0.0.1. */
function caller(ip = '127.0.0.1', extra: Partial<RequestView> = {}): RequestView {
  return { method: 'GET', url: '/quota', headers: {}, ip, ...extra }
}

const redisAvailable = await redisTestsEnabled('rate-limit check API (Redis)')
const prefixes: string[] = []
afterAll(async () => {
  for (const prefix of prefixes) await deleteKeys(prefix)
})

type Backend = { name: string; enabled: boolean; options: () => RateLimitingOptions }
const backends: Backend[] = [
  { name: 'memory counters', enabled: true, options: () => ({}) },
  {
    name: 'Redis counters',
    enabled: redisAvailable,
    options: () => {
      const prefix = testPrefix('rl-check')
      prefixes.push(prefix)
      return { counters: redisCounters({ url: TEST_REDIS_URL, prefix, commandTimeout: 5 }) }
    },
  },
]

for (const backend of backends) {
  describe.skipIf(!backend.enabled)(`check and consume on ${backend.name}`, () => {
    const build = async (routes: TestRoute[]) => {
      const built = await limitedApp(routes, { rateLimit: backend.options() })
      return built
    }
    const limited = (options: Parameters<typeof rateLimit>[0]) =>
      build([{ path: '/x', hooks: [rateLimit(options)] }, { path: '/free' }])

    it('check counts nothing; consume counts one request like a served one', async () => {
      const { app, limits, engine } = await limited({ limit: '3/minute' })
      try {
        for (let i = 0; i < 4; i++) {
          const peeked = await limits.check({ route: 'GET:/x', request: caller() })
          expect(peeked).toMatchObject({ allowed: true, remaining: 3 })
        }
        expect((await app.inject('/x')).statusCode).toBe(200)
        expect(await limits.check({ route: 'GET:/x', request: caller() })).toMatchObject({
          remaining: 2,
        })
        expect(await limits.consume({ route: 'GET:/x', request: caller() })).toMatchObject({
          allowed: true,
          remaining: 1,
        })
        expect(await limits.check({ route: 'GET:/x', request: caller() })).toMatchObject({
          remaining: 1,
        })
        expect((await app.inject('/x')).statusCode).toBe(200)
        expect((await app.inject('/x')).statusCode).toBe(429)
      } finally {
        await app.close()
        await engine.close()
      }
    })

    it('every field at the boundary, and per caller', async () => {
      const { app, limits, engine, clock } = await limited({ limit: '3/minute' })
      try {
        const input = { route: 'GET:/x', request: caller() }
        const allowed = {
          allowed: true,
          limit: '3/minute',
          reset_at: '2026-11-21T12:01:00.000+00:00',
          retry_after_seconds: 0,
          key: 'rl:route:default:GET:/x:ip:127.0.0.1',
          tier: null,
          key_was_missing: false,
          missing_key_behaviour: 'exempt',
        }
        expect(await limits.consume(input)).toEqual({ ...allowed, remaining: 2 })
        expect(await limits.consume(input)).toEqual({ ...allowed, remaining: 1 })
        clock.advance(15_000)
        expect(await limits.check(input)).toEqual({ ...allowed, remaining: 1 })
        expect(await limits.consume(input)).toEqual({ ...allowed, remaining: 0 })
        const refused = {
          ...allowed,
          allowed: false,
          remaining: 0,
          retry_after_seconds: 45,
        }
        expect(await limits.check(input)).toEqual(refused)
        expect(await limits.consume(input)).toEqual(refused)
        expect((await app.inject('/x')).statusCode).toBe(429)
        // another caller has a bucket of its own
        expect(await limits.check({ route: 'GET:/x', request: caller('10.0.0.2') })).toEqual({
          ...allowed,
          remaining: 3,
          key: 'rl:route:default:GET:/x:ip:10.0.0.2',
        })
        // consume past the limit counted nothing: the next window starts full
        clock.advance(45_000)
        expect(await limits.check(input)).toMatchObject({ allowed: true, remaining: 3 })
      } finally {
        await app.close()
        await engine.close()
      }
    })

    it('the deciding limit: the first that blocks, else the fewest left', async () => {
      const { app, limits, engine } = await limited({ limit: '5/minute' })
      try {
        await limits.global.set({ limit: '2/minute' })
        const input = { route: 'GET:/x', request: caller() }
        expect(await limits.consume(input)).toMatchObject({
          limit: '2/minute',
          remaining: 1,
          key: 'rl:global:ip:127.0.0.1',
        })
        expect(await limits.consume(input)).toMatchObject({ allowed: true, remaining: 0 })
        expect(await limits.consume(input)).toMatchObject({
          allowed: false,
          limit: '2/minute',
        })
        await limits.global.delete()
        // the refused request was not counted on the route: 5 - 2 left
        expect(await limits.check(input)).toMatchObject({ limit: '5/minute', remaining: 3 })
      } finally {
        await app.close()
        await engine.close()
      }
    })

    it('missing keys: fallback_ip, block, exempt', async () => {
      const { app, limits, engine } = await build([
        { path: '/keyed', hooks: [rateLimit({ limit: '2/minute', key: 'api_key' })] },
        {
          path: '/strict',
          hooks: [rateLimit({ limit: '2/minute', key: 'user', onMissingKey: 'block' })],
        },
        { path: '/users', hooks: [rateLimit({ limit: '2/minute', key: 'user' })] },
      ])
      try {
        expect(await limits.consume({ route: 'GET:/keyed', request: caller() })).toMatchObject({
          allowed: true,
          key: 'rl:route:default:GET:/keyed:ip:127.0.0.1',
          key_was_missing: true,
          missing_key_behaviour: 'fallback_ip',
        })
        const withKey = caller('127.0.0.1', { headers: { 'x-api-key': 'key-of-client-one' } })
        const keyed = await limits.consume({ route: 'GET:/keyed', request: withKey })
        expect(keyed).toMatchObject({ allowed: true, remaining: 1, key_was_missing: false })
        // the key is never shown in full
        expect(keyed?.key).not.toContain('key-of-client-one')
        expect(await limits.check({ route: 'GET:/strict', request: caller() })).toEqual({
          allowed: false,
          limit: '2/minute',
          remaining: 0,
          reset_at: '2026-11-21T12:00:00.000+00:00',
          retry_after_seconds: 0,
          key: 'rl:route:default:GET:/strict:(missing)',
          tier: null,
          key_was_missing: true,
          missing_key_behaviour: 'block',
        })
        expect(await limits.check({ route: 'GET:/users', request: caller() })).toBeNull()
        const user = caller('127.0.0.1', { state: { userId: 'u-1' } })
        expect(await limits.consume({ route: 'GET:/users', request: user })).toMatchObject({
          allowed: true,
          remaining: 1,
          key_was_missing: false,
          missing_key_behaviour: 'exempt',
        })
      } finally {
        await app.close()
        await engine.close()
      }
    })
  })
}

describe('check and consume: input', () => {
  it('tiers: the caller’s tier decides the limit; an unlimited tier has none', async () => {
    const { app, limits, engine } = await limitedApp([
      {
        path: '/x',
        hooks: [rateLimit({ limit: { free: '2/minute', pro: 'unlimited' }, key: 'user' })],
      },
    ])
    try {
      const free = caller('127.0.0.1', { state: { userId: 'u-1', plan: 'free' } })
      expect(await limits.check({ route: 'GET:/x', request: free })).toMatchObject({
        limit: '2/minute',
        tier: 'free',
        remaining: 2,
      })
      const pro = caller('127.0.0.1', { state: { userId: 'u-2', plan: 'pro' } })
      expect(await limits.check({ route: 'GET:/x', request: pro })).toBeNull()
    } finally {
      await app.close()
      await engine.close()
    }
  })

  it('a route without limits answers null; unknown routes and bad input are clear errors that count nothing', async () => {
    const { app, limits, engine } = await limitedApp([
      { path: '/x', hooks: [rateLimit({ limit: '2/minute' })] },
      { path: '/free' },
    ])
    try {
      expect(await limits.check({ route: 'GET:/free', request: caller() })).toBeNull()
      await expect(limits.consume({ route: 'GET:/nope', request: caller() })).rejects.toMatchObject(
        { code: 'ROUTE_NOT_FOUND', message: expect.stringContaining('GET:/nope') as string },
      )
      await expect(limits.check({ route: 'POST:/x', request: caller() })).rejects.toMatchObject({
        code: 'ROUTE_NOT_FOUND',
      })
      await expect(limits.consume({ route: '/x', request: caller() })).rejects.toMatchObject({
        code: 'VALIDATION_ERROR',
        message: expect.stringContaining('GET:/x') as string,
      })
      await expect(limits.consume({ route: 'x', request: caller() })).rejects.toMatchObject({
        code: 'VALIDATION_ERROR',
      })
      await expect(
        limits.consume({ route: 'GET:/x', request: undefined as unknown as RequestView }),
      ).rejects.toMatchObject({ code: 'VALIDATION_ERROR' })
      await expect(
        limits.consume({ route: 'GET:/x', service: 'Not A Name', request: caller() }),
      ).rejects.toMatchObject({ code: 'VALIDATION_ERROR' })
      await expect(
        limits.check(null as unknown as Parameters<typeof limits.check>[0]),
      ).rejects.toMatchObject({ code: 'VALIDATION_ERROR' })
      expect(await limits.check({ route: 'GET:/x', request: caller() })).toMatchObject({
        remaining: 2,
      })
    } finally {
      await app.close()
      await engine.close()
    }
  })

  it('a /quota endpoint reports the caller’s own quota from its request', async () => {
    const { app, limits, engine } = await limitedApp([
      { path: '/search', hooks: [rateLimit({ limit: '3/minute' })] },
    ])
    try {
      // routes added after ready() are refused, so build a second app sharing the engine
      const { default: Fastify } = await import('fastify')
      const quotaApp = Fastify()
      quotaApp.get('/quota', (request) => limits.check({ route: 'GET:/search', request }))
      await quotaApp.ready()
      await app.inject('/search')
      const res = await quotaApp.inject({ url: '/quota', remoteAddress: '127.0.0.1' })
      expect(res.json()).toMatchObject({ allowed: true, remaining: 2, limit: '3/minute' })
      const other = await quotaApp.inject({ url: '/quota', remoteAddress: '10.0.0.9' })
      expect(other.json()).toMatchObject({ remaining: 3 })
      await quotaApp.close()
    } finally {
      await app.close()
      await engine.close()
    }
  })
})
