import { describe, expect, it } from 'vitest'
import type { FastifyRequest } from 'fastify'
import { rateLimit } from '../../src/fastify/index.js'
import { AddressSet, ClientIpResolver } from '../../src/rate-limit/client-ip.js'
import { limitedApp, statuses, times } from './helpers.js'

const limited = (options: Parameters<typeof rateLimit>[0]) => [
  { path: '/x', hooks: [rateLimit(options)] },
]

/** An auth hook that copies test headers into request.state. */
const auth = (request: FastifyRequest, _reply: unknown, done: () => void) => {
  const user = request.headers['x-test-user']
  if (typeof user === 'string') request.state.userId = user
  const roles = request.headers['x-test-roles']
  if (typeof roles === 'string') {
    const list = roles.split(',')
    request.state.userRoles = request.headers['x-test-set'] ? new Set(list) : list
  }
  const plan = request.headers['x-test-plan']
  if (typeof plan === 'string') request.state.plan = plan
  done()
}

describe('client IP and trusted proxies', () => {
  it('honours X-Forwarded-For (first entry) from a trusted peer', async () => {
    const { app } = await limitedApp(limited({ limit: '1/minute' }))
    const from = (xff: string) => ({
      url: '/x',
      remoteAddress: '127.0.0.1',
      headers: { 'x-forwarded-for': xff },
    })
    expect((await app.inject(from('203.0.113.1, 10.0.0.1'))).statusCode).toBe(200)
    expect((await app.inject(from('203.0.113.2'))).statusCode).toBe(200)
    expect((await app.inject(from('203.0.113.1'))).statusCode).toBe(429)
  })

  it('falls back to X-Real-IP, then the socket', async () => {
    const { app } = await limitedApp(limited({ limit: '1/minute' }))
    const real = { url: '/x', remoteAddress: '10.1.2.3', headers: { 'x-real-ip': '198.51.100.7' } }
    expect((await app.inject(real)).statusCode).toBe(200)
    expect((await app.inject(real)).statusCode).toBe(429)
    expect((await app.inject({ url: '/x', remoteAddress: '10.1.2.3' })).statusCode).toBe(200)
  })

  it('ignores forwarded headers from an untrusted peer', async () => {
    const { app } = await limitedApp(limited({ limit: '1/minute' }))
    const spoof = (xff: string) => ({
      url: '/x',
      remoteAddress: '203.0.113.50',
      headers: { 'x-forwarded-for': xff, 'x-real-ip': xff },
    })
    expect((await app.inject(spoof('1.1.1.1'))).statusCode).toBe(200)
    expect((await app.inject(spoof('2.2.2.2'))).statusCode).toBe(429)
  })

  it('trustedProxies replaces the default list', async () => {
    const { app } = await limitedApp(limited({ limit: '1/minute' }), {
      rateLimit: { trustedProxies: ['203.0.113.0/24'] },
    })
    const via = (peer: string, xff: string) => ({
      url: '/x',
      remoteAddress: peer,
      headers: { 'x-forwarded-for': xff },
    })
    expect((await app.inject(via('203.0.113.9', '1.1.1.1'))).statusCode).toBe(200)
    expect((await app.inject(via('203.0.113.9', '2.2.2.2'))).statusCode).toBe(200)
    // loopback is no longer trusted: both land in the 127.0.0.1 bucket
    expect((await app.inject(via('127.0.0.1', '3.3.3.3'))).statusCode).toBe(200)
    expect((await app.inject(via('127.0.0.1', '4.4.4.4'))).statusCode).toBe(429)
  })

  it('rejects bad trusted proxies', () => {
    expect(() => new ClientIpResolver(['10.0.0.0/8', 'proxy.local'])).toThrow(/trustedProxies/)
  })

  it('matches IPv4-mapped IPv6 peers and skips invalid forwarded values', () => {
    const resolver = new ClientIpResolver()
    const view = (ip: string, headers: Record<string, string> = {}) => ({
      method: 'GET',
      url: '/',
      ip,
      headers,
    })
    expect(resolver.resolve(view('::ffff:10.0.0.1', { 'x-forwarded-for': '192.0.2.1' }))).toBe(
      '192.0.2.1',
    )
    expect(
      resolver.resolve(
        view('10.0.0.1', { 'x-forwarded-for': 'garbage', 'x-real-ip': '192.0.2.9' }),
      ),
    ).toBe('192.0.2.9')
    expect(resolver.resolve(view('', {}))).toBe('unknown')
    expect(resolver.resolve(view('fd00::1', { 'x-forwarded-for': '2001:db8::5' }))).toBe(
      '2001:db8::5',
    )
  })

  it('address sets hold IPv4 and IPv6 addresses and ranges', () => {
    const set = new AddressSet(['10.0.0.0/8', '192.0.2.7', '2001:db8::/32', '::1'], 'exempt_ips')
    expect(set.has('10.200.1.1')).toBe(true)
    expect(set.has('192.0.2.7')).toBe(true)
    expect(set.has('192.0.2.8')).toBe(false)
    expect(set.has('2001:db8:1::1')).toBe(true)
    expect(set.has('2001:db9::1')).toBe(false)
    expect(set.has('::1')).toBe(true)
    expect(set.has('nonsense')).toBe(false)
  })
})

