/**
 * Writes made through an SDK app's engine, against a real `switchyard serve` process and real
 * SDK apps: flag, segment and rate-limit policy writes are forwarded to the server (which
 * audits them once and pushes them to every app, so the next snapshot keeps them); route and
 * maintenance writes, and route policies the server's API cannot carry, are refused; bad input
 * and writes the server does not acknowledge change nothing anywhere.
 */
import { describe, expect, it } from 'vitest'
import { booleanFlag } from '../flags/helpers.js'
import { until } from '../helpers/wait.js'
import {
  ADMIN,
  api,
  login,
  sdkApp,
  startServe,
  memoryServeForFile,
  statusOf as status,
} from './helpers.js'

const { start, call, token } = memoryServeForFile()

describe('forwarded writes', { timeout: 60_000 }, () => {
  it('a flag or segment written in one app is on the server when the write resolves, reaches every app, is audited once and survives the next snapshot', async () => {
    // Flags are not any one service's: these apps run on an unconfined operator token.
    const shop = await start('shop', undefined, await token({ role: 'operator' }))
    const ship = await start('ship', undefined, await token({ role: 'operator' }))
    const flags = shop.app.switchyard.flags

    await flags.saveSegment({ key: 'vip', name: 'VIP', included: ['u1'] })
    expect((await call('GET', '/api/segments/vip')).body).toMatchObject({ included: ['u1'] })
    await flags.saveFlag(booleanFlag('dark-mode'))
    expect((await call('GET', '/api/flags/dark-mode')).status).toBe(200)
    for (const app of [shop.app, ship.app])
      await until(async () => (await app.switchyard.flags.getFlag('dark-mode')) !== null)

    await flags.disableFlag('dark-mode')
    expect((await call('GET', '/api/flags/dark-mode')).body.enabled).toBe(false)
    for (const app of [shop.app, ship.app])
      await until(
        () => !app.switchyard.flags.sync.getBooleanValue('dark-mode', true, { targetingKey: 'u1' }),
      )
    // The app's replica holds the server's record, nothing of its own.
    expect(await flags.getFlag('dark-mode')).toEqual(
      (await call('GET', '/api/flags/dark-mode')).body,
    )

    // Audited on the server once, as the API call it was forwarded as (the app reports no copy).
    await shop.app.switchyardSdk.flush()
    const audit = await call('GET', '/api/audit?route=%5BFlag%20dark-mode%5D&per_page=50')
    expect(
      audit.body.items.map((entry: { action: string; platform: string }) => [
        entry.action,
        entry.platform,
      ]),
    ).toEqual([
      ['flag_updated', 'sdk'],
      ['flag_created', 'sdk'],
    ])

    // A redeployed app starts from a snapshot that has the change.
    await shop.app.close()
    const again = await start('shop', undefined, await token({ role: 'operator' }))
    expect(
      again.app.switchyard.flags.sync.getBooleanValue('dark-mode', true, { targetingKey: 'u1' }),
    ).toBe(false)

    await ship.app.switchyard.flags.deleteFlag('dark-mode')
    await ship.app.switchyard.flags.deleteSegment('vip')
    expect((await call('GET', '/api/flags/dark-mode')).status).toBe(404)
    expect((await call('GET', '/api/segments/vip')).status).toBe(404)
    await until(async () => (await again.app.switchyard.flags.getFlag('dark-mode')) === null)
    await until(async () => (await again.app.switchyard.flags.getSegment('vip')) === null)
  })

  it('route, global and service rate-limit policies written in an app are the server’s and every app enforces them', async () => {
    // The global policy is no service's: an unconfined operator token.
    const first = await start('cart', undefined, await token({ role: 'operator' }))
    const second = await start('cart', undefined, await token({ role: 'operator' }))
    const limits = first.app.switchyard.rateLimits

    await limits.setRateLimitPolicy({ method: 'GET', path: '/pay', limit: '1/minute' })
    const listed = await call('GET', '/api/rate-limits?service=cart')
    expect(listed.body.items).toContainEqual(
      expect.objectContaining({ method: 'GET', path: '/pay', limit: '1/minute' }),
    )
    // Counters are each app's own: the second request of each app is refused.
    for (const { url } of [first, second]) {
      await until(async () => (await status(url, '/pay')) === 429)
    }

    await limits.deleteRateLimitPolicy('GET:/pay')
    expect(
      (await call('GET', '/api/rate-limits?service=cart')).body.items.some(
        (policy: { path: string }) => policy.path === '/pay',
      ),
    ).toBe(false)
    for (const { url } of [first, second])
      await until(async () => (await status(url, '/pay')) === 200)

    await limits.global.set({ limit: '5000/minute' })
    expect((await call('GET', '/api/global-rate-limit')).body.policy.limit).toBe('5000/minute')
    await limits.service('cart').set({ limit: '4000/minute', exemptRoutes: ['/health'] })
    expect((await call('GET', '/api/services/cart/rate-limit')).body.policy).toMatchObject({
      limit: '4000/minute',
      exempt_routes: ['/health'],
    })
    await until(
      () =>
        second.app.switchyard.rateLimits.global.get()?.limit === '5000/minute' &&
        second.app.switchyard.rateLimits.service('cart').get()?.limit === '4000/minute',
    )
    await limits.service('cart').disable()
    expect((await call('GET', '/api/services/cart/rate-limit')).body.policy.enabled).toBe(false)

    await second.app.switchyard.rateLimits.global.delete()
    await second.app.switchyard.rateLimits.service('cart').delete()
    expect((await call('GET', '/api/global-rate-limit')).body.policy).toBeNull()
    await until(
      () =>
        limits.global.get() === null &&
        limits.service('cart').get() === null &&
        second.app.switchyard.rateLimits.global.get() === null,
    )
  })
})

