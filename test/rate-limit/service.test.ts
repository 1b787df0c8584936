import { describe, expect, it } from 'vitest'
import type { FastifyRequest } from 'fastify'
import { rateLimit } from '../../src/fastify/index.js'
import type { Operation } from '../../src/core/operations.js'
import { MemoryHitStore, MemoryPolicyStore } from '../../src/rate-limit/stores/memory.js'
import { RateLimitExceededError } from '../../src/rate-limit/exceeded.js'
import type { ScopeRateLimitPolicy } from '../../src/rate-limit/policy.js'
import { limitedApp, statuses, storedRoutePolicy, times } from './helpers.js'

describe('route policy operations', () => {
  it('sets a runtime policy (rl_policy_set, then rl_policy_updated) that takes effect at once', async () => {
    const operations: Operation[] = []
    const { app, limits } = await limitedApp([{ path: '/x' }], {
      rateLimit: { report: (op) => operations.push(op) },
    })
    const policy = await limits.setRateLimitPolicy({
      path: '/x',
      method: 'get',
      limit: '2/minute',
      actor: 'ann',
      platform: 'cli',
    })
    expect(policy).toEqual(storedRoutePolicy())
    expect(await statuses(app, 3)).toEqual([200, 200, 429])
    await limits.setRateLimitPolicy({ path: '/x', method: 'GET', limit: '3/minute', burst: 1 })
    expect(await statuses(app, 2)).toEqual([200, 200])
    expect(
      operations.map((op) => [op.action, op.route, op.previous_status, op.new_status]),
    ).toEqual([
      ['rl_policy_set', 'GET:/x', null, '2/minute'],
      ['rl_policy_updated', 'GET:/x', '2/minute', '3/minute'],
    ])
    expect(operations[0]).toMatchObject({ actor: 'ann', platform: 'cli', service: 'default' })
  })

  it('rejects a policy for an unregistered route and creates nothing', async () => {
    const operations: Operation[] = []
    const { limits } = await limitedApp([{ path: '/x' }], {
      rateLimit: { report: (op) => operations.push(op) },
    })
    await expect(
      limits.setRateLimitPolicy({ path: '/nope', method: 'GET', limit: '1/m' }),
    ).rejects.toMatchObject({ code: 'ROUTE_NOT_FOUND' })
    await expect(
      limits.setRateLimitPolicy({ path: '/x', method: 'POST', limit: '1/m' }),
    ).rejects.toMatchObject({ code: 'ROUTE_NOT_FOUND' })
    await expect(
      limits.setRateLimitPolicy({ path: '/x', method: 'GET', limit: '1/m', service: 'other' }),
    ).rejects.toMatchObject({ code: 'ROUTE_NOT_FOUND' })
    expect(limits.listRateLimitPolicies()).toEqual([])
    expect(operations).toEqual([])
  })

  it('rejects bad input at the engine API and changes nothing', async () => {
    const { app, limits } = await limitedApp([
      { path: '/x', hooks: [rateLimit({ limit: '2/minute' })] },
    ])
    const bad = [
      { path: '/x', method: 'GET', limit: '2/fortnight' },
      { path: '/x', method: 'GET', limit: 'unlimited' },
      { path: '/x', method: 'BREW', limit: '1/m' },
      { path: 'x', method: 'GET', limit: '1/m' },
      { path: '/x', method: 'GET', limit: '1/m', algorithm: 'nope' },
      { path: '/x', method: 'GET', limit: '1/m', keyStrategy: 'custom' },
      { path: '/x', method: 'GET', limit: '1/m', burst: 'lots' },
      { path: '/x', method: 'GET', limit: '1/m', exemptIps: ['300.1.1.1'] },
    ]
    for (const input of bad)
      await expect(limits.setRateLimitPolicy(input as never)).rejects.toMatchObject({
        code: 'VALIDATION_ERROR',
      })
    expect(limits.listRateLimitPolicies().map((p) => p.limit)).toEqual(['2/minute'])
    expect(await statuses(app, 3)).toEqual([200, 200, 429])
    await expect(limits.getRateLimitHits({ limit: 0 })).rejects.toMatchObject({
      code: 'VALIDATION_ERROR',
    })
    await expect(limits.resetRateLimit('/nope')).rejects.toMatchObject({ code: 'ROUTE_NOT_FOUND' })
    await expect(limits.deleteRateLimitPolicy('BAD KEY')).rejects.toMatchObject({
      code: 'VALIDATION_ERROR',
    })
  })

  it('runtime policies persist and apply again after a restart', async () => {
    const policies = new MemoryPolicyStore()
    const first = await limitedApp([{ path: '/x', hooks: [rateLimit({ limit: '5/minute' })] }], {
      rateLimit: { policies },
    })
    await first.limits.setRateLimitPolicy({ path: '/x', method: 'GET', limit: '1/minute' })
    await first.limits.global.set({ limit: '100/minute', exemptRoutes: ['/health'] })
    await first.limits.service('default').set({ limit: '50/minute', enabled: false })
    const second = await limitedApp([{ path: '/x', hooks: [rateLimit({ limit: '5/minute' })] }], {
      rateLimit: { policies },
    })
    await second.limits.load()
    expect(await statuses(second.app, 2)).toEqual([200, 429])
    expect(second.limits.global.get()).toMatchObject({
      limit: '100/minute',
      exempt_routes: ['/health'],
    })
    expect(second.limits.service('default').get()).toMatchObject({ enabled: false })
  })

  it('deleting a persisted override leaves the decorator policy active', async () => {
    const operations: Operation[] = []
    const policies = new MemoryPolicyStore()
    const { app, limits } = await limitedApp(
      [{ path: '/x', hooks: [rateLimit({ limit: '3/minute' })] }],
      {
        rateLimit: { policies, report: (op) => operations.push(op) },
      },
    )
    await limits.setRateLimitPolicy({ path: '/x', method: 'GET', limit: '1/minute' })
    expect(await limits.deleteRateLimitPolicy('GET:/x')).toBe(1)
    expect(await policies.listRoutePolicies()).toEqual([])
    expect(limits.listRateLimitPolicies().map((p) => p.limit)).toEqual(['3/minute'])
    expect(await statuses(app, 4)).toEqual([200, 200, 200, 429])
    expect(operations.at(-1)).toMatchObject({
      action: 'rl_policy_deleted',
      route: 'GET:/x',
      previous_status: '1/minute',
      new_status: '3/minute',
    })
    // nothing stored any more: a second delete removes nothing and records nothing
    expect(await limits.deleteRateLimitPolicy('/x')).toBe(0)
    expect(operations.filter((op) => op.action === 'rl_policy_deleted')).toHaveLength(1)
  })

  it('resets counters by exact route key, never by prefix or substring', async () => {
    const { app, limits } = await limitedApp([
      { path: '/a', hooks: [rateLimit({ limit: '1/minute' })] },
      { path: '/a/b', hooks: [rateLimit({ limit: '1/minute' })] },
      { path: '/ab', hooks: [rateLimit({ limit: '1/minute' })] },
      { method: 'POST', path: '/a', hooks: [rateLimit({ limit: '1/minute' })] },
    ])
    for (const url of ['/a', '/a/b', '/ab']) expect(await statuses(app, 2, url)).toEqual([200, 429])
    expect(await statuses(app, 2, { method: 'POST', url: '/a' })).toEqual([200, 429])
    await limits.resetRateLimit('/a', { method: 'GET' })
    expect(await statuses(app, 1, '/a')).toEqual([200])
    expect(await statuses(app, 1, '/a/b')).toEqual([429])
    expect(await statuses(app, 1, '/ab')).toEqual([429])
    expect(await statuses(app, 1, { method: 'POST', url: '/a' })).toEqual([429])
    await limits.resetRateLimit('/a') // every method of /a
    expect(await statuses(app, 1, { method: 'POST', url: '/a' })).toEqual([200])
    expect(await statuses(app, 1, '/a/b')).toEqual([429])
  })

  it('lists policies of every route, optionally by service', async () => {
    const { limits } = await limitedApp([
      { path: '/b', hooks: [rateLimit({ limit: '1/minute' })] },
      { path: '/a', hooks: [rateLimit({ limit: { free: '1/minute', pro: 'unlimited' } })] },
      { path: '/c' },
    ])
    const list = limits.listRateLimitPolicies()
    expect(list.map((p) => [p.path, p.limit])).toEqual([
      ['/a', '1/minute'],
      ['/b', '1/minute'],
    ])
    expect(list[0]?.tiers).toEqual([
      { name: 'free', limit: '1/minute' },
      { name: 'pro', limit: 'unlimited' },
    ])
    expect(limits.listRateLimitPolicies({ service: 'other' })).toEqual([])
  })
})

