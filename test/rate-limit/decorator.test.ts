import Fastify from 'fastify'
import { describe, expect, it } from 'vitest'
import { ConfigError } from '../../src/core/errors.js'
import { createEngine } from '../../src/index.js'
import { maintenance, rateLimit, setStandaloneEngine } from '../../src/fastify/index.js'
import { FakeClock } from '../helpers/clock.js'
import { limitedApp, statuses, times } from './helpers.js'

describe('rateLimit() decorator with the plugin', () => {
  it('allows the N-th request, blocks the N+1-th with the contract 429', async () => {
    const { app, clock } = await limitedApp([
      { path: '/x', hooks: [rateLimit({ limit: '3/minute' })] },
    ])
    expect(await statuses(app, 3)).toEqual([200, 200, 200])
    clock.advance(15_000)
    const blocked = await app.inject('/x')
    expect(blocked.statusCode).toBe(429)
    expect(blocked.json()).toEqual({
      error: {
        code: 'RATE_LIMITED',
        message: 'Too many requests',
        limit: '3/minute',
        retry_after: 45,
      },
    })
    expect(blocked.headers['retry-after']).toBe('45')
    expect(blocked.headers['x-ratelimit-limit']).toBe('3')
    expect(blocked.headers['x-ratelimit-remaining']).toBe('0')
    expect(blocked.headers['x-ratelimit-reset']).toBe(String(clock.time / 1000 + 45))
  })

  it('sends X-RateLimit headers on counted requests', async () => {
    const { app, clock } = await limitedApp([
      { path: '/x', hooks: [rateLimit({ limit: '5/minute', burst: 2 })] },
    ])
    const res = await app.inject('/x')
    expect(res.headers['x-ratelimit-limit']).toBe('7')
    expect(res.headers['x-ratelimit-remaining']).toBe('6')
    expect(res.headers['x-ratelimit-reset']).toBe(String(clock.time / 1000 + 60))
    expect(res.headers['retry-after']).toBeUndefined()
  })

  it("with headers: 'blocked', only 429s carry the X-RateLimit headers", async () => {
    const { app } = await limitedApp([{ path: '/x', hooks: [rateLimit({ limit: '2/minute' })] }], {
      rateLimit: { headers: 'blocked' },
    })
    const allowed = await app.inject('/x')
    expect(allowed.statusCode).toBe(200)
    expect(Object.keys(allowed.headers).filter((name) => name.startsWith('x-ratelimit'))).toEqual(
      [],
    )
    expect((await app.inject('/x')).statusCode).toBe(200)
    const blocked = await app.inject('/x')
    expect(blocked.statusCode).toBe(429)
    expect(blocked.headers['x-ratelimit-limit']).toBe('2')
    expect(blocked.headers['x-ratelimit-remaining']).toBe('0')
    expect(blocked.headers['retry-after']).toBe('60')
  })

  it('rejects an unknown headers mode at registration, before any route is counted', async () => {
    await expect(
      limitedApp([{ path: '/x', hooks: [rateLimit({ limit: '2/minute' })] }], {
        rateLimit: { headers: 'none' as 'all' },
      }),
    ).rejects.toThrow(/Invalid rate-limit headers option "none": expected "all" or "blocked"/)
  })

  it('rolls the window over with the clock', async () => {
    const { app, clock } = await limitedApp([
      { path: '/x', hooks: [rateLimit({ limit: '2/minute' })] },
    ])
    expect(await statuses(app, 3)).toEqual([200, 200, 429])
    clock.advance(59_999)
    expect(await statuses(app, 1)).toEqual([429])
    clock.advance(1)
    expect(await statuses(app, 3)).toEqual([200, 200, 429])
  })

  it('burst adds to the limit', async () => {
    const { app } = await limitedApp([
      { path: '/x', hooks: [rateLimit({ limit: '2/minute', burst: 3 })] },
    ])
    expect(await statuses(app, 6)).toEqual([...times(5, 200), 429])
  })

  it('token_bucket refills over time', async () => {
    const { app, clock } = await limitedApp([
      { path: '/x', hooks: [rateLimit({ limit: '6/minute', algorithm: 'token_bucket' })] },
    ])
    expect(await statuses(app, 7)).toEqual([...times(6, 200), 429])
    clock.advance(10_000)
    expect(await statuses(app, 2)).toEqual([200, 429])
  })

  it('counts each method of a path separately and a HEAD with its GET', async () => {
    const { app } = await limitedApp([
      { path: '/x', hooks: [rateLimit({ limit: '1/minute' })] },
      { method: 'POST', path: '/x', hooks: [rateLimit({ limit: '1/minute' })] },
    ])
    expect((await app.inject({ method: 'POST', url: '/x' })).statusCode).toBe(200)
    expect((await app.inject({ method: 'GET', url: '/x' })).statusCode).toBe(200)
    expect((await app.inject({ method: 'HEAD', url: '/x' })).statusCode).toBe(429)
  })

  it('counts a parameterised route once per pattern bucket, whatever the concrete URL (global key)', async () => {
    const { app } = await limitedApp([
      { path: '/items/:id', hooks: [rateLimit({ limit: '2/minute', key: 'global' })] },
    ])
    expect((await app.inject('/items/1')).statusCode).toBe(200)
    expect((await app.inject('/items/2')).statusCode).toBe(200)
    expect((await app.inject('/items/3')).statusCode).toBe(429)
  })

  it('a route in maintenance consumes no route quota', async () => {
    const { app, engine } = await limitedApp([
      { path: '/x', hooks: [rateLimit({ limit: '2/minute' })] },
    ])
    await engine.setMaintenance('GET:/x', { reason: 'migrating' })
    expect(await statuses(app, 5)).toEqual(times(5, 503))
    await engine.enable('GET:/x')
    expect(await statuses(app, 3)).toEqual([200, 200, 429])
  })

  it('rejects bad options at startup with the accepted form', () => {
    expect(() => rateLimit({ limit: '100/fortnight' })).toThrow(ConfigError)
    expect(() => rateLimit({ limit: '100/fortnight' })).toThrow(/<count>\/<period>/)
    expect(() => rateLimit({ limit: 'unlimited' })).toThrow(/tier/)
    expect(() => rateLimit({ limit: '1/s', algorithm: 'leaky' as never })).toThrow(ConfigError)
    expect(() => rateLimit({ limit: '1/s', key: 'cookie' as never })).toThrow(ConfigError)
    expect(() => rateLimit({ limit: '1/s', burst: -1 })).toThrow(/burst/)
    expect(() => rateLimit({ limit: '1/s', burst: 1.5 })).toThrow(/burst/)
    expect(() => rateLimit({ limit: '1/s', onMissingKey: 'ignore' as never })).toThrow(
      /on_missing_key/,
    )
    expect(() => rateLimit({ limit: '1/s', exemptIps: ['10.0.0.0/33'] })).toThrow(/exempt_ips/)
    expect(() => rateLimit({ limit: '1/s', exemptIps: ['not-an-ip'] })).toThrow(/exempt_ips/)
    expect(() => rateLimit({ limit: '1/s', exemptIps: ['::1/129'] })).toThrow(/exempt_ips/)
    expect(() => rateLimit({ limit: {} })).toThrow(/tier/)
    expect(() => rateLimit({ limit: { free: '1/m' }, defaultTier: 'gold' })).toThrow(/default_tier/)
    expect(() => rateLimit({ limit: { free: 'lots' } })).toThrow(/tier free/)
    expect(() => rateLimit({ limit: '1/s', response: 'nope' as never })).toThrow(/response/)
    expect(() => rateLimit(undefined as never)).toThrow(ConfigError)
  })

  it('refuses two rateLimit decorators on one route', async () => {
    const app = Fastify()
    const { switchyard } = await import('../../src/fastify/index.js')
    await app.register(switchyard, { engine: createEngine({ store: 'memory' }) })
    expect(() =>
      app.get(
        '/x',
        { onRequest: [rateLimit({ limit: '1/s' }), rateLimit({ limit: '2/s' })] },
        () => 'ok',
      ),
    ).toThrow(/at most one/)
  })
})

