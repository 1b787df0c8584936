/**
 * Roles of the admin app's users: the login answer and `GET /api/auth/me` name the role, the
 * `auth.users` list is checked at mount (a bad role, a name listed twice), and an authenticate
 * function signs in with the role it answers, or refuses anything but `true` or a known role.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { ConfigError } from '../../src/index.js'
import type { AdminAuthOption } from '../../src/admin/index.js'
import { API, buildAdmin, closeAdmins, closeLater } from './helpers.js'

afterEach(closeAdmins)

async function adminWith(auth: AdminAuthOption) {
  const { app, engine } = await buildAdmin({ auth })
  closeLater(app)
  return { app, engine }
}

const loginAs = (
  app: Awaited<ReturnType<typeof adminWith>>['app'],
  username: string,
  password: string,
) => app.inject({ method: 'POST', url: `${API}/auth/login`, payload: { username, password } })

describe('admin roles', () => {
  it('the login answer and /api/auth/me name the role of each listed user', async () => {
    const { app } = await adminWith({
      users: [
        { username: 'vera', password: 'v', role: 'viewer' },
        { username: 'otto', password: 'o', role: 'operator' },
        { username: 'ada', password: 'a' },
      ],
    })
    for (const [username, password, role] of [
      ['vera', 'v', 'viewer'],
      ['otto', 'o', 'operator'],
      ['ada', 'a', 'admin'],
    ] as const) {
      const login = await loginAs(app, username, password)
      expect(login.statusCode).toBe(200)
      expect(login.json()).toMatchObject({ username, role })
      const me = await app.inject({
        url: `${API}/auth/me`,
        headers: { authorization: `Bearer ${login.json<{ token: string }>().token}` },
      })
      expect(me.json()).toMatchObject({ username, role, authenticated: true })
    }
  })

  it('open mode: /api/auth/me answers an anonymous admin', async () => {
    const { app } = await buildAdmin()
    closeLater(app)
    expect((await app.inject(`${API}/auth/me`)).json()).toMatchObject({
      username: 'anonymous',
      role: 'admin',
      auth_required: false,
    })
  })

  it('auth.users with an unknown role is a ConfigError at mount', async () => {
    const mount = buildAdmin({
      auth: { users: [{ username: 'eve', password: 'x', role: 'root' as 'admin' }] },
    })
    await expect(mount).rejects.toBeInstanceOf(ConfigError)
    await expect(mount).rejects.toThrow(/unknown role "root"/)
  })

  it('a users list naming a user twice is a ConfigError at mount', async () => {
    await expect(
      buildAdmin({
        auth: {
          users: [
            { username: 'ada', password: 'a', role: 'viewer' },
            { username: 'ada', password: 'b', role: 'admin' },
          ],
        },
      }),
    ).rejects.toThrow(ConfigError)
  })

  it('authenticate answering {role: "viewer"} signs in a viewer, refused a write', async () => {
    const { app, engine } = await adminWith({
      authenticate: (username, password) =>
        username === 'vera' && password === 'v' ? { role: 'viewer' } : false,
    })
    const login = await loginAs(app, 'vera', 'v')
    expect(login.statusCode).toBe(200)
    expect(login.json()).toMatchObject({ username: 'vera', role: 'viewer' })
    const headers = { authorization: `Bearer ${login.json<{ token: string }>().token}` }
    expect((await app.inject({ url: `${API}/auth/me`, headers })).json()).toMatchObject({
      role: 'viewer',
    })
    const write = await app.inject({
      method: 'POST',
      url: `${API}/routes/disable`,
      headers,
      payload: { route: 'GET:/orders', reason: 'x' },
    })
    expect(write.statusCode).toBe(403)
    expect(write.json()).toMatchObject({
      error: { code: 'FORBIDDEN', required_role: 'operator' },
    })
    expect(engine.getState('GET:/orders')[0]?.status).toBe('active')
  })

  it.each([
    ['{role: "root"}', { role: 'root' }],
    ['"yes"', 'yes'],
    ['1', 1],
    ['{}', {}],
  ])('authenticate answering %s refuses the login (401)', async (_label, answer) => {
    const { app } = await adminWith(() => answer as never)
    const login = await loginAs(app, 'ada', 'anything')
    expect(login.statusCode).toBe(401)
    expect(login.json()).toMatchObject({ error: { code: 'UNAUTHENTICATED' } })
  })
})