describe('blocked-request log', () => {
  it('writes one record per 429 with the documented fields, newest first', async () => {
    const { app, limits, clock } = await limitedApp([
      { path: '/x', hooks: [rateLimit({ limit: '1/minute' })] },
      { path: '/y', hooks: [rateLimit({ limit: '1/minute', key: 'user', onMissingKey: 'block' })] },
    ])
    await statuses(app, 3, '/x')
    clock.advance(1000)
    await statuses(app, 1, '/y')
    const hits = await limits.getRateLimitHits()
    expect(hits).toHaveLength(3)
    expect(hits[0]).toMatchObject({
      path: '/y',
      method: 'GET',
      limit: '1/minute',
      tier: null,
      key: 'rl:route:default:GET:/y:(missing)',
    })
    expect(hits[1]).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      timestamp: '2026-11-21T12:00:00.000+00:00',
      path: '/x',
      method: 'GET',
      service: 'default',
      key: 'rl:route:default:GET:/x:ip:127.0.0.1',
      limit: '1/minute',
      tier: null,
      reset_at: '2026-11-21T12:01:00.000+00:00',
    })
    expect(await limits.getRateLimitHits({ path: '/x', limit: 1 })).toHaveLength(1)
    expect(await limits.getRateLimitHits({ path: '/z' })).toEqual([])
    expect(await limits.getRateLimitHits({ service: 'default' })).toHaveLength(3)
    expect(await limits.getRateLimitHits({ service: 'billing', path: '/x' })).toEqual([])
    await expect(limits.getRateLimitHits({ service: 'Not A Service' })).rejects.toMatchObject({
      code: 'VALIDATION_ERROR',
    })
  })

  it('is capped at maxRlHitEntries, oldest evicted first', async () => {
    const hits = new MemoryHitStore(3)
    for (let i = 0; i < 5; i++)
      await hits.add({
        id: String(i),
        timestamp: '',
        path: '/x',
        method: 'GET',
        key: 'k',
        limit: '1/s',
        tier: null,
        reset_at: '',
      })
    expect((await hits.list()).map((h) => h.id)).toEqual(['4', '3', '2'])
    const { app, limits } = await limitedApp(
      [{ path: '/x', hooks: [rateLimit({ limit: '1/minute' })] }],
      {
        rateLimit: { maxRlHitEntries: 2 },
      },
    )
    await statuses(app, 5)
    expect(await limits.getRateLimitHits()).toHaveLength(2)
    expect(() => new MemoryHitStore(0)).toThrow(RangeError)
  })
})

