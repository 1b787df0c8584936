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
