/**
 * Both admin mounts refuse writes a browser sends on behalf of another site (403
 * `CROSS_ORIGIN_REQUEST`, nothing changed) and answer only for their `allowedHosts` (421
 * `MISDIRECTED_REQUEST`, loopback names by default without credentials) — the defence of an
 * open admin against a page the operator happens to open, and against DNS rebinding.
 */
import { request as httpRequest } from 'node:http'
import type { AddressInfo } from 'node:net'
import Fastify, { type FastifyInstance } from 'fastify'
import { afterEach, describe, expect, it } from 'vitest'
import { adminApp } from '../../src/admin/index.js'
import { createEngine } from '../../src/index.js'
import { TaskManager } from '../../src/tasks/index.js'
import { ADMIN, API, buildAdmin, login } from '../admin/helpers.js'
import { quietLogger } from '../tasks/helpers.js'
import { adminApp as taskAdminApp, loginRequest } from '../tasks/admin/helpers.js'

const apps: FastifyInstance[] = []
afterEach(async () => {
  await Promise.all(apps.splice(0).map((app) => app.close()))
})

async function routeAdmin(options: Parameters<typeof buildAdmin>[0] = {}) {
  const built = await buildAdmin(options)
  apps.push(built.app)
  return built
}

async function taskAdmin(options: Parameters<typeof taskAdminApp>[0] = {}) {
  const built = await taskAdminApp(options, { queues: { mail: {} } })
  apps.push(built.app)
  return built
}

/** A 421 as JSON from the API, as an HTML error page from the dashboards. */
function expectMisdirected(response: { headers: Record<string, unknown>; body: string }): void {
  if (String(response.headers['content-type']).startsWith('application/json')) {
    expect(JSON.parse(response.body)).toMatchObject({ error: { code: 'MISDIRECTED_REQUEST' } })
  } else expect(response.body).toContain('does not answer for the host')
}

/** The headers of a cross-site browser request, each on its own. */
const CROSS_SITE: Record<string, string>[] = [
  { origin: 'https://evil.example' },
  { origin: 'http://localhost:8080' }, // another port is another origin
  { origin: 'https://localhost' }, // another scheme too
  { origin: 'null' },
  { 'sec-fetch-site': 'cross-site' },
  { 'sec-fetch-site': 'same-site' },
  { origin: 'http://localhost', 'sec-fetch-site': 'cross-site' },
  { origin: 'not a url' },
]

/** Headers that pass: no browser, or a browser on the request's own origin. */
const SAME_ORIGIN: Record<string, string>[] = [
  {},
  { origin: 'http://localhost' }, // inject sends Host: localhost:80
  { origin: 'http://LOCALHOST:80' },
  { 'sec-fetch-site': 'same-origin' },
  { 'sec-fetch-site': 'none' },
  { origin: 'http://localhost', 'sec-fetch-site': 'same-origin' },
]

