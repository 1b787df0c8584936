/**
 * API tokens of the admin API: creation (shown once), listing (never the secret), use as a
 * bearer token with its role, revocation (401 after, open streams end), expiry, bad input, the
 * last-use throttle and the audit actor.
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { hashToken } from '../../src/admin/auth/sessions.js'
import { authedAdmin, closeAdmins } from './helpers.js'
import { openStream } from './sse-client.js'
import { until } from '../helpers/wait.js'

afterEach(closeAdmins)

type Admin = Awaited<ReturnType<typeof authedAdmin>>

interface Issued {
  id: string
  name: string
  role: string
  service: string | null
  token: string
  created_at: string
  expires_at: string | null
}

async function createToken(admin: Admin, body: Record<string, unknown>): Promise<Issued> {
  const response = await admin.call('POST', '/tokens', body)
  expect(response.statusCode, response.body).toBe(201)
  return response.json<Issued>()
}

/** A request of the admin API with `token` as the bearer. */
function withToken(
  admin: Admin,
  token: string,
  method: 'GET' | 'POST' | 'PUT' | 'DELETE',
  url: string,
  payload?: unknown,
) {
  return admin.app.inject({
    method,
    url: `/switchyard/api${url}`,
    headers: { authorization: `Bearer ${token}` },
    ...(payload === undefined ? {} : { payload: payload as object }),
  })
}

async function listTokens(admin: Admin) {
  return (await admin.call('GET', '/tokens')).json<{ tokens: Record<string, unknown>[] }>().tokens
}

