/**
 * Multi-service mode end to end on the memory backend: a real `switchyard serve` process and
 * real SDK apps — registration rules, every pushed change kind, reports, bad input, security.
 */
import { describe, expect, it } from 'vitest'
import { booleanFlag } from '../flags/helpers.js'
import { until } from '../helpers/wait.js'
import { api, login, memoryServeForFile, statusOf as status } from './helpers.js'

const serve = memoryServeForFile()
const { start, call } = serve

describe('registration', { timeout: 60_000 }, () => {
  it('registers declared routes, keeps the server state over a redeploy and reports vanished routes', async () => {
    const first = await start('orders')
    expect(first.app.switchyardSdk.status).toBe('live')
    const listed = await call('GET', '/api/routes?service=orders')
    expect(
      listed.body.items.map((s: { route: string; status: string }) => [s.route, s.status]),
    ).toEqual([
      ['GET:/health', 'active'],
      ['GET:/legacy', 'disabled'],
      ['GET:/pay', 'active'],
      ['GET:/search', 'active'],
    ])
    expect((await call('GET', '/api/services')).body).toContain('orders')
    // A route of a service the server does not host can be changed.
    const disabled = await call('POST', '/api/routes/disable', {
      route: 'GET:/pay',
      service: 'orders',
      reason: 'incident',
    })
    expect(disabled.status).toBe(200)
    await until(async () => (await status(first.url, '/pay')) === 503)
    await first.app.close()

    // The redeployed app drops /legacy and adds /refund: /pay stays disabled (server wins).
    const second = await start('orders', (app) => {
      app.get('/pay', () => ({ ok: true }))
      app.get('/refund', () => ({ ok: true }))
    })
    const body = await (await fetch(`${second.url}/pay`)).json()
    expect(body).toMatchObject({ error: { code: 'ROUTE_DISABLED', reason: 'incident' } })
    expect(await status(second.url, '/refund')).toBe(200)
    const routes = (await call('GET', '/api/routes?service=orders')).body.items
    expect(routes.map((s: { route: string }) => s.route)).toEqual(['GET:/pay', 'GET:/refund'])
    // The answer of a direct registration names what vanished.
    const answer = await call('POST', '/api/sdk/register', {
      app_id: 'orders',
      routes: [{ route: 'GET:/pay', status: 'active' }],
    })
    expect(answer.status).toBe(200)
    expect(answer.body.vanished).toEqual(['GET:/refund'])
    expect(answer.body.states).toMatchObject([{ route: 'GET:/pay', status: 'disabled' }])
  })

  it('answers 400 for malformed registrations and changes nothing', async () => {
    const before = (await call('GET', '/api/services')).body
    const cases: unknown[] = [
      { app_id: 'Bad App', routes: [] },
      { app_id: '../x', routes: [] },
      { app_id: 'shop', routes: [{ route: '/no-method', status: 'active' }] },
      { app_id: 'shop', routes: [{ route: 'FETCH:/x', status: 'active' }] },
      { app_id: 'shop', routes: [{ route: 'GET:/x', status: 'sleeping' }] },
      {
        app_id: 'shop',
        routes: [
          { route: 'GET:/x', status: 'active' },
          { route: 'GET:/x', status: 'disabled' },
        ],
      },
      {
        app_id: 'shop',
        routes: [{ route: 'GET:/x', status: 'maintenance', window: { start: 'soon', end: null } }],
      },
      {
        app_id: 'shop',
        routes: Array.from({ length: 2001 }, (_, i) => ({ route: `GET:/r${i}`, status: 'active' })),
      },
      { app_id: 'shop' },
    ]
    for (const body of cases) {
      const answer = await call('POST', '/api/sdk/register', body)
      expect(answer.status, JSON.stringify(body).slice(0, 80)).toBe(400)
      expect(answer.body.error.code).toBe('VALIDATION_ERROR')
    }
    expect((await call('GET', '/api/services')).body).toEqual(before)
    expect((await call('GET', '/api/sdk/events?app_id=Nope')).status).toBe(400)
    expect(
      (
        await api(serve.server.url, null, 'POST', '/api/sdk/register', {
          app_id: 'shop',
          routes: [],
        })
      ).status,
    ).toBe(401)
    expect((await fetch(`${serve.server.url}/api/sdk/events?app_id=shop`)).status).toBe(401)
  })
})

