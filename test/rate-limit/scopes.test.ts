import { describe, expect, it } from 'vitest'
import { rateLimit } from '../../src/fastify/index.js'
import type { Operation } from '../../src/core/operations.js'
import { limitedApp, statuses, times } from './helpers.js'

describe('global and service policies in the pipeline', () => {
  it('global policy keyed by ip counts each IP once across all routes', async () => {
    const { app, limits } = await limitedApp([{ path: '/a' }, { path: '/b' }])
    await limits.global.set({ limit: '3/minute' })
    expect(await statuses(app, 2, '/a')).toEqual([200, 200])
    expect(await statuses(app, 2, '/b')).toEqual([200, 429])
    expect((await app.inject({ url: '/a', remoteAddress: '192.0.2.1' })).statusCode).toBe(200)
  })

  it('global key in the global policy: one counter over every route and caller', async () => {
    const { app, limits } = await limitedApp([{ path: '/a' }, { path: '/b' }])
    await limits.global.set({ limit: '2/minute', keyStrategy: 'global' })
    expect((await app.inject({ url: '/a', remoteAddress: '192.0.2.1' })).statusCode).toBe(200)
    expect((await app.inject({ url: '/b', remoteAddress: '192.0.2.2' })).statusCode).toBe(200)
    const blocked = await app.inject({ url: '/b', remoteAddress: '192.0.2.3' })
    expect(blocked.statusCode).toBe(429)
    expect((await app.inject('/a')).statusCode).toBe(429)
    const [hit] = await limits.getRateLimitHits()
    expect(hit?.key).toBe('rl:global:global')
  })

  it('global key in a service policy: one counter over that service', async () => {
    const { app, limits } = await limitedApp([{ path: '/a' }, { path: '/b' }])
    await limits.service('default').set({ limit: '1/minute', keyStrategy: 'global' })
    expect((await app.inject({ url: '/a', remoteAddress: '192.0.2.1' })).statusCode).toBe(200)
    expect((await app.inject({ url: '/b', remoteAddress: '192.0.2.2' })).statusCode).toBe(429)
    await limits.service('default').reset()
    expect((await app.inject('/b')).statusCode).toBe(200)
  })

  it('global key on a route: one counter for that route', async () => {
    const { app } = await limitedApp([
      { path: '/a', hooks: [rateLimit({ limit: '1/minute', key: 'global' })] },
      { path: '/b', hooks: [rateLimit({ limit: '1/minute', key: 'global' })] },
    ])
    expect((await app.inject({ url: '/a', remoteAddress: '192.0.2.1' })).statusCode).toBe(200)
    expect((await app.inject({ url: '/a', remoteAddress: '192.0.2.2' })).statusCode).toBe(429)
    expect((await app.inject('/b')).statusCode).toBe(200)
  })

  it('order: a global rejection leaves service and route counters untouched', async () => {
    const { app, limits } = await limitedApp([
      { path: '/x', hooks: [rateLimit({ limit: '3/minute' })] },
    ])
    await limits.global.set({ limit: '2/minute' })
    await limits.service('default').set({ limit: '3/minute' })
    expect(await statuses(app, 3)).toEqual([200, 200, 429])
    const blocked = await app.inject('/x')
    expect(blocked.json().error.limit).toBe('2/minute')
    await limits.global.delete()
    // service and route counted two requests each: one more fits
    expect(await statuses(app, 2)).toEqual([200, 429])
    expect((await app.inject('/x')).json().error.limit).toBe('3/minute')
  })

  it('order: a service rejection leaves the route counter untouched, and the global one counted', async () => {
    const { app, limits } = await limitedApp([
      { path: '/x', hooks: [rateLimit({ limit: '2/minute' })] },
    ])
    await limits.service('default').set({ limit: '1/minute' })
    expect(await statuses(app, 3)).toEqual([200, 429, 429])
    await limits.service('default').delete()
    expect(await statuses(app, 2)).toEqual([200, 429])
  })

  it('a route in maintenance counts global quota but not route quota', async () => {
    const { app, engine, limits } = await limitedApp([
      { path: '/x', hooks: [rateLimit({ limit: '2/minute' })] },
    ])
    await limits.global.set({ limit: '10/minute' })
    await engine.disable('GET:/x', { reason: 'off' })
    const res = await app.inject('/x')
    expect(res.statusCode).toBe(503)
    expect(res.headers['x-ratelimit-remaining']).toBe('9')
    await engine.enable('GET:/x')
    expect(await statuses(app, 3)).toEqual([200, 200, 429])
  })

  it('global maintenance blocks before any counter moves', async () => {
    const { app, engine, limits } = await limitedApp([
      { path: '/x', hooks: [rateLimit({ limit: '1/minute' })] },
    ])
    await limits.global.set({ limit: '1/minute' })
    await engine.enableGlobalMaintenance({ reason: 'upgrade' })
    expect(await statuses(app, 3)).toEqual(times(3, 503))
    await engine.disableGlobalMaintenance()
    expect(await statuses(app, 2)).toEqual([200, 429])
  })

  it('headers describe the limit with the fewest remaining', async () => {
    const { app, limits } = await limitedApp([
      { path: '/x', hooks: [rateLimit({ limit: '3/minute' })] },
    ])
    await limits.global.set({ limit: '100/minute' })
    const res = await app.inject('/x')
    expect(res.headers['x-ratelimit-limit']).toBe('3')
    expect(res.headers['x-ratelimit-remaining']).toBe('2')
  })

  it('exempt_routes: bare path for every method, METHOD: for one', async () => {
    const { app, limits } = await limitedApp([
      { path: '/a' },
      { method: 'POST', path: '/a' },
      { path: '/b' },
      { method: 'POST', path: '/b' },
    ])
    await limits.global.set({
      limit: '1/minute',
      keyStrategy: 'global',
      exemptRoutes: ['/a', 'POST:/b'],
    })
    expect(await statuses(app, 3, '/a')).toEqual(times(3, 200))
    expect(await statuses(app, 3, { method: 'POST', url: '/a' })).toEqual(times(3, 200))
    expect(await statuses(app, 3, { method: 'POST', url: '/b' })).toEqual(times(3, 200))
    expect(await statuses(app, 2, '/b')).toEqual([200, 429])
  })

  it('service policy applies only to its service', async () => {
    const { app, limits } = await limitedApp([{ path: '/x' }], { service: 'payments' })
    await limits.service('search').set({ limit: '1/minute' })
    expect(await statuses(app, 3)).toEqual(times(3, 200))
    await limits.service('payments').set({ limit: '1/minute' })
    expect(await statuses(app, 2)).toEqual([200, 429])
  })

  it('disable pauses (no counting, no blocking), enable resumes', async () => {
    const { app, limits } = await limitedApp([{ path: '/x' }])
    await limits.global.set({ limit: '1/minute' })
    expect(await statuses(app, 2)).toEqual([200, 429])
    await limits.global.disable()
    expect(limits.global.get()?.enabled).toBe(false)
    const paused = await app.inject('/x')
    expect(paused.statusCode).toBe(200)
    expect(paused.headers['x-ratelimit-limit']).toBeUndefined()
    await limits.global.reset()
    await limits.global.enable()
    expect(await statuses(app, 2)).toEqual([200, 429])
  })

  it('reset clears only the addressed scope', async () => {
    const { app, limits } = await limitedApp([
      { path: '/x', hooks: [rateLimit({ limit: '1/minute' })] },
    ])
    await limits.service('default').set({ limit: '2/minute' })
    expect(await statuses(app, 2)).toEqual([200, 429])
    await limits.service('default').reset()
    expect(await statuses(app, 1)).toEqual([429])
    await limits.resetRateLimit('/x', { method: 'GET' })
    expect(await statuses(app, 2)).toEqual([200, 429])
  })
})

