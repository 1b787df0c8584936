import { afterEach, describe, expect, it } from 'vitest'
import { EvaluationKeys } from '../../src/admin/auth/evaluation-keys.js'
import { systemClock } from '../../src/core/clock.js'
import { memoryEvaluationKeys } from '../../src/stores/evaluation-keys.js'
import { booleanFlag } from '../flags/helpers.js'
import {
  API,
  authedAdmin,
  buildAdmin,
  closeAdmins,
  closeLater,
  createEvaluationKey,
} from './helpers.js'

afterEach(closeAdmins)

const flag = booleanFlag('checkout')

/** An authenticated admin with one flag, one segment and one evaluation key. */
async function setUp() {
  const admin = await authedAdmin()
  expect((await admin.call('POST', '/flags', flag)).statusCode).toBe(201)
  expect(
    (await admin.call('POST', '/segments', { key: 'staff', name: 'Staff', included: ['u1'] }))
      .statusCode,
  ).toBe(201)
  const created = await admin.call('POST', '/evaluation-keys', { name: 'checkout-web' })
  expect(created.statusCode).toBe(201)
  const issued = created.json<{ id: string; key: string; hint: string }>()
  const withKey = (
    method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE',
    url: string,
    payload?: object,
  ) =>
    admin.app.inject({
      method,
      url,
      headers: { authorization: `Bearer ${issued.key}` },
      ...(payload === undefined ? {} : { payload }),
    })
  return { ...admin, issued, withKey }
}

/** Everything an admin write could change, read with the admin token. */
async function stateOf(call: Awaited<ReturnType<typeof authedAdmin>>['call']) {
  const reads = [
    '/routes?per_page=500',
    '/global-maintenance',
    '/services/default/maintenance',
    '/services/billing/maintenance',
    '/rate-limits',
    '/global-rate-limit',
    '/services/default/rate-limit',
    '/flags',
    '/segments',
    '/evaluation-keys',
    '/audit?per_page=500',
  ]
  const state: Record<string, unknown> = {}
  for (const path of reads) {
    const response = await call('GET', path)
    expect(response.statusCode, path).toBe(200)
    state[path] = response.json()
  }
  return state
}