describe('rateLimit() without the plugin (dependency form)', () => {
  it('enforces with the same counter and the same 429', async () => {
    const clock = new FakeClock(Date.parse('2026-11-21T12:00:00Z'))
    const engine = createEngine({ store: 'memory', env: 'prod', clock })
    setStandaloneEngine(engine)
    const app = Fastify()
    app.get('/x', { onRequest: rateLimit({ limit: '2/minute' }) }, () => ({ ok: true }))
    await app.ready()
    expect(await statuses(app, 2)).toEqual([200, 200])
    const blocked = await app.inject('/x')
    expect(blocked.statusCode).toBe(429)
    expect(blocked.json()).toEqual({
      error: {
        code: 'RATE_LIMITED',
        message: 'Too many requests',
        limit: '2/minute',
        retry_after: 60,
      },
    })
    expect(blocked.headers['x-ratelimit-remaining']).toBe('0')
    // the counter lives in the engine: resetting through the service frees the route
    await engine.resetRateLimit('/x')
    expect(await statuses(app, 1)).toEqual([200])
  })

  it('enforces once per request when combined with a lifecycle decorator', async () => {
    const clock = new FakeClock(Date.parse('2026-11-21T12:00:00Z'))
    const engine = createEngine({ store: 'memory', env: 'prod', clock })
    setStandaloneEngine(engine)
    const app = Fastify()
    app.get(
      '/x',
      {
        onRequest: [
          rateLimit({ limit: '2/minute' }),
          maintenance({ start: clock.iso(3_600_000), end: clock.iso(7_200_000) }),
        ],
      },
      () => ({ ok: true }),
    )
    await app.ready()
    expect(await statuses(app, 3)).toEqual([200, 200, 429])
  })
})