describe('custom response factories', () => {
  const teapot = (_request: FastifyRequest, error: RateLimitExceededError) => ({
    statusCode: 418,
    body: {
      slow: 'down',
      retry: error.retryAfterSeconds,
      limit: error.limit,
      remaining: error.remaining,
      key: error.key,
    },
    headers: { 'x-custom': 'route' },
  })

  it('per-route sync factory, with the exception of rule 11', async () => {
    let seen: RateLimitExceededError | undefined
    const { app } = await limitedApp([
      {
        path: '/x',
        hooks: [
          rateLimit({
            limit: '1/minute',
            response: (request, error) => {
              seen = error
              return teapot(request, error)
            },
          }),
        ],
      },
    ])
    await app.inject('/x')
    const res = await app.inject('/x')
    expect(res.statusCode).toBe(418)
    expect(res.json()).toEqual({
      slow: 'down',
      retry: 60,
      limit: '1/minute',
      remaining: 0,
      key: 'rl:route:default:GET:/x:ip:127.0.0.1',
    })
    expect(res.headers['x-custom']).toBe('route')
    expect(res.headers['retry-after']).toBe('60')
    expect(seen).toBeInstanceOf(RateLimitExceededError)
    expect(seen?.resetAt).toEqual(new Date('2026-11-21T12:01:00Z'))
  })

  it('plugin-wide async factory for routes without their own; the route factory wins', async () => {
    const { app, limits } = await limitedApp(
      [
        { path: '/x', hooks: [rateLimit({ limit: '1/minute' })] },
        { path: '/y', hooks: [rateLimit({ limit: '1/minute', response: teapot })] },
        { path: '/z' },
      ],
      {
        responses: {
          rate_limited: (_request, error) =>
            Promise.resolve({
              body: { plugin: true, retry: error.retryAfterSeconds },
            }),
        },
      },
    )
    await limits.global.set({
      limit: '2/minute',
      keyStrategy: 'global',
      exemptRoutes: ['/x', '/y'],
    })
    await app.inject('/x')
    const x = await app.inject('/x')
    expect([x.statusCode, x.json()]).toEqual([429, { plugin: true, retry: 60 }])
    await app.inject('/y')
    expect((await app.inject('/y')).statusCode).toBe(418)
    // a global-policy 429 on an undecorated route also uses the plugin-wide factory
    await statuses(app, 2, '/z')
    expect((await app.inject('/z')).json()).toEqual({ plugin: true, retry: 60 })
  })

  it('a failing factory falls back to the built-in 429', async () => {
    const { app } = await limitedApp([
      {
        path: '/x',
        hooks: [
          rateLimit({
            limit: '1/minute',
            response: () => {
              throw new Error('boom')
            },
          }),
        ],
      },
      {
        path: '/y',
        hooks: [
          rateLimit({ limit: '1/minute', response: () => Promise.reject(new Error('boom')) }),
        ],
      },
    ])
    for (const url of ['/x', '/y']) {
      await app.inject(url)
      const res = await app.inject(url)
      expect(res.statusCode).toBe(429)
      expect(res.json().error.code).toBe('RATE_LIMITED')
    }
  })

  it('the plugin refuses a non-function rate_limited response', async () => {
    await expect(limitedApp([], { responses: { rate_limited: 'x' as never } })).rejects.toThrow(
      /rate_limited/,
    )
  })
})

