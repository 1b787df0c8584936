/**
 * Roles on the task admin: every route of the mount's route table for a viewer, an operator and
 * an admin (reads for all, writes for operators, history deletion for admins only; a refused
 * write changes nothing), the dashboard without action buttons for a viewer, `GET /auth/me`,
 * tokens issued before roles existed, and open mode.
 */
import { createHmac } from 'node:crypto'
import { afterEach, describe, expect, it } from 'vitest'
import Fastify, { type FastifyInstance } from 'fastify'
import { TaskManager } from '../../../src/tasks/index.js'
import { taskAdmin } from '../../../src/tasks/fastify/index.js'
import { SessionTokens } from '../../../src/tasks/admin/auth/tokens.js'
import { quietLogger, waitForStatus } from '../helpers.js'
import { login } from './helpers.js'

const USERS = [
  { username: 'vera', password: 'view-pass', role: 'viewer' },
  { username: 'otto', password: 'oper-pass', role: 'operator' },
  { username: 'ada', password: 'admin-pass' },
] as const

const SECRET = 'a-fixed-secret-key-for-tests'

let app: FastifyInstance | null = null
afterEach(async () => {
  await app?.close()
  app = null
})

interface Route {
  method: string
  url: string
  isPublic: boolean
}

/** Mounts the task admin with three users; collects its route table as registered. */
async function mount(auth: unknown = USERS) {
  const manager = new TaskManager({ logger: quietLogger })
  const job = manager.task({ name: 'job' }, (fail: boolean) => {
    if (fail) throw new Error('boom')
  })
  // Routes with a `:name` are called with `default`: a queue, and a schedule of that name.
  manager.schedule({ every: 3600 }, () => undefined, { name: 'default' })
  const routes: Route[] = []
  const instance = Fastify()
  instance.addHook('onRoute', (route) => {
    if (!route.url.startsWith('/tasks')) return
    for (const method of [route.method].flat()) {
      if (method === 'HEAD') continue
      routes.push({
        method,
        url: route.url,
        isPublic: route.config?.taskAdminPublic === true,
      })
    }
  })
  await instance.register(taskAdmin, {
    taskManager: manager,
    auth: auth as never,
    secretKey: SECRET,
  })
  await instance.ready()
  app = instance
  const failedId = await manager.addTask(job, [true])
  await waitForStatus(manager, failedId)
  return { app: instance, manager, routes, failedId }
}

const bearer = async (instance: FastifyInstance, username: string, password: string) => {
  const { cookie } = await login(instance, username, password)
  return { authorization: `Bearer ${cookie.slice(cookie.indexOf('=') + 1)}` }
}

/** A request for a route of the table: parameters filled in, a valid body or query. */
function requestFor(
  route: Route,
  failedId: string,
): {
  method: 'GET'
  url: string
  payload?: string | Record<string, unknown>
  headers?: Record<string, string>
} {
  const url = route.url
    .replace(':task_id', failedId)
    .replace(':name', 'default')
    .replace(':file', 'app.js')
  const bodies: Record<string, unknown> = {
    'POST /tasks/bulk-retry': { task_ids: [failedId] },
    'POST /tasks/bulk-cancel': { task_ids: [failedId] },
    'POST /tasks/bulk-delete': { task_ids: [failedId] },
    'PATCH /tasks/queues/:name': { concurrency: 3 },
    'POST /tasks/dashboard/bulk-retry': { task_ids: failedId },
    'POST /tasks/dashboard/dead-letters/replay': { window: '24h' },
    'POST /tasks/dashboard/queues/:name': { concurrency: '3', max_size: 'unlimited' },
  }
  const queries: Record<string, string> = {
    'DELETE /tasks/history': '?value=0&unit=min',
    'GET /tasks/dashboard/runs/row': `?key=${failedId}`,
  }
  const key = `${route.method} ${route.url}`
  const body = bodies[key]
  return {
    method: route.method as 'GET',
    url: `${url}${queries[key] ?? ''}`,
    ...(body === undefined
      ? {}
      : route.url.startsWith('/tasks/dashboard')
        ? {
            payload: new URLSearchParams(body as Record<string, string>).toString(),
            headers: { 'content-type': 'application/x-www-form-urlencoded' },
          }
        : { payload: body as Record<string, unknown> }),
  }
}

const SAFE = new Set(['GET', 'HEAD', 'OPTIONS'])

/** History deletion (by age, or by ids and filter): the admin's alone. */
const deletes = (route: Route) =>
  route.method === 'DELETE' ||
  route.url === '/tasks/bulk-delete' ||
  route.url === '/tasks/dashboard/bulk/delete'

/** Reads that only serve an action (its confirmation dialog): an operator's. */
const ACTION_READS = new Set(['/tasks/dashboard/dead-letters/replay', '/tasks/dashboard/bulk'])