describe('global and service operations', () => {
  it('report audit operations with their labels', async () => {
    const operations: Operation[] = []
    const { limits } = await limitedApp([{ path: '/x' }], {
      rateLimit: { report: (op) => operations.push(op) },
    })
    await limits.global.set({ limit: '10/minute', actor: 'ann', platform: 'cli' })
    await limits.global.set({ limit: '20/minute' })
    await limits.global.disable()
    await limits.global.disable() // no-op
    await limits.global.enable()
    await limits.global.reset()
    await limits.global.delete()
    expect(await limits.global.enable()).toBeNull() // no policy: no-op
    await limits.service('pay').set({ limit: '5/s' })
    await limits.service('pay').disable()
    await limits.service('pay').enable()
    await limits.service('pay').reset()
    await limits.service('pay').delete()
    expect(operations.map((op) => [op.action, op.route])).toEqual([
      ['global_rl_set', '[Global Rate Limit]'],
      ['global_rl_updated', '[Global Rate Limit]'],
      ['global_rl_disabled', '[Global Rate Limit]'],
      ['global_rl_enabled', '[Global Rate Limit]'],
      ['global_rl_reset', '[Global Rate Limit]'],
      ['global_rl_deleted', '[Global Rate Limit]'],
      ['svc_rl_set', '[pay Rate Limit]'],
      ['svc_rl_disabled', '[pay Rate Limit]'],
      ['svc_rl_enabled', '[pay Rate Limit]'],
      ['svc_rl_reset', '[pay Rate Limit]'],
      ['svc_rl_deleted', '[pay Rate Limit]'],
    ])
    expect(operations[0]).toMatchObject({
      actor: 'ann',
      platform: 'cli',
      new_status: '10/minute',
      previous_status: null,
    })
    expect(operations[1]).toMatchObject({
      previous_status: '10/minute',
      new_status: '20/minute',
      actor: 'system',
    })
  })

  it('bad input changes nothing', async () => {
    const operations: Operation[] = []
    const { limits } = await limitedApp([{ path: '/x' }], {
      rateLimit: { report: (op) => operations.push(op) },
    })
    await limits.global.set({ limit: '10/minute' })
    const bad = [
      { limit: '10/fortnight' },
      { limit: 'unlimited' },
      { limit: { free: '1/m' } as never },
      { limit: '1/m', algorithm: 'nope' as never },
      { limit: '1/m', keyStrategy: 'custom' as never },
      { limit: '1/m', burst: -3 },
      { limit: '1/m', exemptRoutes: ['not a route'] },
      { limit: '1/m', enabled: 'yes' as never },
      { limit: '1/m', onMissingKey: 'maybe' as never },
    ]
    for (const options of bad) {
      await expect(limits.global.set(options)).rejects.toMatchObject({
        code: 'VALIDATION_ERROR',
      })
      await expect(limits.service('pay').set(options)).rejects.toMatchObject({
        code: 'VALIDATION_ERROR',
      })
    }
    expect(() => limits.service('')).toThrow(expect.objectContaining({ code: 'VALIDATION_ERROR' }))
    expect(limits.global.get()?.limit).toBe('10/minute')
    expect(limits.service('pay').get()).toBeNull()
    expect(operations).toHaveLength(1)
  })
})