describe('key strategies', () => {
  it('user: one bucket per request.state.userId; missing user is exempt by default', async () => {
    const { app } = await limitedApp(limited({ limit: '1/minute', key: 'user' }), { auth })
    const as = (user: string) => ({ url: '/x', headers: { 'x-test-user': user } })
    expect((await app.inject(as('ann'))).statusCode).toBe(200)
    expect((await app.inject(as('bob'))).statusCode).toBe(200)
    expect((await app.inject(as('ann'))).statusCode).toBe(429)
    const anonymous = await app.inject('/x')
    expect(anonymous.statusCode).toBe(200)
    expect(anonymous.headers['x-ratelimit-limit']).toBeUndefined()
  })

  it('api_key: X-API-Key; missing key falls back to the client IP by default', async () => {
    const { app } = await limitedApp(limited({ limit: '1/minute', key: 'api_key' }))
    const key = (value: string) => ({ url: '/x', headers: { 'x-api-key': value } })
    expect((await app.inject(key('k1'))).statusCode).toBe(200)
    expect((await app.inject(key('k1'))).statusCode).toBe(429)
    // an API key equal to an address never shares the IP bucket
    expect((await app.inject(key('127.0.0.1'))).statusCode).toBe(200)
    expect(await statuses(app, 2)).toEqual([200, 429])
  })

  it('on_missing_key block: 429 with retry_after 0 at once, and nothing is counted', async () => {
    const { app } = await limitedApp(
      limited({ limit: '1/minute', key: 'user', onMissingKey: 'block' }),
      { auth },
    )
    for (let i = 0; i < 3; i++) {
      const res = await app.inject('/x')
      expect(res.statusCode).toBe(429)
      expect(res.json()).toEqual({
        error: {
          code: 'RATE_LIMITED',
          message: 'Too many requests',
          limit: '1/minute',
          retry_after: 0,
        },
      })
      expect(res.headers['retry-after']).toBe('0')
    }
    expect((await app.inject({ url: '/x', headers: { 'x-test-user': 'ann' } })).statusCode).toBe(
      200,
    )
  })

  it('on_missing_key fallback_ip for a user key', async () => {
    const { app } = await limitedApp(
      limited({ limit: '1/minute', key: 'user', onMissingKey: 'fallback_ip' }),
      { auth },
    )
    expect(await statuses(app, 2)).toEqual([200, 429])
    expect((await app.inject({ url: '/x', headers: { 'x-test-user': 'ann' } })).statusCode).toBe(
      200,
    )
  })

  it('custom sync and async keys; null means missing (exempt by default)', async () => {
    const { app } = await limitedApp([
      {
        path: '/sync',
        hooks: [
          rateLimit({
            limit: '1/minute',
            key: (r) => (r.headers['x-tenant'] as string | undefined) ?? null,
          }),
        ],
      },
      {
        path: '/async',
        hooks: [
          rateLimit({
            limit: '1/minute',
            key: (r) => Promise.resolve((r.headers['x-tenant'] as string | undefined) ?? null),
          }),
        ],
      },
    ])
    for (const url of ['/sync', '/async']) {
      const tenant = (t: string) => ({ url, headers: { 'x-tenant': t } })
      expect((await app.inject(tenant('a'))).statusCode).toBe(200)
      expect((await app.inject(tenant('b'))).statusCode).toBe(200)
      expect((await app.inject(tenant('a'))).statusCode).toBe(429)
      expect(await statuses(app, 3, url)).toEqual([200, 200, 200])
    }
  })
})