describe('listing', () => {
  it('decorated routes of every method appear once', async () => {
    const { limits } = await limitedApp([
      { path: '/x', hooks: [rateLimit({ limit: '1/minute' })] },
      { method: 'POST', path: '/x', hooks: [rateLimit({ limit: '2/minute' })] },
    ])
    expect(limits.listRateLimitPolicies().map((p) => `${p.method} ${p.limit}`)).toEqual(
      times(1, 'GET 1/minute').concat('POST 2/minute'),
    )
  })
})

describe('changes from other instances', () => {
  it('apply() installs and removes route, global and service policies', async () => {
    const { app, limits } = await limitedApp([
      { path: '/x', hooks: [rateLimit({ limit: '5/minute' })] },
    ])
    const policy = { ...limits.listRateLimitPolicies()[0]!, limit: '1/minute' }
    limits.apply({ type: 'rl_policy', service: 'default', route: 'GET:/x', policy })
    expect(await statuses(app, 2)).toEqual([200, 429])
    limits.apply({ type: 'rl_policy', service: 'default', route: 'GET:/x', policy: null })
    expect(limits.listRateLimitPolicies()[0]?.limit).toBe('5/minute')
    const scope: ScopeRateLimitPolicy = {
      limit: '1/minute',
      algorithm: 'fixed_window',
      key_strategy: 'global',
      on_missing_key: null,
      burst: 0,
      exempt_routes: [],
      enabled: true,
    }
    limits.apply({ type: 'global_rl_policy', policy: scope })
    expect(limits.global.get()).toEqual(scope)
    limits.apply({ type: 'service_rl_policy', service: 'default', policy: scope })
    expect(limits.service('default').get()).toEqual(scope)
    limits.apply({ type: 'global_rl_policy', policy: null })
    limits.apply({ type: 'service_rl_policy', service: 'default', policy: null })
    expect(limits.global.get()).toBeNull()
    expect(limits.service('default').get()).toBeNull()
  })

  it('rejects a custom key function in a runtime policy', async () => {
    const { limits } = await limitedApp([{ path: '/x' }])
    await expect(
      limits.setRateLimitPolicy({
        path: '/x',
        method: 'GET',
        limit: '1/m',
        keyStrategy: (() => 'k') as never,
      }),
    ).rejects.toMatchObject({ code: 'VALIDATION_ERROR' })
  })
})
