import { afterEach, describe, expect, it } from 'vitest'
import { authedAdmin, closeAdmins } from './helpers.js'

afterEach(closeAdmins)

const authed = () => authedAdmin()

describe('route rate-limit endpoints', () => {
  it('creates (201), replaces (200), lists, resets and deletes route policies', async () => {
    const { call } = await authed()
    const created = await call('POST', '/rate-limits', {
      path: '/payments',
      method: 'get',
      limit: '100/minute',
      burst: 5,
    })
    expect(created.statusCode).toBe(201)
    expect(created.json()).toMatchObject({
      path: '/payments',
      method: 'GET',
      limit: '100/minute',
      algorithm: 'fixed_window',
      key_strategy: 'ip',
      burst: 5,
    })
    const replaced = await call('POST', '/rate-limits', {
      path: '/payments',
      method: 'GET',
      limit: '10/second',
      algorithm: 'sliding_window',
      key_strategy: 'user',
    })
    expect(replaced.statusCode).toBe(200)
    expect(replaced.json()).toMatchObject({ limit: '10/second', key_strategy: 'user' })
    await call('POST', '/rate-limits', {
      path: '/invoices',
      method: 'GET',
      limit: '5/hour',
      service: 'billing',
    })

    const list = (await call('GET', '/rate-limits')).json()
    expect(list).toMatchObject({ total: 2, page: 1, per_page: 20 })
    const billing = (await call('GET', '/rate-limits?service=billing')).json()
    expect(billing.items.map((p: { path: string }) => p.path)).toEqual(['/invoices'])

    expect((await call('POST', '/rate-limits/reset', { route: 'GET:/payments' })).json()).toEqual({
      reset: true,
    })
    const deleted = await call(
      'DELETE',
      `/rate-limits?route=${encodeURIComponent('GET:/payments')}`,
    )
    expect(deleted.json()).toEqual({ deleted: 1 })
    expect((await call('GET', '/rate-limits')).json().total).toBe(1)
    const hits = (await call('GET', '/rate-limits/hits')).json()
    expect(hits).toMatchObject({ items: [], total: 0, page: 1 })
  })

  it('lists blocked requests filtered by service and route; a bad service is a 400', async () => {
    const { call, engine } = await authed()
    const hits = engine.rateLimits.parts().hits
    const hit = (id: string, service: string | null, path: string) => ({
      id,
      timestamp: '2026-11-23T12:00:00.000+00:00',
      path,
      method: 'GET',
      service,
      key: `rl:route:${service ?? 'default'}:GET:${path}:ip:10.0.0.1`,
      limit: '1/minute',
      tier: null,
      reset_at: '2026-11-23T12:01:00.000+00:00',
    })
    await hits.add(hit('a', 'billing', '/invoices'))
    await hits.add(hit('b', 'default', '/payments'))
    await hits.add(hit('c', 'billing', '/refunds'))
    const ids = async (query: string): Promise<string[]> =>
      (await call('GET', `/rate-limits/hits${query}`))
        .json<{ items: { id: string }[] }>()
        .items.map((h) => h.id)
    expect(await ids('')).toEqual(['c', 'b', 'a'])
    expect(await ids('?service=billing')).toEqual(['c', 'a'])
    expect(await ids('?service=billing&route=%2Finvoices')).toEqual(['a'])
    expect(await ids('?service=search')).toEqual([])
    // An SDK app's reported 429s are filed under its app id, whatever they claim, and announced.
    const announced: unknown[] = []
    engine.rateLimits.onEvent((event) => {
      if (event.type === 'rl_hit') announced.push(event.hit)
    })
    const report = await call('POST', '/sdk/report', {
      app_id: 'search',
      hits: [{ ...hit('ignored', 'billing', '/query'), id: 'app-side-id' }],
      audit: [],
    })
    expect(report.statusCode, report.body).toBe(200)
    const [reported] = (await call('GET', '/rate-limits/hits?service=search')).json<{
      items: { id: string; path: string; service: string }[]
    }>().items
    expect(reported).toMatchObject({ path: '/query', service: 'search' })
    expect(reported!.id).not.toBe('app-side-id')
    expect(announced).toEqual([expect.objectContaining({ id: reported!.id, service: 'search' })])
    const bad = await call('GET', '/rate-limits/hits?service=Bad%20Name')
    expect(bad.statusCode).toBe(400)
    expect(bad.json().error.code).toBe('VALIDATION_ERROR')
  })

  it('rejects bad policies with a 4xx and creates nothing', async () => {
    const { call } = await authed()
    const cases: [object, number, string][] = [
      [{ path: '/nope', method: 'GET', limit: '1/minute' }, 404, 'ROUTE_NOT_FOUND'],
      [{ path: '/payments', method: 'GET', limit: 'lots' }, 400, 'VALIDATION_ERROR'],
      [
        { path: '/payments', method: 'GET', limit: '1/minute', algorithm: 'magic' },
        400,
        'VALIDATION_ERROR',
      ],
      [
        { path: '/payments', method: 'GET', limit: '1/minute', key_strategy: 'custom' },
        400,
        'VALIDATION_ERROR',
      ],
      [{ path: '/payments', method: 'GET', limit: '1/minute', burst: -1 }, 400, 'VALIDATION_ERROR'],
      [{ path: '/payments', method: 'BREW', limit: '1/minute' }, 400, 'VALIDATION_ERROR'],
      [{ path: '/payments', limit: '1/minute' }, 400, 'VALIDATION_ERROR'],
    ]
    for (const [payload, status, code] of cases) {
      const response = await call('POST', '/rate-limits', payload)
      expect(response.statusCode, JSON.stringify(payload)).toBe(status)
      expect(response.json().error.code).toBe(code)
    }
    expect((await call('GET', '/rate-limits')).json().total).toBe(0)
    expect((await call('POST', '/rate-limits/reset', { route: 'GET:/nope' })).statusCode).toBe(404)
    expect((await call('DELETE', '/rate-limits?route=GET:/nope')).statusCode).toBe(404)
    expect((await call('DELETE', '/rate-limits')).statusCode).toBe(400)
  })
})

describe('global and service rate-limit endpoints', () => {
  for (const [name, url] of [
    ['global', '/global-rate-limit'],
    ['service', '/services/billing/rate-limit'],
  ] as const) {
    it(`drives the ${name} policy: get, put, disable, enable, reset, delete`, async () => {
      const { call } = await authed()
      expect((await call('GET', url)).json()).toEqual({ policy: null })
      const put = await call('PUT', url, {
        limit: '1000/minute',
        burst: 10,
        exempt_routes: ['/health'],
      })
      expect(put.statusCode).toBe(200)
      expect(put.json().policy).toMatchObject({
        limit: '1000/minute',
        burst: 10,
        exempt_routes: ['/health'],
        enabled: true,
      })
      expect((await call('POST', `${url}/disable`)).json().policy.enabled).toBe(false)
      expect((await call('GET', url)).json().policy.enabled).toBe(false)
      expect((await call('POST', `${url}/enable`)).json().policy.enabled).toBe(true)
      expect((await call('POST', `${url}/reset`)).json()).toEqual({ reset: true })
      expect((await call('PUT', url, { limit: 'nonsense' })).statusCode).toBe(400)
      expect((await call('GET', url)).json().policy.limit).toBe('1000/minute')
      expect((await call('DELETE', url)).json()).toEqual({ deleted: true })
      expect((await call('GET', url)).json()).toEqual({ policy: null })
      expect((await call('DELETE', url)).json()).toEqual({ deleted: false })
    })
  }
})