describe('tiers', () => {
  const tiered = () =>
    limited({ limit: { free: '1/minute', pro: '3/minute', enterprise: 'unlimited' } })

  it('applies the tier named by request.state.plan', async () => {
    const { app } = await limitedApp(tiered(), { auth })
    const plan = (p: string, ip: string) => ({
      url: '/x',
      remoteAddress: ip,
      headers: { 'x-test-plan': p },
    })
    expect(
      [
        await app.inject(plan('free', '192.0.2.1')),
        await app.inject(plan('free', '192.0.2.1')),
      ].map((r) => r.statusCode),
    ).toEqual([200, 429])
    const pro: number[] = []
    for (let i = 0; i < 4; i++) pro.push((await app.inject(plan('pro', '192.0.2.2'))).statusCode)
    expect(pro).toEqual([200, 200, 200, 429])
    const blocked = await app.inject(plan('pro', '192.0.2.2'))
    expect(blocked.json().error.limit).toBe('3/minute')
  })

  it('unlimited skips counting and sends no headers', async () => {
    const { app } = await limitedApp(tiered(), { auth })
    for (let i = 0; i < 5; i++) {
      const res = await app.inject({ url: '/x', headers: { 'x-test-plan': 'enterprise' } })
      expect(res.statusCode).toBe(200)
      expect(res.headers['x-ratelimit-limit']).toBeUndefined()
    }
  })

  it('a missing or unknown tier uses the first tier, or defaultTier', async () => {
    const { app } = await limitedApp(tiered(), { auth })
    expect(await statuses(app, 2)).toEqual([200, 429])
    expect(
      (
        await app.inject({
          url: '/x',
          remoteAddress: '192.0.2.3',
          headers: { 'x-test-plan': 'gold' },
        })
      ).statusCode,
    ).toBe(200)
    expect(
      (
        await app.inject({
          url: '/x',
          remoteAddress: '192.0.2.3',
          headers: { 'x-test-plan': 'gold' },
        })
      ).statusCode,
    ).toBe(429)
    const withDefault = await limitedApp(
      limited({ limit: { free: '1/minute', pro: '3/minute' }, defaultTier: 'pro' }),
      { auth },
    )
    expect(await statuses(withDefault.app, 4)).toEqual([200, 200, 200, 429])
  })

  it('reports the tier of a blocked request (null when defaulted)', async () => {
    const { app, limits } = await limitedApp(tiered(), { auth })
    await statuses(app, 2, { url: '/x', headers: { 'x-test-plan': 'free' } })
    await statuses(app, 2, { url: '/x', remoteAddress: '192.0.2.9' })
    const hits = await limits.getRateLimitHits()
    expect(hits.map((h) => h.tier)).toEqual([null, 'free'])
  })

  it('tierResolver names another state attribute', async () => {
    const { app } = await limitedApp(
      limited({ limit: { basic: '1/minute', vip: 'unlimited' }, tierResolver: 'level' }),
      {
        auth: (request, _reply, done) => {
          request.state.level = 'vip'
          done()
        },
      },
    )
    expect(await statuses(app, 3)).toEqual(times(3, 200))
  })
})

describe('exemptions', () => {
  it('exempt IPs and CIDR ranges (v4 and v6) consume nothing and get no headers', async () => {
    const { app } = await limitedApp(
      limited({ limit: '1/minute', exemptIps: ['198.51.100.0/24', '2001:db8::/32', '192.0.2.1'] }),
    )
    for (const ip of ['198.51.100.20', '2001:db8::9', '192.0.2.1']) {
      for (let i = 0; i < 3; i++) {
        const res = await app.inject({ url: '/x', remoteAddress: ip })
        expect(res.statusCode).toBe(200)
        expect(res.headers['x-ratelimit-remaining']).toBeUndefined()
      }
    }
    expect(await statuses(app, 2, { url: '/x', remoteAddress: '192.0.2.2' })).toEqual([200, 429])
  })

  it('exempt roles from an array or a Set', async () => {
    const { app } = await limitedApp(limited({ limit: '1/minute', exemptRoles: ['admin'] }), {
      auth,
    })
    const roles = (list: string, set = false) => ({
      url: '/x',
      headers: { 'x-test-roles': list, ...(set ? { 'x-test-set': '1' } : {}) },
    })
    expect(await statuses(app, 3, roles('user,admin'))).toEqual(times(3, 200))
    expect(await statuses(app, 3, roles('admin', true))).toEqual(times(3, 200))
    expect((await app.inject(roles('admin', true))).headers['x-ratelimit-limit']).toBeUndefined()
    expect(await statuses(app, 2, roles('user'))).toEqual([200, 429])
  })
})
