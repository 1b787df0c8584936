/**
 * Authentication of the task admin: the login form, the session cookie's flags, expiry,
 * a secret key shared by two instances, revocation at logout seen by every instance, CSRF on
 * cookie-authenticated writes, login throttling per (username, client network).
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Fastify, { type FastifyInstance } from 'fastify'
import { afterAll, describe, expect, it } from 'vitest'
import { TaskManager } from '../../../src/tasks/index.js'
import { taskAdmin } from '../../../src/tasks/fastify/index.js'
import { quietLogger, waitForStatus } from '../helpers.js'
import { adminApp, login, loginRequest } from './helpers.js'

const form = (app: FastifyInstance, username: string, password: string) =>
  loginRequest(app, username, password)

/** The login POST with extra headers. */
async function withHeaders(app: FastifyInstance, headers: Record<string, string>) {
  const request = await form(app, 'admin', 's3cret')
  return { ...request, headers: { ...request.headers, ...headers } }
}

const AUTH = ['admin', 's3cret'] as const
const dir = mkdtempSync(join(tmpdir(), 'sy-task-admin-auth-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe('task admin login', () => {
  it('answers 303 to the dashboard with an HttpOnly, SameSite=Lax cookie, and audits nothing', async () => {
    const { app } = await adminApp({ auth: AUTH })
    const view = await app.inject('/tasks/auth/login')
    expect(view.statusCode).toBe(200)
    expect(view.headers['content-type']).toMatch(/^text\/html/)
    expect(view.body).toContain('name="password"')
    const response = await app.inject(await form(app, 'admin', 's3cret'))
    expect(response.statusCode).toBe(303)
    expect(response.headers.location).toBe('/tasks/dashboard')
    const cookies = [response.headers['set-cookie'] ?? []].flat()
    const cookie = cookies.find((c) => c.startsWith('switchyard_tasks_session='))
    // the pre-login cookie of the form is cleared
    expect(cookies.some((c) => /^switchyard_tasks_login=;/.test(c))).toBe(true)
    expect(cookie).toMatch(
      /^switchyard_tasks_session=v1\.[^;]+; Max-Age=86400; Path=\/tasks; HttpOnly; SameSite=Lax$/,
    )
    const { cookie: session } = await login(app)
    // A login changes nothing: the audit stays free of login rows.
    const audit = await app.inject({ url: '/tasks/audit', headers: { cookie: session } })
    expect(audit.json<{ items: { action: string }[] }>().items).toEqual([])
    await app.close()
  })

  it('answers 401 with the form for wrong or missing credentials, and writes nothing', async () => {
    const { app } = await adminApp({
      auth: [
        ['ada', 'pw-1'],
        ['grace', 'pw-2'],
      ],
    })
    for (const attempt of [
      await form(app, 'ada', 'pw-2'),
      await form(app, 'nobody', 'pw-1'),
      await form(app, 'ada', ''),
    ]) {
      const response = await app.inject(attempt)
      expect(response.statusCode).toBe(401)
      expect(response.body).toContain('<form')
      expect(response.headers['set-cookie']).toBeUndefined()
    }
    expect((await app.inject(await form(app, 'grace', 'pw-2'))).statusCode).toBe(303)
    const { cookie } = await login(app, 'ada', 'pw-1')
    // Neither the failed logins nor the successful ones (which change nothing) are audited.
    const audit = await app.inject({ url: '/tasks/audit', headers: { cookie } })
    expect(audit.json<{ total: number }>().total).toBe(0)
    await app.close()
  })

  it('accepts an authenticateUser backend, and only a real true', async () => {
    const { app } = await adminApp({
      auth: {
        authenticateUser: async (username: string, password: string) => {
          await Promise.resolve()
          return username === 'ldap' ? password === 'ok' : ('yes' as unknown as boolean)
        },
      },
    })
    expect((await app.inject(await form(app, 'ldap', 'ok'))).statusCode).toBe(303)
    expect((await app.inject(await form(app, 'other', 'anything'))).statusCode).toBe(401)
    await app.close()
  })

  it('refuses a malformed auth option at registration', async () => {
    const manager = new TaskManager({ logger: quietLogger })
    const unknownRole = [{ username: 'a', password: 'b', role: 'root' }]
    for (const auth of [['admin'], [], { users: 'x' }, [['a', '']], unknownRole, 42]) {
      await expect(
        Fastify()
          .register(taskAdmin, { taskManager: manager, auth: auth as never })
          .ready(),
      ).rejects.toThrow(/Invalid task admin `auth`/)
    }
  })

  it('sets Secure behind a trusted TLS proxy or with Fastify trustProxy, not for an untrusted peer', async () => {
    const https = { 'x-forwarded-proto': 'https' }
    const trusting = await adminApp({ auth: AUTH })
    const secure = await trusting.app.inject(await withHeaders(trusting.app, https))
    expect(String(secure.headers['set-cookie'])).toMatch(/; Secure/)
    const strict = await adminApp({ auth: AUTH, trustedProxies: ['10.0.0.0/8'] })
    const spoofed = await strict.app.inject(await withHeaders(strict.app, https))
    expect(String(spoofed.headers['set-cookie'])).not.toMatch(/Secure/)
    const viaProxy = await strict.app.inject({
      ...(await withHeaders(strict.app, https)),
      remoteAddress: '10.1.2.3',
    })
    expect(String(viaProxy.headers['set-cookie'])).toMatch(/; Secure/)
    const app = Fastify({ trustProxy: true })
    await app.register(taskAdmin, {
      taskManager: new TaskManager({ logger: quietLogger }),
      auth: AUTH,
      trustedProxies: ['10.0.0.0/8'],
    })
    const fastifyRule = await app.inject(await withHeaders(app, https))
    expect(String(fastifyRule.headers['set-cookie'])).toMatch(/; Secure/)
    await Promise.all([trusting.app.close(), strict.app.close(), app.close()])
  })

  it('throttles repeated failures per username and client network; other users are not locked out', async () => {
    let now = Date.parse('2026-11-21T12:00:00Z')
    const { app } = await adminApp({
      auth: [
        ['admin', 's3cret'],
        ['ops', 'pw'],
      ],
      loginThrottle: { freeAttempts: 2, baseDelay: 60 },
      clock: { now: () => now },
    })
    expect((await app.inject(await form(app, 'admin', 'x'))).statusCode).toBe(401)
    expect((await app.inject(await form(app, 'admin', 'y'))).statusCode).toBe(401)
    const blocked = await app.inject(await form(app, 'admin', 's3cret'))
    expect(blocked.statusCode).toBe(429)
    expect(blocked.headers['retry-after']).toBe('60')
    expect(blocked.body).toContain('Too many failed logins')
    // Another user from the same address, and the same user from another address, go ahead.
    expect((await app.inject(await form(app, 'ops', 'pw'))).statusCode).toBe(303)
    expect(
      (await app.inject({ ...(await form(app, 'admin', 's3cret')), remoteAddress: '203.0.113.9' }))
        .statusCode,
    ).toBe(303)
    now += 61_000
    expect((await app.inject(await form(app, 'admin', 's3cret'))).statusCode).toBe(303)
    await app.close()
  })
})