describe('admin app in open mode: cross-origin writes', () => {
  it('refuses global maintenance from another site and leaves it off', async () => {
    const { app } = await routeAdmin()
    for (const headers of CROSS_SITE) {
      const response = await app.inject({
        method: 'POST',
        url: `${API}/global-maintenance/enable`,
        payload: { reason: 'x' },
        headers,
      })
      expect(response.statusCode, JSON.stringify(headers)).toBe(403)
      expect(response.json()).toMatchObject({ error: { code: 'CROSS_ORIGIN_REQUEST' } })
    }
    const state = await app.inject(`${API}/global-maintenance`)
    expect(state.json()).toMatchObject({ active: false })
    const audit = await app.inject(`${API}/audit`)
    expect(JSON.stringify(audit.json())).not.toContain('maintenance')
  })

  it('accepts the same write without browser headers or from its own origin', async () => {
    const { app } = await routeAdmin()
    for (const headers of SAME_ORIGIN) {
      const response = await app.inject({
        method: 'POST',
        url: `${API}/global-maintenance/enable`,
        payload: { reason: 'x' },
        headers,
      })
      expect(response.statusCode, JSON.stringify(headers)).toBe(200)
      expect(response.json()).toMatchObject({ active: true })
    }
  })

  it('lets reads from other sites through (they change nothing)', async () => {
    const { app } = await routeAdmin()
    const response = await app.inject({
      url: `${API}/global-maintenance`,
      headers: { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' },
    })
    expect(response.statusCode).toBe(200)
  })

  it('compares with the origin a trusted proxy reports, not with one a client names', async () => {
    const { app } = await routeAdmin()
    const behindProxy = {
      origin: 'https://admin.example.com',
      'x-forwarded-proto': 'https',
      'x-forwarded-host': 'admin.example.com',
    }
    // inject's peer is 127.0.0.1, a trusted proxy by default
    const through = await app.inject({
      method: 'POST',
      url: `${API}/global-maintenance/enable`,
      payload: {},
      headers: behindProxy,
    })
    expect(through.statusCode).toBe(200)
    const untrusted = await routeAdmin({ trustedProxies: ['10.0.0.0/8'] })
    const direct = await untrusted.app.inject({
      method: 'POST',
      url: `${API}/global-maintenance/enable`,
      payload: {},
      headers: behindProxy,
    })
    expect(direct.statusCode).toBe(403)
    expect((await untrusted.app.inject(`${API}/global-maintenance`)).json()).toMatchObject({
      active: false,
    })
  })

  it('leaves the OFREP evaluations to their own CORS rule', async () => {
    const { app } = await routeAdmin()
    const response = await app.inject({
      method: 'POST',
      url: '/switchyard/ofrep/v1/evaluate/flags',
      payload: { context: {} },
      headers: { origin: 'https://shop.example' },
    })
    expect(response.body).not.toContain('CROSS_ORIGIN_REQUEST')
  })
})

describe('admin app with credentials: cross-origin writes', () => {
  it('refuses a login posted by another site, and a bearer write sent from one', async () => {
    const { app } = await routeAdmin({ auth: ADMIN })
    const crossLogin = await app.inject({
      method: 'POST',
      url: `${API}/auth/login`,
      payload: ADMIN,
      headers: { origin: 'https://evil.example' },
    })
    expect(crossLogin.statusCode).toBe(403)
    expect(crossLogin.json()).toMatchObject({ error: { code: 'CROSS_ORIGIN_REQUEST' } })
    expect(crossLogin.headers['set-cookie']).toBeUndefined()
    const token = await login(app)
    const write = (headers: Record<string, string>) =>
      app.inject({
        method: 'POST',
        url: `${API}/global-maintenance/enable`,
        payload: {},
        headers: { authorization: `Bearer ${token}`, ...headers },
      })
    expect((await write({ 'sec-fetch-site': 'cross-site' })).statusCode).toBe(403)
    expect((await write({})).statusCode).toBe(200)
  })
})

describe('admin app: allowedHosts', () => {
  it('answers only loopback names in open mode, on public and protected routes', async () => {
    const { app } = await routeAdmin()
    for (const host of [
      'localhost',
      'localhost:9000',
      'LocalHost.',
      '127.0.0.1:9000',
      '[::1]:9000',
      'app.localhost',
    ]) {
      const response = await app.inject({ url: `${API}/global-maintenance`, headers: { host } })
      expect(response.statusCode, host).toBe(200)
    }
    for (const host of [
      'evil.example',
      'evil.example:80',
      '127.0.0.1.nip.io',
      'localhost.evil.example',
      'x@localhost',
    ]) {
      for (const url of [
        `${API}/global-maintenance`,
        `${API}/openapi.json`,
        '/switchyard/',
        `${API}/nope`,
      ]) {
        const response = await app.inject({ url, headers: { host } })
        expect(response.statusCode, `${host} ${url}`).toBe(421)
        expectMisdirected(response)
      }
    }
    const write = await app.inject({
      method: 'POST',
      url: `${API}/global-maintenance/enable`,
      payload: {},
      headers: { host: 'evil.example', 'x-forwarded-host': 'localhost' },
    })
    expect(write.statusCode).toBe(421)
    expect((await app.inject(`${API}/global-maintenance`)).json()).toMatchObject({ active: false })
  })

  it('checks an explicit list with credentials, and nothing by default', async () => {
    const { app } = await routeAdmin({
      auth: ADMIN,
      allowedHosts: ['admin.example.com', '*.corp.example'],
    })
    const loginAs = (host: string) =>
      app.inject({ method: 'POST', url: `${API}/auth/login`, payload: ADMIN, headers: { host } })
    expect((await loginAs('ADMIN.example.com:8443')).statusCode).toBe(200)
    expect((await loginAs('ops.corp.example')).statusCode).toBe(200)
    for (const host of ['localhost', 'corp.example', 'evil.example']) {
      const refused = await loginAs(host)
      expect(refused.statusCode, host).toBe(421)
      const routes = await app.inject({ url: `${API}/routes`, headers: { host } })
      expect(routes.statusCode, host).toBe(421)
    }
    const unchecked = await routeAdmin({ auth: ADMIN })
    const anywhere = await unchecked.app.inject({
      method: 'POST',
      url: `${API}/auth/login`,
      payload: ADMIN,
      headers: { host: 'evil.example' },
    })
    expect(anywhere.statusCode).toBe(200)
  })

  it('turns the check off with allowedHosts: false', async () => {
    const { app } = await routeAdmin({ allowedHosts: false })
    const response = await app.inject({
      url: `${API}/global-maintenance`,
      headers: { host: 'evil.example' },
    })
    expect(response.statusCode).toBe(200)
  })

  it('refuses a bad allowedHosts at mount', async () => {
    for (const bad of [
      ['admin.example.com:8080'],
      ['*'],
      [''],
      [],
      ['http://x'],
      ['a b'],
      [7],
      'localhost',
      true,
    ]) {
      const app = Fastify()
      const engine = createEngine({ logger: { warn: () => undefined, error: () => undefined } })
      await expect(
        app.register(adminApp, { engine, allowedHosts: bad as never }).ready(),
        JSON.stringify(bad),
      ).rejects.toThrow(/allowedHosts/)
      await app.close()
      await engine.close()
    }
  })

  it('refuses a DNS-rebinding request to a server listening on 127.0.0.1', async () => {
    const { app } = await routeAdmin()
    await app.listen({ host: '127.0.0.1', port: 0 })
    const { port } = app.server.address() as AddressInfo
    const send = (host: string, method = 'GET', headers: Record<string, string> = {}) =>
      new Promise<number>((resolve, reject) => {
        const request = httpRequest(
          {
            host: '127.0.0.1',
            port,
            method,
            path: `${API}/global-maintenance${method === 'POST' ? '/enable' : ''}`,
            headers: { host, ...headers },
          },
          (response) => {
            response.resume()
            resolve(response.statusCode ?? 0)
          },
        )
        request.on('error', reject)
        request.end(method === 'POST' ? '{}' : undefined)
      })
    const json = { 'content-type': 'application/json' }
    // the attacker's name resolves to 127.0.0.1, and the page is its own origin for the browser
    expect(
      await send(`evil.example:${port}`, 'POST', {
        ...json,
        origin: `http://evil.example:${port}`,
      }),
    ).toBe(421)
    expect(await send(`evil.example:${port}`)).toBe(421)
    expect(await send(`127.0.0.1:${port}`)).toBe(200)
    expect(
      await send(`127.0.0.1:${port}`, 'POST', { ...json, origin: `http://localhost:${port}` }),
    ).toBe(403)
    expect(
      await send(`127.0.0.1:${port}`, 'POST', { ...json, origin: `http://127.0.0.1:${port}` }),
    ).toBe(200)
  })
})

describe('task admin: cross-origin writes and allowedHosts', () => {
  const patch = (headers: Record<string, string>) => ({
    method: 'PATCH' as const,
    url: '/tasks/queues/mail',
    payload: { concurrency: 3 },
    headers,
  })

  it('refuses a queue change from another site in open mode and changes nothing', async () => {
    const { app, manager } = await taskAdmin()
    for (const headers of CROSS_SITE) {
      const response = await app.inject(patch(headers))
      expect(response.statusCode, JSON.stringify(headers)).toBe(403)
      expect(response.json()).toMatchObject({ error: { code: 'CROSS_ORIGIN_REQUEST' } })
    }
    expect(manager.queueStats()[0]).toMatchObject({ name: 'mail', concurrency: null })
    expect((await app.inject('/tasks/audit')).json()).toMatchObject({ items: [] })
    for (const headers of SAME_ORIGIN) {
      const response = await app.inject(patch(headers))
      expect(response.statusCode, JSON.stringify(headers)).toBe(200)
    }
    expect(manager.queueStats()[0]).toMatchObject({ name: 'mail', concurrency: 3 })
  })

  it('refuses a login form posted by another site before it signs in', async () => {
    const { app } = await taskAdmin({ auth: ['admin', 's3cret'] })
    const form = await loginRequest(app, 'admin', 's3cret')
    const refused = await app.inject({
      ...form,
      headers: { ...form.headers, origin: 'https://evil.example' },
    })
    expect(refused.statusCode).toBe(403)
    expect(refused.json()).toMatchObject({ error: { code: 'CROSS_ORIGIN_REQUEST' } })
    expect(refused.headers['set-cookie']).toBeUndefined()
    const genuine = await app.inject({
      ...form,
      headers: { ...form.headers, origin: 'http://localhost' },
    })
    expect(genuine.statusCode).toBe(303)
  })

  it('answers only loopback names in open mode, and an explicit list with auth', async () => {
    const { app } = await taskAdmin()
    expect(
      (await app.inject({ url: '/tasks', headers: { host: '127.0.0.1:3000' } })).statusCode,
    ).toBe(200)
    for (const url of ['/tasks', '/tasks/dashboard', '/tasks/nope']) {
      const response = await app.inject({ url, headers: { host: 'evil.example' } })
      expect(response.statusCode, url).toBe(421)
      expectMisdirected(response)
    }
    const guarded = await taskAdmin({
      auth: ['admin', 's3cret'],
      allowedHosts: ['tasks.example.com'],
    })
    const view = (host: string) =>
      guarded.app.inject({ url: '/tasks/auth/login', headers: { host } })
    expect((await view('tasks.example.com:443')).statusCode).toBe(200)
    expect((await view('localhost')).statusCode).toBe(421)
    expect(
      (await guarded.app.inject({ url: '/tasks', headers: { host: 'localhost' } })).statusCode,
    ).toBe(421)
    const open = await taskAdmin({ allowedHosts: false })
    expect(
      (await open.app.inject({ url: '/tasks', headers: { host: 'evil.example' } })).statusCode,
    ).toBe(200)
  })

  it('refuses a bad allowedHosts at mount', async () => {
    for (const bad of [['tasks.example.com:80'], ['*'], [], [null]]) {
      const app = Fastify()
      const manager = new TaskManager({ logger: quietLogger })
      await expect(
        (async () => {
          await app.register((await import('../../src/tasks/fastify/index.js')).taskAdmin, {
            taskManager: manager,
            allowedHosts: bad as never,
          })
          await app.ready()
        })(),
        JSON.stringify(bad),
      ).rejects.toThrow(/allowedHosts/)
      await app.close()
    }
  })
})
