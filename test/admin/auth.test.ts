import Fastify from 'fastify'
import { afterEach, describe, expect, it } from 'vitest'
import { adminApp } from '../../src/admin/index.js'
import { createEngine } from '../../src/index.js'
import { ADMIN, API, authedAdmin, buildAdmin, closeAdmins, closeLater, login } from './helpers.js'

afterEach(closeAdmins)

const authed = (options: Parameters<typeof authedAdmin>[0] = {}) => authedAdmin(options)

describe('authentication', () => {
  it('logs in, reports me, and logout revokes the token', async () => {
    const { app, token, call } = await authed()
    const me = (await call('GET', '/auth/me')).json()
    expect(me).toMatchObject({ username: 'admin', authenticated: true, auth_required: true })
    expect(Date.parse(me.expires_at)).toBeGreaterThan(Date.now() + 23 * 3600_000)
    expect((await call('POST', '/auth/logout')).json()).toEqual({ revoked: true })
    const after = await app.inject({
      url: `${API}/auth/me`,
      headers: { authorization: `Bearer ${token}` },
    })
    expect(after.statusCode).toBe(401)
    expect(after.json().error.code).toBe('UNAUTHENTICATED')
  })

  it('rejects wrong passwords, unknown users, malformed headers and unknown tokens', async () => {
    const { app } = await authed()
    for (const payload of [
      { username: 'admin', password: 'wrong' },
      { username: 'nobody', password: 's3cret' },
    ]) {
      const response = await app.inject({ method: 'POST', url: `${API}/auth/login`, payload })
      expect(response.statusCode).toBe(401)
      expect(response.json().error.code).toBe('UNAUTHENTICATED')
    }
    const missing = await app.inject({
      method: 'POST',
      url: `${API}/auth/login`,
      payload: { username: 'admin' },
    })
    expect(missing.statusCode).toBe(400)
    for (const authorization of ['Basic YWRtaW46czNjcmV0', 'Bearer', 'Bearer unknown-token']) {
      const response = await app.inject({ url: `${API}/routes`, headers: { authorization } })
      expect(response.statusCode, authorization).toBe(401)
    }
  })

  it('expires tokens after tokenExpiry', async () => {
    const { call, clock } = await authed({ tokenExpiry: 60 })
    expect((await call('GET', '/auth/me')).statusCode).toBe(200)
    clock!.advance(61_000)
    expect((await call('GET', '/auth/me')).statusCode).toBe(401)
  })

  it('throttles repeated failed logins of one username from one address with a 429, and lets a later attempt through', async () => {
    const { app, clock } = await authed({ loginThrottle: { freeAttempts: 3, baseDelay: 10 } })
    const attempt = (password: string) =>
      app.inject({
        method: 'POST',
        url: `${API}/auth/login`,
        payload: { username: 'admin', password },
      })
    for (let i = 0; i < 3; i++) expect((await attempt('wrong')).statusCode).toBe(401)
    const throttled = await attempt('s3cret')
    expect(throttled.statusCode).toBe(429)
    expect(throttled.json().error).toMatchObject({
      code: 'TOO_MANY_LOGIN_ATTEMPTS',
      retry_after: 10,
    })
    expect(throttled.headers['retry-after']).toBe('10')
    clock!.advance(10_000)
    expect((await attempt('wrong')).statusCode).toBe(401)
    expect((await attempt('s3cret')).json().error.retry_after).toBe(20)
    clock!.advance(20_000)
    expect((await attempt('s3cret')).statusCode).toBe(200)
    expect((await attempt('wrong')).statusCode).toBe(401)
  })

  it('accepts cookie sessions, requiring X-CSRF-Token for writes', async () => {
    const { app } = await authed()
    const loginResponse = await app.inject({
      method: 'POST',
      url: `${API}/auth/login`,
      payload: ADMIN,
    })
    const setCookie = String(loginResponse.headers['set-cookie'])
    expect(setCookie).toMatch(/^switchyard_session=/)
    expect(setCookie).toMatch(/HttpOnly/)
    expect(setCookie).toMatch(/SameSite=Strict/)
    expect(setCookie).toMatch(/Path=\/switchyard/)
    expect(setCookie).not.toMatch(/Secure/)
    const cookie = setCookie.split(';')[0]!
    const csrf = loginResponse.json().csrf_token as string
    const read = await app.inject({ url: `${API}/auth/me`, headers: { cookie } })
    expect(read.json()).toMatchObject({ username: 'admin', csrf_token: csrf })
    const noCsrf = await app.inject({
      method: 'POST',
      url: `${API}/routes/enable`,
      headers: { cookie },
      payload: { route: '/orders' },
    })
    expect(noCsrf.statusCode).toBe(403)
    expect(noCsrf.json().error.code).toBe('CSRF_TOKEN_INVALID')
    const wrongCsrf = await app.inject({
      method: 'POST',
      url: `${API}/routes/enable`,
      headers: { cookie, 'x-csrf-token': 'x' },
      payload: { route: '/orders' },
    })
    expect(wrongCsrf.statusCode).toBe(403)
    const ok = await app.inject({
      method: 'POST',
      url: `${API}/routes/enable`,
      headers: { cookie, 'x-csrf-token': csrf, 'x-ctl-platform': 'dashboard' },
      payload: { route: '/orders' },
    })
    expect(ok.statusCode).toBe(200)
    const secure = await app.inject({
      method: 'POST',
      url: `${API}/auth/login`,
      headers: { 'x-forwarded-proto': 'https' },
      payload: ADMIN,
    })
    expect(secure.statusCode).toBe(200)
  })

  it('supports a list of users, a [user, password] pair and an async authenticate function', async () => {
    const list = await buildAdmin({ auth: [ADMIN, { username: 'ops', password: 'pw2' }] })
    const pair = await buildAdmin({ auth: ['root', 'toor'] })
    const fn = await buildAdmin({
      auth: async (username, password) => {
        await Promise.resolve()
        return username === 'ldap' && password === 'bind'
      },
    })
    closeLater(list.app, pair.app, fn.app)
    expect(await login(list.app, { username: 'ops', password: 'pw2' })).toBeTypeOf('string')
    expect(await login(pair.app, { username: 'root', password: 'toor' })).toBeTypeOf('string')
    expect(await login(fn.app, { username: 'ldap', password: 'bind' })).toBeTypeOf('string')
    await expect(login(fn.app, { username: 'ldap', password: 'nope' })).rejects.toThrow(
      /401|Invalid/,
    )
    await expect(buildAdmin({ auth: { username: 'x', password: '' } })).rejects.toThrow(/auth/)
  })

  it('works in open mode: no login needed, actor anonymous, login answers AUTH_NOT_CONFIGURED', async () => {
    const { app } = await buildAdmin({})
    closeLater(app)
    const login400 = await app.inject({ method: 'POST', url: `${API}/auth/login`, payload: ADMIN })
    expect(login400.statusCode).toBe(400)
    expect(login400.json().error.code).toBe('AUTH_NOT_CONFIGURED')
    const enable = await app.inject({
      method: 'POST',
      url: `${API}/routes/disable`,
      headers: { 'x-ctl-platform': 'sdk' },
      payload: { route: 'GET:/orders' },
    })
    expect(enable.statusCode).toBe(200)
    const audit = (await app.inject({ url: `${API}/audit` })).json()
    expect(audit.items[0]).toMatchObject({ actor: 'anonymous', platform: 'sdk' })
    expect((await app.inject({ url: `${API}/auth/me` })).json()).toMatchObject({
      username: 'anonymous',
      authenticated: false,
      auth_required: false,
    })
  })

  it('every non-public endpoint answers 401 without a token (sweep over the OpenAPI document)', async () => {
    const { app, call } = await authed()
    const doc = (await call('GET', '/openapi.json')).json<{
      paths: Record<string, Record<string, { security?: unknown[] }>>
    }>()
    const operations = Object.entries(doc.paths).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, operation]) => ({ path, method, operation })),
    )
    expect(operations.length).toBe(78)
    const publicOnes = operations.filter((op) => op.operation.security?.length === 0)
    // Besides login: CORS preflights, and the OFREP change stream, which checks its own token.
    expect(publicOnes.map((op) => `${op.method} ${op.path}`)).toEqual([
      'post /api/auth/login',
      'options /ofrep/v1/evaluate/flags/{key}',
      'options /ofrep/v1/evaluate/flags',
      'get /ofrep/stream',
    ])
    for (const { path, method, operation } of operations) {
      if (operation.security?.length === 0) continue
      const url = `/switchyard${path.replace('{service}', 'billing')}`
      for (const url2 of [url, `${url}/`, `${url}?x=/api/auth/login`]) {
        const response = await app.inject({
          method: method.toUpperCase() as 'GET',
          url: url2,
          payload: method === 'get' ? undefined : {},
        })
        expect(response.statusCode, `${method} ${url2}`).toBe(401)
        // The OFREP endpoints answer in the protocol's shape ({errorDetails}).
        const body = response.json<{
          error?: { code: string; message: string }
          errorDetails?: string
        }>()
        if (path.startsWith('/ofrep/'))
          expect(body.error?.message ?? body.errorDetails).toMatch(/Authentication required/)
        else expect(body.error?.code).toBe('UNAUTHENTICATED')
      }
    }
    const stream = await app.inject({ url: '/switchyard/ofrep/stream?x=/api/auth/login' })
    expect(stream.statusCode).toBe(401)
    // No suffix or substring rule makes another path public.
    for (const url of [
      `${API}/auth/login/../../routes`,
      `${API}/routes/api/auth/login`,
      `${API}/auth/loginx`,
    ]) {
      const response = await app.inject({ method: 'GET', url })
      expect(response.statusCode, url).toBe(401)
    }
  })
})

describe('startup', () => {
  it('warns at startup in open mode, and not with credentials', async () => {
    const lines: string[] = []
    const stream = { write: (line: string) => lines.push(line) }
    for (const auth of [undefined, ADMIN]) {
      const app = Fastify({ logger: { level: 'warn', stream } })
      closeLater(app)
      const engine = createEngine({ store: 'memory' })
      await app.register(adminApp, { engine, ...(auth ? { auth } : {}) })
      await app.ready()
    }
    expect(lines).toHaveLength(1)
    expect(JSON.parse(lines[0]!).msg).toMatch(/no credentials: it is open/)
  })

  it('rejects invalid options at registration', async () => {
    const engine = createEngine({ store: 'memory' })
    for (const options of [
      { engine, path: 'no-slash' },
      { engine, tokenExpiry: 0 },
      { engine, auth: [] },
      { engine, keepaliveInterval: -1 },
      { engine, loginThrottle: { freeAttempts: 1.5 } },
    ]) {
      const app = Fastify()
      await expect(app.register(adminApp, options as never).ready()).rejects.toThrow()
      await app.close()
    }
  })
})