/** An htmx write other than the header's Log out form. */
const ACTION_POST = /hx-post="(?!\/tasks\/auth\/logout")/

/** A token signed with the test key carrying `payload` as is (formats of other versions). */
function signedToken(payload: Record<string, unknown>): string {
  const body = Buffer.from(JSON.stringify(payload)).toString('base64url')
  const mac = createHmac('sha256', Buffer.from(SECRET)).update(`v1.${body}`).digest('base64url')
  return `v1.${body}.${mac}`
}

describe('task admin roles', () => {
  it('reads are open to every role; writes need operator; history deletion needs admin', async () => {
    const mounted = await mount()
    // The deletion last: the admin's would remove the records the other routes show.
    const guarded = mounted.routes
      // The stream never ends; the catch-all answers every unknown page with its 404.
      .filter(
        (route) =>
          !route.isPublic &&
          route.url !== '/tasks/dashboard/stream' &&
          route.url !== '/tasks/dashboard/*',
      )
      .sort((a, b) => Number(deletes(a)) - Number(deletes(b)))
    // The table is the mount's own: reads, writes and the deletion are all in it.
    expect(guarded.some((route) => route.method === 'DELETE')).toBe(true)
    expect(guarded.filter((route) => !SAFE.has(route.method)).length).toBeGreaterThanOrEqual(10)
    const tokens = {
      viewer: await bearer(mounted.app, 'vera', 'view-pass'),
      operator: await bearer(mounted.app, 'otto', 'oper-pass'),
      admin: await bearer(mounted.app, 'ada', 'admin-pass'),
    }
    const before = {
      tasks: (await mounted.manager.listStoredTasks({})).total,
      queue: mounted.manager.queueStats().find((queue) => queue.name === 'default'),
      audit: (await mounted.app.inject({ url: '/tasks/audit', headers: tokens.admin })).json<{
        total: number
      }>().total,
    }
    const needs = (route: Route) =>
      deletes(route)
        ? 'admin'
        : SAFE.has(route.method) && !ACTION_READS.has(route.url)
          ? 'viewer'
          : 'operator'
    // The viewer first (nothing may change), then the operator, then the admin.
    for (const role of ['viewer', 'operator', 'admin'] as const) {
      for (const route of guarded) {
        const request = requestFor(route, mounted.failedId)
        const response = await mounted.app.inject({
          ...request,
          headers: { ...request.headers, ...tokens[role] },
        })
        const needed = needs(route)
        const allowed =
          role === 'admin' || needed === 'viewer' || (role === 'operator' && needed === 'operator')
        const label = `${role} ${route.method} ${route.url}`
        if (allowed) {
          // Past the guard: the handler answered (cancelling a failed task is its own 400).
          expect([401, 403, 404, 500], `${label}: ${response.body}`).not.toContain(
            response.statusCode,
          )
        } else {
          expect(response.statusCode, label).toBe(403)
          if (route.url.startsWith('/tasks/dashboard')) {
            // The dashboard answers its pages' errors in HTML; the message names the role.
            expect(response.body, label).toContain(`needs the ${needed} role`)
          } else {
            expect(response.json(), label).toMatchObject({
              error: { code: 'FORBIDDEN', required_role: needed },
            })
          }
        }
      }
      if (role === 'viewer') {
        // Every write refused: no task retried, no queue changed, nothing audited.
        expect((await mounted.manager.listStoredTasks({})).total).toBe(before.tasks)
        expect(mounted.manager.queueStats().find((queue) => queue.name === 'default')).toEqual(
          before.queue,
        )
        const audit = await mounted.app.inject({ url: '/tasks/audit', headers: tokens.admin })
        expect(audit.json<{ total: number }>().total).toBe(before.audit)
      }
      if (role === 'admin') {
        expect((await mounted.manager.listStoredTasks({})).total).toBe(0)
      }
      if (role === 'operator') {
        // The operator retried and changed the queue, but deleted nothing.
        expect((await mounted.manager.listStoredTasks({})).total).toBeGreaterThan(before.tasks)
        expect(mounted.manager.queueStats().find((q) => q.name === 'default')?.concurrency).toBe(3)
        const audit = await mounted.app.inject({ url: '/tasks/audit', headers: tokens.admin })
        const actions = audit.json<{ items: { action: string }[] }>().items.map((e) => e.action)
        expect(actions).not.toContain('history_delete')
      }
    }
  })

  it('a refused cookie write is 403 after the CSRF check, and changes nothing', async () => {
    const mounted = await mount()
    const viewer = await login(mounted.app, 'vera', 'view-pass')
    const response = await mounted.app.inject({
      method: 'DELETE',
      url: '/tasks/history?value=0&unit=min',
      headers: { cookie: viewer.cookie, 'x-csrf-token': viewer.csrf },
    })
    expect(response.statusCode).toBe(403)
    expect(response.json()).toMatchObject({ error: { code: 'FORBIDDEN', required_role: 'admin' } })
    expect((await mounted.manager.listStoredTasks({})).total).toBe(1)
  })

  it('shows a viewer no action buttons, an operator the actions, and both their role', async () => {
    const mounted = await mount()
    const pages = (id: string) => [
      '/tasks/dashboard',
      '/tasks/dashboard/runs',
      `/tasks/dashboard/task/${id}`,
      `/tasks/dashboard/task/${id}/panel`,
      '/tasks/dashboard/queues',
      '/tasks/dashboard/dead-letters',
    ]
    const viewer = await login(mounted.app, 'vera', 'view-pass')
    const operator = await login(mounted.app, 'otto', 'oper-pass')
    for (const url of pages(mounted.failedId)) {
      const seen = await mounted.app.inject({ url, headers: { cookie: viewer.cookie } })
      expect(seen.statusCode, url).toBe(200)
      // The header's Log out form is the only one a viewer gets.
      expect(seen.body, url).not.toMatch(ACTION_POST)
      expect(seen.body, url).not.toMatch(/type="checkbox"/)
      expect(seen.body, url).not.toMatch(/Replay window|Retry selected|>\s*Retry\s*<|>\s*Save\s*</)
      const acted = await mounted.app.inject({ url, headers: { cookie: operator.cookie } })
      expect(acted.statusCode, url).toBe(200)
      expect(acted.body, url).toMatch(/hx-post=|hx-get="[^"]*replay/)
    }
    const page = await mounted.app.inject({
      url: '/tasks/dashboard',
      headers: { cookie: viewer.cookie },
    })
    expect(page.body).toMatch(/class="user"[^>]*>vera</)
    expect(page.body).toMatch(/class="badge[^"]*user-role"[^>]*>viewer</)
    // The viewer's header keeps its Log out form (the one hx-post a viewer sees).
    expect(
      (
        await mounted.app.inject({
          url: '/tasks/dashboard/queues',
          headers: { cookie: viewer.cookie },
        })
      ).body,
    ).toContain('<td class="num">unlimited</td>')
    // The replay dialog leads only to a replay: a viewer cannot open it.
    const dialog = await mounted.app.inject({
      url: '/tasks/dashboard/dead-letters/replay',
      headers: { cookie: viewer.cookie },
    })
    expect(dialog.statusCode).toBe(403)
  })

  it('GET /auth/me answers the user and role; a token from before roles is an admin', async () => {
    const mounted = await mount()
    for (const [username, password, role] of [
      ['vera', 'view-pass', 'viewer'],
      ['otto', 'oper-pass', 'operator'],
      ['ada', 'admin-pass', 'admin'],
    ] as const) {
      const me = await mounted.app.inject({
        url: '/tasks/auth/me',
        headers: await bearer(mounted.app, username, password),
      })
      expect(me.json()).toMatchObject({ username, role, authenticated: true })
    }
    // A token in the format issued before roles: no `r` in the payload.
    const tokens = new SessionTokens(SECRET)
    const legacy = signedToken({ u: 'old', e: Date.now() + 60_000, i: 'legacy-id' })
    expect(tokens.verify(legacy, Date.now())?.role).toBe('admin')
    const me = await mounted.app.inject({
      url: '/tasks/auth/me',
      headers: { authorization: `Bearer ${legacy}` },
    })
    expect(me.json()).toMatchObject({ username: 'old', role: 'admin' })
    // An unknown role in a signed payload is no session at all.
    const odd = signedToken({ u: 'odd', r: 'root', e: Date.now() + 60_000, i: 'odd-id' })
    expect(tokens.verify(odd, Date.now())).toBeNull()
    const refused = await mounted.app.inject({
      url: '/tasks/auth/me',
      headers: { authorization: `Bearer ${odd}` },
    })
    expect(refused.statusCode).toBe(401)
  })

  it('open mode: anonymous is an admin and may delete history', async () => {
    const mounted = await mount(null)
    expect((await mounted.app.inject('/tasks/auth/me')).json()).toEqual({
      username: 'anonymous',
      role: 'admin',
      authenticated: false,
      expires_at: null,
    })
    const deleted = await mounted.app.inject({
      method: 'DELETE',
      url: '/tasks/history?value=0&unit=min',
    })
    expect(deleted.statusCode).toBe(200)
  })

  it('an authenticateUser backend answering { role } signs in with that role', async () => {
    const mounted = await mount({
      authenticateUser: (username: string, password: string) =>
        username === 'ldap' && password === 'ok' ? { role: 'viewer' } : false,
    })
    const me = await mounted.app.inject({
      url: '/tasks/auth/me',
      headers: await bearer(mounted.app, 'ldap', 'ok'),
    })
    expect(me.json()).toMatchObject({ username: 'ldap', role: 'viewer' })
  })
})
