/**
 * Service tokens act on their own service only: route states, service maintenance, service and
 * route rate limits and the SDK endpoints of their service are allowed; every other service,
 * the global scope, flags, segments, credentials and endpoints without a service are 403
 * `FORBIDDEN`, and a refusal changes nothing. A reported audit entry names the token as its
 * actor and the app's user as `on_behalf_of`.
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { authedAdmin, closeAdmins } from './helpers.js'
import { booleanFlag } from '../flags/helpers.js'

afterEach(closeAdmins)

type Admin = Awaited<ReturnType<typeof authedAdmin>>
type Method = 'GET' | 'POST' | 'PUT' | 'DELETE'

async function serviceToken(admin: Admin, service: string, name = `${service}-app`) {
  const response = await admin.call('POST', '/tokens', { name, service })
  expect(response.statusCode, response.body).toBe(201)
  return response.json<{ token: string; id: string }>().token
}

function as(admin: Admin, token: string, method: Method, url: string, payload?: unknown) {
  return admin.app.inject({
    method,
    url: `/switchyard/api${url}`,
    headers: { authorization: `Bearer ${token}` },
    ...(payload === undefined ? {} : { payload: payload as object }),
  })
}

/** Everything a write could change, read by the admin. */
async function stateOf(admin: Admin) {
  const reads = [
    '/routes?per_page=500',
    '/global-maintenance',
    '/services/default/maintenance',
    '/services/billing/maintenance',
    '/rate-limits',
    '/global-rate-limit',
    '/services/default/rate-limit',
    '/services/billing/rate-limit',
    '/flags',
    '/segments',
    '/evaluation-keys',
    '/tokens',
    '/audit?per_page=500',
  ]
  const state: Record<string, unknown> = {}
  for (const path of reads) state[path] = (await admin.call('GET', path)).json()
  // A refused request still counts as a use of the token.
  const tokens = state['/tokens'] as { tokens: Record<string, unknown>[] }
  for (const token of tokens.tokens) delete token.last_used_at
  return state
}

const policy = { limit: '10/minute' }

