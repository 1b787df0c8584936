/**
 * The task admin's login form is protected against cross-site posts (a CSRF token bound to a
 * pre-login cookie) and logout is POST-only with the session's CSRF token: a refused request
 * changes nothing.
 */
import type { FastifyInstance } from 'fastify'
import { afterEach, describe, expect, it } from 'vitest'
import { adminApp, login, loginRequest } from '../tasks/admin/helpers.js'

const apps: FastifyInstance[] = []
afterEach(async () => {
  await Promise.all(apps.splice(0).map((app) => app.close()))
})

async function app(): Promise<FastifyInstance> {
  const { app } = await adminApp({ auth: ['admin', 's3cret'] })
  apps.push(app)
  return app
}

const sessionCookie = (headers: { 'set-cookie'?: string | string[] | undefined }) =>
  [headers['set-cookie'] ?? []].flat().find((c) => c.startsWith('switchyard_tasks_session='))

async function auditTotal(target: FastifyInstance): Promise<number> {
  const { cookie } = await login(target)
  const audit = await target.inject({ url: '/tasks/audit', headers: { cookie } })
  return audit.json<{ total: number }>().total
}

describe('task admin login CSRF', () => {
  it('refuses a login without the form token, with a wrong one, or with another browser’s', async () => {
    const target = await app()
    const genuine = await loginRequest(target, 'admin', 's3cret')
    const other = await loginRequest(target, 'admin', 's3cret') // another nonce and token
    const otherToken = new URLSearchParams(other.payload).get('csrf_token')!
    const attempts = [
      // what another site's form would post: no token, no pre-login cookie
      {
        ...genuine,
        payload: 'username=admin&password=s3cret',
        headers: { 'content-type': genuine.headers['content-type']! },
      },
      // the cookie without the token
      { ...genuine, payload: 'username=admin&password=s3cret' },
      // a wrong token
      {
        ...genuine,
        payload: new URLSearchParams({
          csrf_token: 'x'.repeat(43),
          username: 'admin',
          password: 's3cret',
        }).toString(),
      },
      // a valid token of another nonce
      {
        ...genuine,
        payload: new URLSearchParams({
          csrf_token: otherToken,
          username: 'admin',
          password: 's3cret',
        }).toString(),
      },
      // the token without its cookie
      { ...genuine, headers: { 'content-type': genuine.headers['content-type']! } },
    ]
    for (const attempt of attempts) {
      const response = await target.inject(attempt)
      expect(response.statusCode).toBe(403)
      expect(response.body).toContain('missing or wrong CSRF token')
      expect(response.body).toContain('name="csrf_token"') // a fresh form to try again
      expect(sessionCookie(response.headers)).toBeUndefined()
    }
    // none of them counted as a failed login (the throttle would answer 429 after 5)
    const ok = await target.inject(genuine)
    expect(ok.statusCode).toBe(303)
    expect(sessionCookie(ok.headers)).toBeDefined()
    // the refused attempts wrote nothing (and logins, which change nothing, are not audited)
    expect(await auditTotal(target)).toBe(0)
  })
})

describe('task admin logout', () => {
  it('GET does not log out: 405 with a POST form', async () => {
    const target = await app()
    const { cookie, csrf } = await login(target)
    const page = await target.inject({ url: '/tasks/auth/logout', headers: { cookie } })
    expect(page.statusCode).toBe(405)
    expect(page.headers.allow).toBe('POST')
    expect(page.body).toContain('<form method="post" action="/tasks/auth/logout"')
    expect(page.body).toContain(`name="csrf_token" value="${csrf}"`)
    expect(page.headers['set-cookie']).toBeUndefined()
    expect((await target.inject({ url: '/tasks', headers: { cookie } })).statusCode).toBe(200)
  })

  it('POST needs the session’s CSRF token; without it the session stays', async () => {
    const target = await app()
    const { cookie, csrf } = await login(target)
    for (const headers of [{ cookie }, { cookie, 'x-csrf-token': 'wrong' }]) {
      const refused = await target.inject({ method: 'POST', url: '/tasks/auth/logout', headers })
      expect(refused.statusCode).toBe(403)
      expect(refused.json()).toMatchObject({ error: { code: 'CSRF_TOKEN_INVALID' } })
      expect(refused.headers['set-cookie']).toBeUndefined()
    }
    expect((await target.inject({ url: '/tasks', headers: { cookie } })).statusCode).toBe(200)
    // the plain form (no JavaScript) sends the token as a field
    const out = await target.inject({
      method: 'POST',
      url: '/tasks/auth/logout',
      payload: `csrf_token=${encodeURIComponent(csrf)}`,
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
    })
    expect(out.statusCode).toBe(303)
    expect((await target.inject({ url: '/tasks', headers: { cookie } })).statusCode).toBe(401)
  })

  it('the dashboard’s Log out control is a POST form carrying the token', async () => {
    const target = await app()
    const { cookie, csrf } = await login(target)
    const page = await target.inject({ url: '/tasks/dashboard', headers: { cookie } })
    const form = /<form method="post" action="\/tasks\/auth\/logout"[^>]*>([\s\S]*?)<\/form>/.exec(
      page.body,
    )
    expect(form?.[0]).toContain('hx-post="/tasks/auth/logout"')
    expect(form?.[1]).toContain(`name="csrf_token" value="${csrf}"`)
  })
})