describe('task admin sessions', () => {
  it('sends the dashboard to the login view and the API a 401 without a session', async () => {
    const { app } = await adminApp({ auth: AUTH })
    const page = await app.inject('/tasks/dashboard')
    expect(page.statusCode).toBe(303)
    expect(page.headers.location).toBe('/tasks/auth/login?next=%2Ftasks%2Fdashboard')
    for (const url of ['/tasks', '/tasks/metrics', '/tasks/dashboard/stream']) {
      const response = await app.inject(url)
      expect(response.statusCode, url).toBe(401)
      expect(response.json()).toMatchObject({ error: { code: 'UNAUTHENTICATED' } })
    }
    const forged = await app.inject({
      url: '/tasks',
      headers: {
        cookie:
          'switchyard_tasks_session=v1.eyJ1IjoiYWRtaW4iLCJlIjo5OTk5OTk5OTk5OTk5LCJpIjoieCJ9.AAAA',
      },
    })
    expect(forged.statusCode).toBe(401)
    await app.close()
  })

  it('expires after tokenExpiry seconds (fake clock)', async () => {
    let now = Date.parse('2026-11-21T12:00:00Z')
    const { app } = await adminApp({ auth: AUTH, tokenExpiry: 60, clock: { now: () => now } })
    const { cookie } = await login(app)
    expect((await app.inject({ url: '/tasks', headers: { cookie } })).statusCode).toBe(200)
    now += 59_000
    expect((await app.inject({ url: '/tasks', headers: { cookie } })).statusCode).toBe(200)
    now += 2_000
    expect((await app.inject({ url: '/tasks', headers: { cookie } })).statusCode).toBe(401)
    await app.close()
  })

  it('needs the CSRF token on cookie-authenticated writes; a bearer token needs none', async () => {
    const { app, manager } = await adminApp({ auth: AUTH }, { queues: { mail: {} } })
    const job = manager.task({ name: 'job' }, () => {
      throw new Error('x')
    })
    const id = await manager.addTask(job, [])
    await waitForStatus(manager, id)
    const { cookie, csrf } = await login(app)
    const patch = (headers: Record<string, string>) =>
      app.inject({
        method: 'PATCH',
        url: '/tasks/queues/mail',
        payload: { concurrency: 3 },
        headers,
      })
    const missing = await patch({ cookie })
    expect(missing.statusCode).toBe(403)
    expect(missing.json()).toMatchObject({ error: { code: 'CSRF_TOKEN_INVALID' } })
    expect((await patch({ cookie, 'x-csrf-token': 'wrong' })).statusCode).toBe(403)
    expect(manager.queueStats()[0]).toMatchObject({ name: 'mail', concurrency: null })
    expect((await patch({ cookie, 'x-csrf-token': csrf })).statusCode).toBe(200)
    const token = cookie.slice(cookie.indexOf('=') + 1)
    const retry = await app.inject({
      method: 'POST',
      url: `/tasks/${id}/retry`,
      headers: { authorization: `Bearer ${token}` },
    })
    expect(retry.statusCode).toBe(201)
    await app.close()
  })

  it('without auth has no login view', async () => {
    const { app } = await adminApp()
    expect((await app.inject('/tasks/auth/login')).statusCode).toBe(404)
    expect((await app.inject('/tasks')).statusCode).toBe(200)
    await app.close()
  })
})