describe('refused writes', { timeout: 60_000 }, () => {
  it('route and maintenance writes, and route policies with tiers or exemptions, are refused with SDK_READ_ONLY and change nothing', async () => {
    const { app } = await start('books')
    const engine = app.switchyard
    const readOnly = { code: 'SDK_READ_ONLY', statusCode: 409 }
    await expect(engine.disable('GET:/pay')).rejects.toMatchObject(readOnly)
    await expect(engine.enableGlobalMaintenance({ reason: 'x' })).rejects.toMatchObject(readOnly)
    await expect(
      engine.rateLimits.setRateLimitPolicy({
        method: 'GET',
        path: '/pay',
        limit: { free: '1/minute', pro: '10/minute' },
      }),
    ).rejects.toMatchObject(readOnly)
    await expect(
      engine.rateLimits.setRateLimitPolicy({
        method: 'GET',
        path: '/pay',
        limit: '1/minute',
        exemptIps: ['10.0.0.1'],
      }),
    ).rejects.toMatchObject(readOnly)

    const routes = await call('GET', '/api/routes?service=books')
    expect(routes.body.items).toContainEqual(
      expect.objectContaining({ route: 'GET:/pay', status: 'active' }),
    )
    expect((await call('GET', '/api/global-maintenance')).body.active).toBe(false)
    // Decorator policies stay in the app; the server holds runtime ones only.
    expect((await call('GET', '/api/rate-limits?service=books')).body.items).toEqual([])
    expect(engine.rateLimits.listRateLimitPolicies({ service: 'books' })).toHaveLength(1)
  })

  it('bad input is refused in the app before anything is sent', async () => {
    const { app } = await start('games')
    await expect(
      app.switchyard.flags.saveFlag({ key: 'Not A Key', name: 'x' }),
    ).rejects.toMatchObject({ code: 'VALIDATION_ERROR', statusCode: 400 })
    await expect(
      app.switchyard.rateLimits.setRateLimitPolicy({ method: 'GET', path: '/pay', limit: 'lots' }),
    ).rejects.toMatchObject({ statusCode: 400 })
    await expect(
      app.switchyard.rateLimits.setRateLimitPolicy({
        method: 'GET',
        path: '/nowhere',
        limit: '1/minute',
      }),
    ).rejects.toMatchObject({ code: 'ROUTE_NOT_FOUND' })
    expect(
      (await call('GET', '/api/flags')).body.some(
        (flag: { key: string }) => flag.key === 'Not A Key',
      ),
    ).toBe(false)
    expect((await call('GET', '/api/rate-limits?service=games')).body.items).toEqual([])
  })

  it('a write the server refuses or cannot receive fails with SDK_WRITE_FAILED and changes nothing', async () => {
    const own = await startServe({
      CTL_BACKEND: 'memory',
      CTL_ADMIN_USER: ADMIN.username,
      CTL_ADMIN_PASSWORD: ADMIN.password,
    })
    const adminToken = await login(own.url)
    const created = await api(own.url, adminToken, 'POST', '/api/tokens', {
      name: 'music-app',
      role: 'operator',
    })
    const { app } = await sdkApp({ server: own.url, appId: 'music', token: created.body.token })
    try {
      // The token is revoked: the server refuses the write.
      await api(own.url, adminToken, 'DELETE', `/api/tokens/${created.body.id}`)
      await expect(app.switchyard.flags.saveFlag(booleanFlag('refused'))).rejects.toMatchObject({
        code: 'SDK_WRITE_FAILED',
        serverStatus: 401,
        serverCode: 'UNAUTHENTICATED',
      })
      const fresh = await login(own.url)
      expect((await api(own.url, fresh, 'GET', '/api/flags/refused')).status).toBe(404)

      // The server is gone: nothing answers.
      expect(await own.stop('SIGTERM')).toBe(0)
      await expect(
        app.switchyard.rateLimits.global.set({ limit: '10/minute' }),
      ).rejects.toMatchObject({ code: 'SDK_WRITE_FAILED', serverStatus: null })
      expect(app.switchyard.rateLimits.global.get()).toBeNull()
      expect(await app.switchyard.flags.getFlag('refused')).toBeNull()
    } finally {
      await app.close()
      await own.stop('SIGKILL')
    }
  })

  it('on a service token, writes of its own service go through and writes outside it are refused with 403 FORBIDDEN', async () => {
    const { app } = await start('radio')
    const limits = app.switchyard.rateLimits
    await limits.service('radio').set({ limit: '50/minute' })
    expect((await call('GET', '/api/services/radio/rate-limit')).body.policy).toMatchObject({
      limit: '50/minute',
    })
    await expect(limits.global.set({ limit: '10/minute' })).rejects.toMatchObject({
      code: 'SDK_WRITE_FAILED',
      serverStatus: 403,
      serverCode: 'FORBIDDEN',
    })
    await expect(limits.service('tv').set({ limit: '10/minute' })).rejects.toMatchObject({
      serverStatus: 403,
    })
    await expect(app.switchyard.flags.saveFlag(booleanFlag('radio-only'))).rejects.toMatchObject({
      code: 'SDK_WRITE_FAILED',
      serverStatus: 403,
      serverCode: 'FORBIDDEN',
    })
    expect((await call('GET', '/api/global-rate-limit')).body.policy).toBeNull()
    expect((await call('GET', '/api/services/tv/rate-limit')).body.policy).toBeNull()
    expect((await call('GET', '/api/flags/radio-only')).status).toBe(404)
  })
})