describe('API tokens', () => {
  it('are shown once, listed without their secret, work as bearer tokens and stop at revocation', async () => {
    const admin = await authedAdmin()
    const issued = await createToken(admin, { name: 'ci-deploy', role: 'operator' })
    expect(issued.token).toMatch(/^syt_[A-Za-z0-9_-]{43}$/)
    expect(issued).toMatchObject({
      name: 'ci-deploy',
      role: 'operator',
      service: null,
      expires_at: null,
    })

    const listed = await listTokens(admin)
    expect(listed).toEqual([
      {
        id: issued.id,
        name: 'ci-deploy',
        role: 'operator',
        service: null,
        created_at: issued.created_at,
        expires_at: null,
        last_used_at: null,
      },
    ])
    const text = (await admin.call('GET', '/tokens')).body
    expect(text).not.toContain(issued.token)
    expect(text).not.toContain(hashToken(issued.token))

    const me = await withToken(admin, issued.token, 'GET', '/auth/me')
    expect(me.json()).toMatchObject({ username: 'token:ci-deploy', role: 'operator' })
    const disabled = await withToken(admin, issued.token, 'POST', '/routes/disable', {
      route: 'GET:/orders',
      reason: 'deploy',
    })
    expect(disabled.statusCode, disabled.body).toBe(200)
    const audit = await admin.call('GET', '/audit?action=disable')
    expect(audit.json<{ items: { actor: string }[] }>().items[0]?.actor).toBe('token:ci-deploy')
    expect((await listTokens(admin))[0]?.last_used_at).toEqual(expect.any(String))

    // The open event stream ends when the token is revoked.
    const address = await admin.app.listen({ host: '127.0.0.1', port: 0 })
    const stream = openStream(`${address}/switchyard/api/events`, {
      authorization: `Bearer ${issued.token}`,
    })
    const response = await stream.ready
    expect(response.statusCode).toBe(200)
    const ended = new Promise<void>((resolve) => response.on('end', resolve))
    const revoked = await admin.call('DELETE', `/tokens/${issued.id}`)
    expect(revoked.statusCode).toBe(204)
    await ended

    const after = await withToken(admin, issued.token, 'GET', '/routes')
    expect(after.statusCode).toBe(401)
    expect(after.json().error.code).toBe('UNAUTHENTICATED')
    expect(await listTokens(admin)).toEqual([])
    const entries = (await admin.call('GET', '/audit?per_page=50'))
      .json<{ items: { action: string; reason: string }[] }>()
      .items.filter((entry) => entry.action.startsWith('api_token_'))
    expect(entries.map((entry) => entry.action)).toEqual(['api_token_revoked', 'api_token_created'])
    expect(JSON.stringify(entries)).not.toContain(issued.token)
  })

  it('stop working at their expiry', async () => {
    const admin = await authedAdmin()
    const clock = admin.clock!
    const expiresAt = new Date(clock.now() + 60 * 60 * 1000).toISOString()
    const issued = await createToken(admin, {
      name: 'short',
      role: 'viewer',
      expires_at: expiresAt,
    })
    expect(Date.parse(issued.expires_at!)).toBe(Date.parse(expiresAt))
    expect((await withToken(admin, issued.token, 'GET', '/routes')).statusCode).toBe(200)
    clock.advance(60 * 60 * 1000)
    const expired = await withToken(admin, issued.token, 'GET', '/routes')
    expect(expired.statusCode).toBe(401)
    // An expired name may be used again.
    await createToken(admin, { name: 'short', role: 'viewer' })
  })

  it('carry their role: a viewer token cannot write, an operator token cannot manage tokens', async () => {
    const admin = await authedAdmin()
    const viewer = await createToken(admin, { name: 'dash-reader', role: 'viewer' })
    const operator = await createToken(admin, { name: 'ops', role: 'operator' })
    const before = (await admin.call('GET', '/routes/state?route=GET:/orders')).body

    const write = await withToken(admin, viewer.token, 'POST', '/routes/disable', {
      route: 'GET:/orders',
    })
    expect(write.statusCode).toBe(403)
    expect(write.json().error).toMatchObject({ code: 'FORBIDDEN', required_role: 'operator' })
    expect((await admin.call('GET', '/routes/state?route=GET:/orders')).body).toBe(before)

    for (const [method, url, body] of [
      ['POST', '/tokens', { name: 'escalate', role: 'admin' }],
      ['GET', '/tokens', undefined],
      ['DELETE', `/tokens/${viewer.id}`, undefined],
    ] as const) {
      const refused = await withToken(admin, operator.token, method, url, body)
      expect(refused.statusCode, `${method} ${url}`).toBe(403)
      expect(refused.json().error.required_role).toBe('admin')
    }
    expect((await listTokens(admin)).map((token) => token.name).sort()).toEqual([
      'dash-reader',
      'ops',
    ])

    const adminToken = await createToken(admin, { name: 'root', role: 'admin' })
    const made = await withToken(admin, adminToken.token, 'POST', '/tokens', {
      name: 'made-by-token',
      role: 'viewer',
    })
    expect(made.statusCode).toBe(201)
  })

  it('refuse bad input with a 4xx and store nothing', async () => {
    const admin = await authedAdmin()
    await createToken(admin, { name: 'taken', role: 'viewer' })
    const before = await listTokens(admin)
    const past = new Date(admin.clock!.now() - 1000).toISOString()
    const cases: [unknown, number, string][] = [
      [{ name: 'has space', role: 'viewer' }, 400, 'VALIDATION_ERROR'],
      [{ name: '', role: 'viewer' }, 400, 'VALIDATION_ERROR'],
      [{ name: 'x'.repeat(65), role: 'viewer' }, 400, 'VALIDATION_ERROR'],
      [{ name: 'ok', role: 'root' }, 400, 'VALIDATION_ERROR'],
      [{ name: 'ok' }, 400, 'VALIDATION_ERROR'],
      [{ name: 'ok', role: 'admin', service: 'billing' }, 400, 'VALIDATION_ERROR'],
      [{ name: 'ok', role: 'viewer', service: 'Not A Service' }, 400, 'VALIDATION_ERROR'],
      [{ name: 'ok', role: 'viewer', expires_at: past }, 400, 'VALIDATION_ERROR'],
      [{ name: 'ok', role: 'viewer', expires_at: 'tomorrow' }, 400, 'VALIDATION_ERROR'],
      [{ name: 'ok', role: 'viewer', extra: 1 }, 400, 'VALIDATION_ERROR'],
      [{ name: 'taken', role: 'operator' }, 409, 'API_TOKEN_EXISTS'],
    ]
    for (const [body, status, code] of cases) {
      const response = await admin.call('POST', '/tokens', body)
      expect(response.statusCode, JSON.stringify(body)).toBe(status)
      expect(response.json().error.code).toBe(code)
    }
    const unknown = await admin.call('DELETE', '/tokens/tok_0000000000000000')
    expect(unknown.statusCode).toBe(404)
    expect(unknown.json().error.code).toBe('API_TOKEN_NOT_FOUND')
    expect(await listTokens(admin)).toEqual(before)
    // Not a token at all: unauthenticated, never a 500.
    const bogus = await withToken(admin, `syt_${'A'.repeat(43)}`, 'GET', '/routes')
    expect(bogus.statusCode).toBe(401)
  })

  it('give a service token the operator role and its service', async () => {
    const admin = await authedAdmin()
    const issued = await createToken(admin, { name: 'billing-app', service: 'billing' })
    expect(issued).toMatchObject({ role: 'operator', service: 'billing' })
  })

  it('record their last use at most once a minute', async () => {
    const admin = await authedAdmin()
    const touch = vi.spyOn(admin.engine.apiTokens(), 'touch')
    const issued = await createToken(admin, { name: 'busy', role: 'viewer' })
    for (let i = 0; i < 5; i++)
      expect((await withToken(admin, issued.token, 'GET', '/routes')).statusCode).toBe(200)
    expect(touch).toHaveBeenCalledTimes(1)
    const first = (await listTokens(admin))[0]?.last_used_at
    admin.clock!.advance(61_000)
    await withToken(admin, issued.token, 'GET', '/routes')
    expect(touch).toHaveBeenCalledTimes(2)
    await until(async () => (await listTokens(admin))[0]?.last_used_at !== first)
  })

  it('name the token, never the user it relays, as the actor of webhooks', async () => {
    const received: string[] = []
    const server: Server = createServer((request, response) => {
      let body = ''
      request.on('data', (chunk: Buffer) => (body += chunk.toString()))
      request.on('end', () => {
        received.push(body)
        response.end('ok')
      })
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const admin = await authedAdmin()
    try {
      const port = (server.address() as AddressInfo).port
      admin.engine.addWebhook(`http://127.0.0.1:${port}/hook`)
      const issued = await createToken(admin, { name: 'ops', role: 'operator' })
      await withToken(admin, issued.token, 'POST', '/routes/enable', { route: 'GET:/orders' })
      await withToken(admin, issued.token, 'POST', '/routes/disable', { route: 'GET:/orders' })
      await admin.engine.webhooksIdle()
      const disable = received
        .map((text) => JSON.parse(text) as { event: string })
        .find((p) => p.event === 'disable')
      expect(disable).toMatchObject({ actor: 'token:ops', platform: 'api' })
      expect(received.join('\n')).not.toContain(issued.token)
    } finally {
      await new Promise((resolve) => server.close(resolve))
    }
  })

  it('have a section on the dashboard’s Keys page, for admins only', async () => {
    const admin = await authedAdmin()
    const form = (token: string, url: string, fields: Record<string, string>) =>
      admin.app.inject({
        method: 'POST',
        url: `/switchyard${url}`,
        headers: {
          authorization: `Bearer ${token}`,
          'hx-request': 'true',
          'content-type': 'application/x-www-form-urlencoded',
        },
        payload: new URLSearchParams(fields).toString(),
      })
    const page = (token: string) =>
      admin.app.inject({
        url: '/switchyard/evaluation-keys',
        headers: { authorization: `Bearer ${token}`, accept: 'text/html' },
      })
    const created = await form(admin.token, '/api-tokens', {
      name: 'orders-app',
      role: 'viewer',
      service: 'orders',
      expires_at: '',
    })
    expect(created.statusCode, created.body).toBe(201)
    const token = /value="(syt_[A-Za-z0-9_-]{43})"/.exec(created.body)?.[1]
    expect(token).toBeDefined()
    expect(JSON.parse(created.headers['hx-trigger'] as string)).toEqual({
      'ui-refresh': { type: 'tokens' },
    })
    const [listed] = await listTokens(admin)
    expect(listed).toMatchObject({ name: 'orders-app', role: 'operator', service: 'orders' })
    const shown = await page(admin.token)
    expect(shown.body).toContain('API tokens')
    expect(shown.body).toContain('orders-app')
    expect(shown.body).not.toContain(token!)

    const bad = await form(admin.token, '/api-tokens', { name: 'bad name', role: 'viewer' })
    expect(bad.statusCode).toBe(422)
    expect(await listTokens(admin)).toHaveLength(1)

    const viewer = await createToken(admin, { name: 'reader', role: 'viewer' })
    const viewed = await page(viewer.token)
    expect(viewed.body).toContain('Managing evaluation keys and API tokens needs the admin role.')
    expect(viewed.body).not.toContain('orders-app')
    const refused = await form(viewer.token, `/api-tokens/${String(listed?.id)}/revoke`, {})
    expect(refused.statusCode).toBe(403)

    const revoked = await form(admin.token, `/api-tokens/${String(listed?.id)}/revoke`, {})
    expect(revoked.statusCode).toBe(200)
    expect((await listTokens(admin)).map((t) => t.name)).toEqual(['reader'])
  })
})
