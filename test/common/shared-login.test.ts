/**
 * One login for both admins: the admin app and the task admin mounted on one Fastify app with
 * the same `auth` value (in either order) share one cookie, one session, one CSRF token and
 * one logout; with different `auth` values they stay two logins.
 */
import { afterEach, describe, expect, it } from 'vitest'
import Fastify, { type FastifyInstance } from 'fastify'
import { createEngine } from '../../src/index.js'
import { adminApp } from '../../src/admin/index.js'
import { switchyard } from '../../src/fastify/index.js'
import { TaskManager } from '../../src/tasks/index.js'
import { taskAdmin } from '../../src/tasks/fastify/index.js'
import { commonPath } from '../../src/common/shared-login.js'
import { quietLogger } from '../tasks/helpers.js'
import { listen, loginRequest, openStream } from '../tasks/admin/helpers.js'

const USERS = [
  { username: 'ada', password: 'admin-pass' },
  { username: 'vera', password: 'view-pass', role: 'viewer' },
] as const

const apps: FastifyInstance[] = []
afterEach(async () => {
  for (const app of apps.splice(0)) await app.close()
})

type Order = 'admin first' | 'tasks first'

/** Both admins on one app: the admin app at /ops/switchyard, the task admin at /ops/tasks. */
async function mountBoth(order: Order, routeAuth: unknown = USERS, taskAuth: unknown = routeAuth) {
  const engine = createEngine({
    store: 'memory',
    env: 'prod',
    logger: { warn: () => undefined, error: () => undefined },
  })
  const manager = new TaskManager({ logger: quietLogger })
  const app = Fastify()
  apps.push(app)
  app.addHook('onClose', async () => {
    await engine.close()
  })
  const route = () =>
    app.register(adminApp, { engine, path: '/ops/switchyard', auth: routeAuth as never })
  const tasks = () =>
    app.register(taskAdmin, { taskManager: manager, path: '/ops/tasks', auth: taskAuth as never })
  if (order === 'admin first') {
    await route()
    await tasks()
  } else {
    await tasks()
    await route()
  }
  await app.ready()
  return { app, manager }
}

/** Logs in on the admin app's API: the token, the cookie as set, the CSRF token. */
async function apiLogin(app: FastifyInstance, username = 'ada', password = 'admin-pass') {
  const response = await app.inject({
    method: 'POST',
    url: '/ops/switchyard/api/auth/login',
    payload: { username, password },
  })
  expect(response.statusCode).toBe(200)
  const body = response.json<{ token: string; csrf_token: string }>()
  const cookie = response.cookies.find((c) => c.name === 'switchyard_session')!
  return { token: body.token, csrf: body.csrf_token, cookie }
}

/** Logs in through the task admin's login view: the cookie as set. */
async function viewLogin(app: FastifyInstance, username = 'ada', password = 'admin-pass') {
  const response = await app.inject(await loginRequest(app, username, password, '/ops/tasks'))
  expect(response.statusCode).toBe(303)
  return response.cookies
}

const me = (app: FastifyInstance, url: string, headers: Record<string, string>) =>
  app.inject({ url, headers })