describe('pushed changes', { timeout: 60_000 }, () => {
  it('applies every change kind of its service and of the global scope, and ignores other services', async () => {
    const { app, url } = await start('payments')
    const other = await start('billing')

    // Route state.
    await call('POST', '/api/routes/maintenance', {
      route: 'GET:/pay',
      service: 'payments',
      reason: 'db',
    })
    await until(async () => (await status(url, '/pay')) === 503)
    expect(await status(other.url, '/pay')).toBe(200)
    await call('POST', '/api/routes/enable', { route: 'GET:/pay', service: 'payments' })
    await until(async () => (await status(url, '/pay')) === 200)

    // Global maintenance with an exemption.
    await call('POST', '/api/global-maintenance/enable', {
      reason: 'upgrade',
      exempt_paths: ['/health'],
    })
    await until(async () => (await status(url, '/pay')) === 503)
    expect(await (await fetch(`${url}/pay`)).json()).toMatchObject({ error: { scope: 'global' } })
    expect(await status(url, '/health')).toBe(200)
    expect(await status(other.url, '/pay')).toBe(503)
    await call('POST', '/api/global-maintenance/disable')
    await until(
      async () => (await status(url, '/pay')) === 200 && (await status(other.url, '/pay')) === 200,
    )

    // Service maintenance: only this service.
    await call('POST', '/api/services/payments/maintenance/enable', { reason: 'migration' })
    await until(async () => (await status(url, '/pay')) === 503)
    expect(await (await fetch(`${url}/pay`)).json()).toMatchObject({ error: { scope: 'service' } })
    expect(await status(other.url, '/pay')).toBe(200)
    await call('POST', '/api/services/payments/maintenance/disable')
    await until(async () => (await status(url, '/pay')) === 200)

    // Route rate-limit policy (rl_policy).
    const created = await call('POST', '/api/rate-limits', {
      path: '/pay',
      method: 'GET',
      limit: '2/minute',
      service: 'payments',
    })
    expect(created.status).toBe(201)
    await until(async () => (await status(url, '/pay')) === 429)
    expect(await status(other.url, '/pay')).toBe(200)
    await call('DELETE', '/api/rate-limits?route=GET:/pay&service=payments')

    // Service and global policies.
    await call('PUT', '/api/services/billing/rate-limit', {
      limit: '1/minute',
      key_strategy: 'global',
    })
    await until(async () => (await status(other.url, '/health')) === 429)
    await call('DELETE', '/api/services/billing/rate-limit')
    await until(async () => (await status(other.url, '/health')) === 200)
    await call('PUT', '/api/global-rate-limit', { limit: '1/minute', key_strategy: 'global' })
    await until(async () => (await status(url, '/search')) === 429)
    await call('DELETE', '/api/global-rate-limit')
    await until(async () => (await status(url, '/search')) === 200)

    // Flags and segments evaluate locally from the pushed definitions.
    expect(
      (await call('PUT', '/api/segments/beta', { key: 'beta', name: 'Beta', included: ['u1'] }))
        .status,
    ).toBe(201)
    expect((await call('PUT', '/api/flags/new-checkout', booleanFlag('new-checkout'))).status).toBe(
      201,
    )
    await until(() =>
      app.switchyard.flags.sync.getBooleanValue('new-checkout', false, { targetingKey: 'u1' }),
    )
    expect((await app.switchyard.flags.getSegment('beta'))?.included).toEqual(['u1'])
    await call('POST', '/api/flags/new-checkout/disable')
    await until(
      () =>
        !app.switchyard.flags.sync.getBooleanValue('new-checkout', true, { targetingKey: 'u1' }),
    )
    await call('DELETE', '/api/flags/new-checkout')
    await call('DELETE', '/api/segments/beta')
    await until(async () => (await app.switchyard.flags.getSegment('beta')) === null)
  })

  it('reports blocked requests and audit entries to the server, under the app’s service', async () => {
    const { app, url } = await start('reports')
    await call('POST', '/api/rate-limits', {
      path: '/pay',
      method: 'GET',
      limit: '1/minute',
      service: 'reports',
    })
    await until(async () => (await status(url, '/pay')) === 429)
    await app.switchyardSdk.flush()
    await until(async () => {
      const hits = await call('GET', '/api/rate-limits/hits?route=/pay')
      const items = hits.body.items as { path: string; limit: string }[]
      return items.some((hit) => hit.path === '/pay' && hit.limit === '1/minute')
    })
    // An app's report lands under its own service whatever the entry claims, and its actor is
    // whoever is authenticated (here the admin); the actor it names is kept as on_behalf_of.
    const reported = await call('POST', '/api/sdk/report', {
      app_id: 'reports',
      hits: [],
      audit: [
        {
          action: 'custom_note',
          route: 'GET:/pay',
          actor: 'job',
          reason: 'r',
          previous_status: null,
          new_status: null,
          service: 'other',
        },
      ],
    })
    expect(reported.body).toEqual({ hits: 0, audit: 1 })
    const audit = await call('GET', '/api/audit?action=custom_note')
    expect(audit.body.items).toMatchObject([
      { service: 'reports', platform: 'sdk', actor: 'admin', on_behalf_of: 'job' },
    ])
    const tooMany = await call('POST', '/api/sdk/report', {
      app_id: 'reports',
      hits: Array.from({ length: 501 }, (_, i) => ({
        id: `${i}`,
        timestamp: 't',
        path: '/p',
        method: 'GET',
        key: 'k',
        limit: '1/minute',
        tier: null,
        reset_at: 't',
      })),
      audit: [],
    })
    expect(tooMany.status).toBe(400)
  })

  it('ends an SDK stream when its token is logged out', async () => {
    const own = await login(serve.server.url)
    const response = await fetch(`${serve.server.url}/api/sdk/events?app_id=payments`, {
      headers: { authorization: `Bearer ${own}` },
    })
    expect(response.status).toBe(200)
    // Delimited by the connection's end: each frame is one plain write, not a chunk.
    expect(response.headers.get('transfer-encoding')).toBeNull()
    expect(response.headers.get('connection')).toBe('close')
    const reader = response.body!.getReader()
    const first = new TextDecoder().decode((await reader.read()).value)
    expect(first).toContain('retry:')
    await api(serve.server.url, own, 'POST', '/api/auth/logout')
    // Read until the server closes the stream.
    for (;;) {
      const { done } = await reader.read()
      if (done) break
    }
    expect(
      (await api(serve.server.url, own, 'GET', '/api/sdk/events?app_id=payments')).status,
    ).toBe(401)
  })
})