describe('evaluation keys', () => {
  it('are shown once at creation, listed by hint only, audited, and revoked', async () => {
    const { call, issued } = await setUp()
    expect(issued.key).toMatch(/^syk_[A-Za-z0-9_-]{43}$/)
    expect(issued.hint).toBe(`${issued.key.slice(0, 8)}…${issued.key.slice(-4)}`)
    const list = (await call('GET', '/evaluation-keys')).json<{ items: object[]; total: number }>()
    expect(list.total).toBe(1)
    expect(list.items[0]).toEqual({
      id: issued.id,
      name: 'checkout-web',
      hint: issued.hint,
      created_at: expect.any(String),
      created_by: 'admin',
      flags: null,
    })
    expect(JSON.stringify(list)).not.toContain(issued.key.slice(8, -4))
    expect((await call('DELETE', `/evaluation-keys/${issued.id}`)).statusCode).toBe(204)
    const again = await call('DELETE', `/evaluation-keys/${issued.id}`)
    expect(again.statusCode).toBe(404)
    expect(again.json().error.code).toBe('EVALUATION_KEY_NOT_FOUND')
    expect((await call('GET', '/evaluation-keys')).json().total).toBe(0)
    const audit = (await call('GET', '/audit')).json<{
      items: { action: string; route: string }[]
    }>()
    expect(audit.items.slice(0, 2).map((entry) => [entry.action, entry.route])).toEqual([
      ['evaluation_key_revoked', '[Evaluation Key checkout-web]'],
      ['evaluation_key_created', '[Evaluation Key checkout-web]'],
    ])
  })

  it('refuses a bad name with a 400 and creates nothing', async () => {
    const { call } = await authedAdmin()
    for (const payload of [{}, { name: '' }, { name: 'x'.repeat(101) }, { name: 'a\u0000b' }]) {
      const response = await call('POST', '/evaluation-keys', payload)
      expect(response.statusCode, JSON.stringify(payload)).toBe(400)
      expect(response.json().error.code).toBe('VALIDATION_ERROR')
    }
    expect((await call('GET', '/evaluation-keys')).json().total).toBe(0)
  })

  it('work on the OFREP endpoints until revoked, then answer 401', async () => {
    const { call, issued, withKey } = await setUp()
    const evaluate = () =>
      withKey('POST', '/switchyard/ofrep/v1/evaluate/flags/checkout', { context: {} })
    expect((await evaluate()).statusCode).toBe(200)
    await call('DELETE', `/evaluation-keys/${issued.id}`)
    expect((await evaluate()).statusCode).toBe(401)
    const forged = await withKey('POST', '/switchyard/ofrep/v1/evaluate/flags', {})
    expect(forged.statusCode).toBe(401)
  })

  it('can never change anything: every admin write route answers 403 and the state stays the same', async () => {
    const { call, issued, withKey } = await setUp()
    const before = await stateOf(call)
    const doc = (await call('GET', '/openapi.json')).json<{ paths: Record<string, object> }>()
    const samples: Record<string, string> = { key: 'checkout', service: 'default', id: issued.id }
    const bodies: Record<string, object> = {
      '/api/routes/enable': { route: 'GET:/payments' },
      '/api/routes/disable': { route: 'GET:/payments', reason: 'x' },
      '/api/routes/maintenance': { route: 'GET:/payments' },
      '/api/rate-limits': { path: '/payments', method: 'GET', limit: '1/minute' },
      '/api/global-rate-limit': { limit: '1/minute' },
      '/api/flags': { ...flag, key: 'other' },
      '/api/flags/{key}': { ...flag, name: 'Changed' },
      '/api/segments': { key: 'other', name: 'Other' },
      '/api/segments/{key}': { key: 'checkout', name: 'Changed' },
      '/api/evaluation-keys': { name: 'escalation' },
      '/api/global-maintenance/enable': { reason: 'x' },
      '/api/global-maintenance/exempt-add': { path: '/x' },
    }
    let writes = 0
    for (const [path, methods] of Object.entries(doc.paths)) {
      if (path.startsWith('/ofrep/') || path === '/api/auth/login') continue
      for (const method of Object.keys(methods)) {
        if (method === 'get' || method === 'options') continue
        writes++
        const url = `/switchyard${path.replace(/\{(\w+)\}/g, (_, name: string) => samples[name] ?? name)}`
        const response = await withKey(
          method.toUpperCase() as 'POST' | 'PUT' | 'PATCH' | 'DELETE',
          url,
          method === 'delete' ? undefined : (bodies[path] ?? {}),
        )
        expect(response.statusCode, `${method} ${url}`).toBe(403)
        expect(response.json().error.code).toBe('EVALUATION_KEY_NOT_ALLOWED')
      }
    }
    expect(writes).toBeGreaterThan(35) // every write the API has, not a sample
    // Reads of the admin API are refused too: a key reads flags through OFREP only.
    for (const path of ['/api/flags', '/api/evaluation-keys', '/api/audit', '/api/events']) {
      expect((await withKey('GET', `/switchyard${path}`)).statusCode, path).toBe(403)
    }
    expect(await stateOf(call)).toEqual(before)
  })

  it('are refused on admin routes in open mode too', async () => {
    const { app } = await buildAdmin()
    closeLater(app)
    const { key } = await createEvaluationKey(app, 'web')
    const response = await app.inject({
      method: 'POST',
      url: `${API}/global-maintenance/enable`,
      headers: { authorization: `Bearer ${key}` },
      payload: {},
    })
    expect(response.statusCode).toBe(403)
    const state = await app.inject({ url: `${API}/global-maintenance` })
    expect(state.json().active).toBe(false)
  })
})

describe('evaluation keys: the remembered hashes', () => {
  it('never outlive a revocation made behind their back (another instance, the store itself)', async () => {
    const store = memoryEvaluationKeys()
    const keys = new EvaluationKeys(store, systemClock)
    const issued = await keys.create('service', 'test')
    // Resolved twice: the second lookup uses the remembered hash.
    expect(keys.resolveNow(issued.key)?.id).toBe(issued.id)
    expect(keys.resolveNow(issued.key)?.id).toBe(issued.id)
    expect((await keys.resolve(issued.key))?.id).toBe(issued.id)
    // Revoked in the store directly, as another instance sharing it would: refused at once.
    expect(await store.revoke(issued.id)).toBe(true)
    expect(keys.resolveNow(issued.key)).toBeNull()
    expect(await keys.resolve(issued.key)).toBeNull()
    // A guessed key is refused every time.
    const guessed = `syk_${'A'.repeat(43)}`
    expect(keys.resolveNow(guessed)).toBeNull()
    expect(keys.resolveNow(guessed)).toBeNull()
  })
})