describe('task admin sessions across instances', () => {
  async function instance(path: string, secretKey: string) {
    const manager = new TaskManager({ store: path, logger: quietLogger })
    return adminApp({ auth: AUTH, secretKey }, {}, manager)
  }

  it('a shared secretKey lets every instance accept the session; a logout revokes it everywhere', async () => {
    const path = join(dir, 'shared.db')
    const key = 'a-shared-secret-of-enough-length'
    const [a, b] = [await instance(path, key), await instance(path, key)]
    const stranger = await instance(path, 'another-secret-key-entirely-here')
    const { cookie, csrf } = await login(a.app)
    expect((await b.app.inject({ url: '/tasks', headers: { cookie } })).statusCode).toBe(200)
    expect((await stranger.app.inject({ url: '/tasks', headers: { cookie } })).statusCode).toBe(401)
    const out = await a.app.inject({
      method: 'POST',
      url: '/tasks/auth/logout',
      headers: { cookie, 'x-csrf-token': csrf },
    })
    expect(out.statusCode).toBe(303)
    expect(out.headers.location).toBe('/tasks/auth/login')
    expect(String(out.headers['set-cookie'])).toMatch(
      /^switchyard_tasks_session=;.*Expires=Thu, 01 Jan 1970/,
    )
    expect((await b.app.inject({ url: '/tasks', headers: { cookie } })).statusCode).toBe(401)
    expect((await a.app.inject({ url: '/tasks', headers: { cookie } })).statusCode).toBe(401)
    await Promise.all([a.app.close(), b.app.close(), stranger.app.close()])
  })

  it('without a secretKey, a session is good on its own instance only', async () => {
    const path = join(dir, 'random-keys.db')
    const a = await adminApp(
      { auth: AUTH },
      {},
      new TaskManager({ store: path, logger: quietLogger }),
    )
    const b = await adminApp(
      { auth: AUTH },
      {},
      new TaskManager({ store: path, logger: quietLogger }),
    )
    const { cookie } = await login(a.app)
    expect((await a.app.inject({ url: '/tasks', headers: { cookie } })).statusCode).toBe(200)
    expect((await b.app.inject({ url: '/tasks', headers: { cookie } })).statusCode).toBe(401)
    await Promise.all([a.app.close(), b.app.close()])
  })
})

describe('task admin pages', () => {
  it('the dashboard has the title (escaped), the CSRF token, the poll interval and a logout', async () => {
    const { app } = await adminApp({
      auth: AUTH,
      title: 'Ops <script>alert(1)</script>',
      pollInterval: 12,
    })
    const { cookie, csrf } = await login(app)
    const page = await app.inject({ url: '/tasks/dashboard', headers: { cookie } })
    expect(page.headers['content-type']).toMatch(/^text\/html/)
    expect(page.body).toContain('<title>Runs · Ops &lt;script>alert(1)&lt;/script></title>')
    expect(page.body).not.toContain('<script>alert')
    expect(page.body).toContain(`<meta name="csrf-token" content="${csrf}"/>`)
    expect(page.body).toContain('data-poll-interval="12"')
    expect(page.body).toContain('sse-connect="/tasks/dashboard/stream"')
    expect(page.body).toContain('action="/tasks/auth/logout"')
    const loginView = await app.inject('/tasks/auth/login')
    expect(loginView.body).toContain('Ops &lt;script>')
    expect(loginView.body).not.toContain('<script>alert')
    await app.close()
  })
})