describe('the gate', () => {
  it('check() counts the global limit, and the route limit only while the route is open', async () => {
    const { engine, limits } = await limitedApp([
      { path: '/x', hooks: [rateLimit({ limit: '1/minute' })] },
    ])
    await limits.global.set({ limit: '5/minute' })
    const slot = engine.registerRoute('GET', '/x')
    const request = { method: 'GET', url: '/x', headers: {}, ip: '192.0.2.1' }
    // a closed route (step 5 rejects) consumes global quota only
    expect(limits.gate.check(slot, request, false)).toMatchObject({ action: 'pass' })
    expect(limits.gate.check(slot, request, false)).toMatchObject({ action: 'pass' })
    expect(limits.gate.check(slot, request, true)).toMatchObject({
      action: 'pass',
      headers: [['x-ratelimit-limit', '1'], ['x-ratelimit-remaining', '0'], expect.anything()],
    })
    expect(limits.gate.check(slot, request, true)).toMatchObject({
      action: 'block',
      statusCode: 429,
      body: { error: { limit: '1/minute' } },
    })
    // the global limit counted all four (it comes before the route's): the fifth passes, the
    // sixth is blocked there
    expect(limits.gate.check(slot, request, false)).toMatchObject({ action: 'pass' })
    expect(limits.gate.check(slot, request, false)).toMatchObject({
      action: 'block',
      body: { error: { limit: '5/minute' } },
    })
  })
})