describe('service tokens', () => {
  it('may act on their own service', async () => {
    const admin = await authedAdmin()
    const token = await serviceToken(admin, 'billing')
    const allowed: [Method, string, unknown?][] = [
      ['GET', '/auth/me'],
      ['GET', '/routes?service=billing'],
      ['GET', '/routes/state?route=GET:/invoices&service=billing'],
      ['POST', '/routes/disable', { route: 'GET:/invoices', service: 'billing' }],
      ['POST', '/routes/enable', { route: 'GET:/invoices', service: 'billing' }],
      ['GET', '/services/billing/maintenance'],
      ['POST', '/services/billing/maintenance/enable', { reason: 'upgrade' }],
      ['POST', '/services/billing/maintenance/disable', {}],
      ['PUT', '/services/billing/rate-limit', policy],
      ['GET', '/services/billing/rate-limit'],
      ['DELETE', '/services/billing/rate-limit'],
      [
        'POST',
        '/rate-limits',
        { service: 'billing', method: 'GET', path: '/invoices', limit: '5/minute' },
      ],
      ['GET', '/rate-limits?service=billing'],
      ['DELETE', '/rate-limits?route=GET:/invoices&service=billing'],
      ['POST', '/sdk/register', { app_id: 'billing', routes: [] }],
      ['POST', '/sdk/report', { app_id: 'billing', hits: [], audit: [] }],
    ]
    for (const [method, url, body] of allowed) {
      const response = await as(admin, token, method, url, body)
      expect(response.statusCode, `${method} ${url}: ${response.body}`).toBeLessThan(300)
    }
    const audit = await admin.call('GET', '/audit?service=billing&action=disable')
    expect(audit.json<{ items: { actor: string }[] }>().items[0]?.actor).toBe('token:billing-app')
  })

  it('are refused (403) outside their service, changing nothing', async () => {
    const admin = await authedAdmin()
    expect((await admin.call('POST', '/flags', booleanFlag('checkout'))).statusCode).toBe(201)
    const token = await serviceToken(admin, 'billing')
    const before = await stateOf(admin)
    const refused: [Method, string, unknown?][] = [
      // Other services (the server's own included, named or by default).
      ['POST', '/routes/disable', { route: 'GET:/orders' }],
      ['POST', '/routes/disable', { route: 'GET:/orders', service: 'default' }],
      ['POST', '/routes/maintenance', { route: 'GET:/orders', service: 'default' }],
      ['GET', '/routes/state?route=GET:/orders'],
      ['POST', '/services/default/maintenance/enable', { reason: 'x' }],
      ['PUT', '/services/default/rate-limit', policy],
      ['POST', '/rate-limits', { method: 'GET', path: '/orders', limit: '5/minute' }],
      ['POST', '/rate-limits/reset', { route: 'GET:/orders' }],
      ['POST', '/sdk/register', { app_id: 'payments', routes: [] }],
      ['GET', '/sdk/events?app_id=payments'],
      // Every service at once, and the global scope.
      ['GET', '/routes'],
      ['GET', '/services'],
      ['GET', '/rate-limits'],
      ['GET', '/rate-limits/hits'],
      ['GET', '/audit'],
      ['GET', '/global-maintenance'],
      ['POST', '/global-maintenance/enable', { reason: 'x' }],
      ['PUT', '/global-rate-limit', policy],
      // Flags, segments and credentials.
      ['GET', '/flags'],
      ['PUT', '/flags/checkout', booleanFlag('checkout', { enabled: false })],
      ['DELETE', '/flags/checkout'],
      ['POST', '/segments', { key: 'staff', name: 'Staff', included: ['u1'] }],
      ['POST', '/evaluation-keys', { name: 'web' }],
      ['GET', '/tokens'],
      ['POST', '/tokens', { name: 'more', role: 'admin' }],
    ]
    for (const [method, url, body] of refused) {
      const response = await as(admin, token, method, url, body)
      expect(response.statusCode, `${method} ${url}: ${response.body}`).toBe(403)
      expect(response.json().error.code).toBe('FORBIDDEN')
    }
    expect(await stateOf(admin)).toEqual(before)
  })

  it('cannot forge the actor of a reported audit entry', async () => {
    const received: Record<string, unknown>[] = []
    const server: Server = createServer((request, response) => {
      let body = ''
      request.on('data', (chunk: Buffer) => (body += chunk.toString()))
      request.on('end', () => {
        received.push(JSON.parse(body) as Record<string, unknown>)
        response.end('ok')
      })
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    try {
      const admin = await authedAdmin()
      admin.engine.addWebhook(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`)
      const orders = await serviceToken(admin, 'orders')
      const payments = await serviceToken(admin, 'payments')
      await admin.engine.webhooksIdle()
      received.length = 0
      const report = {
        app_id: 'payments',
        hits: [],
        audit: [
          {
            action: 'disable',
            route: 'GET:/pay',
            actor: 'alice',
            reason: 'forged',
            previous_status: 'active',
            new_status: 'disabled',
          },
        ],
      }
      const forged = await as(admin, orders, 'POST', '/sdk/report', report)
      expect(forged.statusCode).toBe(403)
      expect(forged.json().error.code).toBe('FORBIDDEN')
      await admin.engine.webhooksIdle()
      const entries = () =>
        admin
          .call('GET', '/audit?service=payments&action=disable')
          .then((r) => r.json<{ items: unknown[] }>().items)
      expect(await entries()).toEqual([])
      expect(received).toEqual([])

      const genuine = await as(admin, payments, 'POST', '/sdk/report', report)
      expect(genuine.statusCode).toBe(200)
      const [entry] = await entries()
      expect(entry).toMatchObject({
        actor: 'token:payments-app',
        on_behalf_of: 'alice',
        platform: 'sdk',
        service: 'payments',
      })
      await admin.engine.webhooksIdle()
      expect(received).toEqual([
        expect.objectContaining({
          event: 'disable',
          actor: 'token:payments-app',
          on_behalf_of: 'alice',
        }),
      ])
    } finally {
      await new Promise((resolve) => server.close(resolve))
    }
  })
})