describe('one login for both admins', () => {
  it('finds the common path of the mounts', () => {
    expect(commonPath(['/ops/switchyard', '/ops/tasks'])).toBe('/ops')
    expect(commonPath(['/switchyard', '/tasks'])).toBe('/')
    expect(commonPath(['/a/bc', '/a/b'])).toBe('/a')
    expect(commonPath(['/tasks'])).toBe('/tasks')
    expect(commonPath(['/', '/tasks'])).toBe('/')
  })

  for (const order of ['admin first', 'tasks first'] as const) {
    it(`${order}: a login on the admin app serves the task admin, a logout there ends it on both`, async () => {
      const { app, manager } = await mountBoth(order)
      const { token, csrf, cookie } = await apiLogin(app)
      // One cookie whose path covers both mounts.
      expect(cookie.path).toBe('/ops')
      const bearer = { authorization: `Bearer ${token}` }
      const cookieHeader = { cookie: `switchyard_session=${cookie.value}` }
      expect((await me(app, '/ops/tasks/auth/me', bearer)).json()).toMatchObject({
        username: 'ada',
        role: 'admin',
        authenticated: true,
      })
      // The dashboard with the cookie, embedding the shared session's CSRF token.
      const page = await app.inject({ url: '/ops/tasks/dashboard', headers: cookieHeader })
      expect(page.statusCode).toBe(200)
      expect(page.body).toContain(`<meta name="csrf-token" content="${csrf}"`)
      // A cookie write on the task admin with the shared CSRF token; without it, refused.
      const patch = (headers: Record<string, string>) =>
        app.inject({
          method: 'PATCH',
          url: '/ops/tasks/queues/default',
          payload: { concurrency: 4 },
          headers: { ...cookieHeader, ...headers },
        })
      expect((await patch({})).statusCode).toBe(403)
      expect(manager.queueStats().find((q) => q.name === 'default')?.concurrency).not.toBe(4)
      expect((await patch({ 'x-csrf-token': csrf })).statusCode).toBe(200)
      expect(manager.queueStats().find((q) => q.name === 'default')?.concurrency).toBe(4)
      // Logging out on the task admin ends the session on both.
      const logout = await app.inject({
        method: 'POST',
        url: '/ops/tasks/auth/logout',
        headers: { ...cookieHeader, 'x-csrf-token': csrf },
      })
      expect(logout.statusCode).toBe(303)
      const cleared = logout.cookies.find((c) => c.name === 'switchyard_session')
      expect(cleared?.path).toBe('/ops')
      expect(cleared?.value).toBe('')
      expect((await me(app, '/ops/tasks/auth/me', bearer)).statusCode).toBe(401)
      expect((await me(app, '/ops/switchyard/api/auth/me', bearer)).statusCode).toBe(401)
      expect((await me(app, '/ops/switchyard/api/auth/me', cookieHeader)).statusCode).toBe(401)
    })

    it(`${order}: a login on the task admin's view serves the admin app, a logout there ends it on both`, async () => {
      const { app } = await mountBoth(order)
      const cookies = await viewLogin(app)
      const session = cookies.find((c) => c.name === 'switchyard_session')!
      expect(session.path).toBe('/ops')
      expect(cookies.some((c) => c.name === 'switchyard_tasks_session')).toBe(false)
      const cookieHeader = { cookie: `switchyard_session=${session.value}` }
      const bearer = { authorization: `Bearer ${session.value}` }
      const routeMe = await me(app, '/ops/switchyard/api/auth/me', cookieHeader)
      expect(routeMe.json()).toMatchObject({ username: 'ada', role: 'admin', authenticated: true })
      expect((await me(app, '/ops/switchyard/api/auth/me', bearer)).statusCode).toBe(200)
      expect((await me(app, '/ops/tasks/auth/me', bearer)).statusCode).toBe(200)
      const logout = await app.inject({
        method: 'POST',
        url: '/ops/switchyard/api/auth/logout',
        headers: bearer,
      })
      expect(logout.json()).toEqual({ revoked: true })
      expect((await me(app, '/ops/tasks/auth/me', bearer)).statusCode).toBe(401)
      expect((await me(app, '/ops/tasks/auth/me', cookieHeader)).statusCode).toBe(401)
      const dashboard = await app.inject({ url: '/ops/tasks/dashboard', headers: cookieHeader })
      expect(dashboard.statusCode).toBe(303)
    })
  }

  it("shares the login with the admin app of the main plugin's `admin` option", async () => {
    const engine = createEngine({
      store: 'memory',
      env: 'prod',
      logger: { warn: () => undefined, error: () => undefined },
    })
    const manager = new TaskManager({ logger: quietLogger })
    const app = Fastify()
    apps.push(app)
    const users = [...USERS]
    await app.register(taskAdmin, { taskManager: manager, path: '/tasks', auth: users })
    await app.register(switchyard, { engine, admin: { path: '/switchyard', auth: users } })
    await app.ready()
    const login = await app.inject({
      method: 'POST',
      url: '/switchyard/api/auth/login',
      payload: { username: 'ada', password: 'admin-pass' },
    })
    expect(login.cookies.find((c) => c.name === 'switchyard_session')?.path).toBe('/')
    const bearer = { authorization: `Bearer ${login.json<{ token: string }>().token}` }
    expect((await me(app, '/tasks/auth/me', bearer)).json()).toMatchObject({ username: 'ada' })
  })

  it('keeps the role of the shared session: a viewer of the admin app is a viewer of the tasks', async () => {
    const { app } = await mountBoth('admin first')
    const { token } = await apiLogin(app, 'vera', 'view-pass')
    const bearer = { authorization: `Bearer ${token}` }
    expect((await me(app, '/ops/tasks/auth/me', bearer)).json()).toMatchObject({ role: 'viewer' })
    const refused = await app.inject({
      method: 'DELETE',
      url: '/ops/tasks/history?value=0&unit=min',
      headers: bearer,
    })
    expect(refused.statusCode).toBe(403)
  })

  it('with different auth values (even equal ones) the logins stay separate', async () => {
    const { app } = await mountBoth('admin first', [...USERS], [...USERS])
    const { token, cookie } = await apiLogin(app)
    expect(cookie.path).toBe('/ops/switchyard')
    const bearer = { authorization: `Bearer ${token}` }
    expect((await me(app, '/ops/tasks/auth/me', bearer)).statusCode).toBe(401)
    const cookies = await viewLogin(app)
    const own = cookies.find((c) => c.name === 'switchyard_tasks_session')!
    expect(own.path).toBe('/ops/tasks')
    expect(cookies.some((c) => c.name === 'switchyard_session')).toBe(false)
    const taskBearer = { authorization: `Bearer ${own.value}` }
    expect((await me(app, '/ops/switchyard/api/auth/me', taskBearer)).statusCode).toBe(401)
    expect((await me(app, '/ops/tasks/auth/me', taskBearer)).statusCode).toBe(200)
    // Logging out of the admin app leaves the task admin's session alone.
    await app.inject({ method: 'POST', url: '/ops/switchyard/api/auth/logout', headers: bearer })
    expect((await me(app, '/ops/tasks/auth/me', taskBearer)).statusCode).toBe(200)
  })

  it('both login pages work with the shared login', async () => {
    const { app } = await mountBoth('tasks first')
    const routeLogin = await app.inject('/ops/switchyard/login')
    expect(routeLogin.statusCode).toBe(200)
    expect(routeLogin.body).toContain('action="/ops/switchyard/api/auth/login"')
    const taskLogin = await app.inject('/ops/tasks/auth/login')
    expect(taskLogin.statusCode).toBe(200)
    expect(taskLogin.body).toContain('action="/ops/tasks/auth/login"')
    // The route admin's logout page clears the shared cookie on the shared path.
    const { csrf, cookie } = await apiLogin(app)
    const logout = await app.inject({
      method: 'POST',
      url: '/ops/switchyard/logout',
      headers: { cookie: `switchyard_session=${cookie.value}`, 'x-csrf-token': csrf },
    })
    expect(logout.statusCode).toBeLessThan(400)
    expect(logout.cookies.find((c) => c.name === 'switchyard_session')?.path).toBe('/ops')
    const after = await me(app, '/ops/tasks/auth/me', {
      cookie: `switchyard_session=${cookie.value}`,
    })
    expect(after.statusCode).toBe(401)
  })

  it("a logout on the admin app ends the task admin's open stream of the session at once", async () => {
    const { app } = await mountBoth('admin first')
    const base = await listen(app)
    const { token } = await apiLogin(app)
    const stream = await openStream(`${base}/ops/tasks/dashboard/stream`, {
      authorization: `Bearer ${token}`,
    })
    expect(stream.response.statusCode).toBe(200)
    const ended = new Promise<void>((resolve) => stream.response.once('end', resolve))
    stream.response.resume()
    await app.inject({
      method: 'POST',
      url: '/ops/switchyard/api/auth/logout',
      headers: { authorization: `Bearer ${token}` },
    })
    await ended
  })
})
