/**
 * One console for both admins, without a browser: the registry orders the shared navigation
 * and filters it by role; the pages of both halves wear one header once both are mounted on one
 * app (in either order), and their own navigation when alone; a fragment without a session gets
 * a 401 rather than a redirect; `request.backgroundTasks` tags tasks with their route, which the
 * task detail and the blocked-request log link to the Routes page.
 */
import { afterEach, describe, expect, it } from 'vitest'
import Fastify, { type FastifyInstance } from 'fastify'
import { createEngine, type Engine } from '../../src/index.js'
import { adminApp } from '../../src/admin/index.js'
import { rateLimit, switchyard } from '../../src/fastify/index.js'
import { TaskManager } from '../../src/tasks/index.js'
import { taskAdmin, tasksPlugin } from '../../src/tasks/fastify/index.js'
import { joinConsole } from '../../src/common/console-registry.js'
import { quietLogger } from '../tasks/helpers.js'
import { openStream } from '../admin/sse-client.js'

const AUTH = { users: [{ username: 'ada', password: 'admin-pass', role: 'admin' as const }] }
const VIEWER_AUTH = {
  users: [
    { username: 'ada', password: 'admin-pass', role: 'admin' as const },
    { username: 'vera', password: 'view-pass', role: 'viewer' as const },
  ],
}

const cleanups: (() => Promise<void>)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup()
})

function newEngine(): Engine {
  const engine = createEngine({
    store: 'memory',
    env: 'prod',
    logger: { warn: () => undefined, error: () => undefined },
  })
  cleanups.push(() => engine.close())
  return engine
}

/** An app with the halves asked for, in that order. */
async function mount(halves: ('routes' | 'tasks')[], auth: object | null = AUTH) {
  const engine = newEngine()
  const manager = new TaskManager({ logger: quietLogger })
  const app = Fastify()
  cleanups.push(() => app.close())
  for (const half of halves) {
    const given = auth === null ? {} : { auth: auth as never }
    if (half === 'routes') await app.register(adminApp, { engine, path: '/ops', ...given })
    else await app.register(taskAdmin, { taskManager: manager, path: '/jobs', ...given })
  }
  await app.ready()
  return { app, engine, manager }
}

async function cookieOf(app: FastifyInstance, username = 'ada', password = 'admin-pass') {
  const login = await app.inject({
    method: 'POST',
    url: '/ops/api/auth/login',
    payload: { username, password },
  })
  expect(login.statusCode).toBe(200)
  const cookie = login.cookies.find((c) => c.name === 'switchyard_session')!
  return { cookie: `switchyard_session=${cookie.value}` }
}

/** The labels of the main navigation of a page. */
function navLabels(html: string): string[] {
  const nav = /<nav class="nav" aria-label="Dashboard">([\s\S]*?)<\/nav>/.exec(html)?.[1] ?? ''
  return [...nav.matchAll(/<a [^>]*>([^<]*)<\/a>/g)].map((match) => match[1] ?? '')
}

describe('the console registry', () => {
  it('orders the entries of both halves, filters them by role and marks the current one', () => {
    const app = Fastify()
    const tasks = joinConsole(app, {
      half: 'tasks',
      product: 'tasks',
      home: '/t/dashboard',
      entries: [
        { id: 'workers', label: 'Workers', href: '/t/w' },
        { id: 'tasks', label: 'Tasks', href: '/t/dashboard' },
        { id: 'later', label: 'Later', href: '/t/later' },
      ],
    })!
    expect(tasks.header('admin', 'tasks')).toBeNull() // alone: its own navigation
    expect(tasks.routeHref('GET:/x')).toBeNull()
    const routes = joinConsole(app, {
      half: 'routes',
      product: 'switchyard',
      home: '/r/',
      entries: [
        { id: 'routes', label: 'Routes', href: '/r/' },
        { id: 'audit', label: 'Audit', href: '/r/audit' },
        { id: 'keys', label: 'Keys', href: '/r/keys', role: 'admin' },
      ],
      routeHref: (route) => `/r/?q=${encodeURIComponent(route)}`,
    })!
    // a second mount of a half keeps its own navigation
    expect(joinConsole(app, { half: 'routes', product: 'x', home: '/', entries: [] })).toBeNull()
    const header = tasks.header('admin', 'workers')!
    expect(header.product).toBe('switchyard')
    expect(header.home).toBe('/r/')
    expect(header.nav.map((item) => item.label)).toEqual([
      'Routes',
      'Tasks',
      'Workers',
      'Audit',
      'Keys',
      'Later',
    ])
    expect(header.nav.filter((item) => item.active).map((item) => item.label)).toEqual(['Workers'])
    expect(routes.header('viewer', null)!.nav.map((item) => item.label)).not.toContain('Keys')
    expect(tasks.routeHref('GET:/x')).toBe('/r/?q=GET%3A%2Fx')
  })
})

describe('one console on one app', () => {
  for (const order of [
    ['routes', 'tasks'],
    ['tasks', 'routes'],
  ] as const) {
    it(`${order.join(' then ')}: both halves render the shared navigation`, async () => {
      const { app } = await mount([...order])
      const headers = await cookieOf(app)
      const routesPage = await app.inject({ url: '/ops/flags', headers })
      expect(routesPage.statusCode).toBe(200)
      const expected = [
        'Routes',
        'Flags',
        'Segments',
        'Rate limits',
        'Blocked',
        'Tasks',
        'Schedules',
        'Queues',
        'Workers',
        'Audit',
        'Keys',
      ]
      expect(navLabels(routesPage.body)).toEqual(expected)
      expect(routesPage.body).toContain('href="/jobs/dashboard/queues"')
      const taskPage = await app.inject({ url: '/jobs/dashboard/dead-letters', headers })
      expect(taskPage.statusCode).toBe(200)
      expect(navLabels(taskPage.body)).toEqual(expected)
      // the Tasks section's own tabs in a second row, the current one marked
      expect(taskPage.body).toMatch(/<nav class="nav nav-sub" aria-label="Task views">/)
      expect(taskPage.body).toMatch(/href="\/jobs\/dashboard\/dead-letters" aria-current="page"/)
      expect(taskPage.body).toMatch(/href="\/jobs\/dashboard" aria-current="page">Tasks</)
    })
  }

  it('leaves Keys out for a viewer', async () => {
    const { app } = await mount(['routes', 'tasks'], VIEWER_AUTH)
    const headers = await cookieOf(app, 'vera', 'view-pass')
    const page = await app.inject({ url: '/jobs/dashboard/queues', headers })
    expect(navLabels(page.body)).not.toContain('Keys')
    expect(navLabels(page.body)).toContain('Queues')
  })

  it('alone, each half keeps its own navigation and tab names', async () => {
    const open = await mount(['tasks'], null)
    const page = await open.app.inject({ url: '/jobs/dashboard' })
    expect(page.statusCode).toBe(200)
    expect(navLabels(page.body)).toEqual([
      'Runs',
      'Functions',
      'Schedules',
      'Queues',
      'Workers',
      'Dead Letters',
    ])
    expect(page.body).not.toContain('nav-sub')
    const routesOnly = await mount(['routes'])
    const routesPage = await routesOnly.app.inject({
      url: '/ops/',
      headers: await cookieOf(routesOnly.app),
    })
    expect(navLabels(routesPage.body)).toEqual([
      'Routes',
      'Flags',
      'Segments',
      'Rate limits',
      'Blocked',
      'Audit',
      'Keys',
    ])
  })

  it('pages carry where to log in again and how to check the session; fragments get a 401', async () => {
    const { app } = await mount(['routes', 'tasks'])
    const headers = await cookieOf(app)
    const page = await app.inject({ url: '/jobs/dashboard/queues', headers })
    expect(page.body).toContain('data-login-url="/jobs/auth/login"')
    expect(page.body).toContain('data-session-url="/jobs/auth/me"')
    expect(page.body).toContain(
      `href="/jobs/auth/login?next=${encodeURIComponent('/jobs/dashboard/queues')}"`,
    )
    const routesPage = await app.inject({ url: '/ops/audit', headers })
    expect(routesPage.body).toContain('data-login-url="/ops/login"')
    expect(routesPage.body).toContain('data-session-url="/ops/api/auth/me"')
    for (const url of ['/ops/routes/table', '/jobs/dashboard/runs']) {
      const fragment = await app.inject({ url, headers: { 'hx-request': 'true' } })
      expect(fragment.statusCode, url).toBe(401)
      expect(fragment.headers['hx-redirect'], url).toBeUndefined()
    }
  })
})

describe('links between the halves', () => {
  it('tags a task with the route that enqueued it and links the task to that route', async () => {
    const engine = newEngine()
    const manager = new TaskManager({ logger: quietLogger })
    const welcome = manager.task({ name: 'send_welcome' }, (email: string) => `sent ${email}`)
    const app = Fastify()
    cleanups.push(() => app.close())
    await app.register(switchyard, { engine, admin: { path: '/ops', auth: AUTH } })
    await app.register(tasksPlugin, { taskManager: manager })
    await app.register(taskAdmin, { taskManager: manager, path: '/jobs', auth: AUTH })
    app.post('/v1/signup', (request) => {
      request.backgroundTasks.add(welcome, 'ada@example.com')
      // a `route` tag the handler sets wins
      request.backgroundTasks.addWith(welcome, ['b@example.com'], { tags: { route: 'mine' } })
      return { ok: true }
    })
    app.get('/v1/limited', { onRequest: rateLimit({ limit: '1/minute', key: 'ip' }) }, () => 'ok')
    await app.ready()
    expect((await app.inject({ method: 'POST', url: '/v1/signup' })).statusCode).toBe(200)
    await expect
      .poll(async () =>
        (await manager.listTasks({ funcName: 'send_welcome' })).items
          .map((task) => task.tags.route)
          .sort(),
      )
      .toEqual(['POST:/v1/signup', 'mine'])
    const tagged = (await manager.listTasks({ funcName: 'send_welcome' })).items.find(
      (task) => task.tags.route === 'POST:/v1/signup',
    )!
    const headers = await cookieOf(app)
    const detail = await app.inject({ url: `/jobs/dashboard/task/${tagged.task_id}`, headers })
    expect(detail.body).toContain(
      `<a href="/ops/?q=${encodeURIComponent('POST:/v1/signup')}" title="This route on the Routes page">POST:/v1/signup</a>`,
    )

    // a blocked request names its route and links to it
    expect((await app.inject('/v1/limited')).statusCode).toBe(200)
    expect((await app.inject('/v1/limited')).statusCode).toBe(429)
    await expect
      .poll(async () => (await app.inject({ url: '/ops/blocked', headers })).body)
      .toContain(`href="/ops/?q=${encodeURIComponent('GET:/v1/limited')}"`)
  })

  it('without the route half, the task detail names the route without a link', async () => {
    const manager = new TaskManager({ logger: quietLogger })
    const welcome = manager.task({ name: 'send_welcome' }, (email: string) => `sent ${email}`)
    const app = Fastify()
    cleanups.push(() => app.close())
    await app.register(tasksPlugin, { taskManager: manager })
    await app.register(taskAdmin, { taskManager: manager, path: '/jobs' })
    app.post('/v1/signup', (request) => {
      request.backgroundTasks.add(welcome, 'ada@example.com')
      return { ok: true }
    })
    await app.ready()
    await app.inject({ method: 'POST', url: '/v1/signup' })
    let id = ''
    await expect
      .poll(async () => {
        id = (await manager.listTasks({ funcName: 'send_welcome' })).items[0]?.task_id ?? ''
        return id
      })
      .not.toBe('')
    const detail = await app.inject({ url: `/jobs/dashboard/task/${id}` })
    expect(detail.body).toContain('<dt>Route</dt>')
    expect(detail.body).toContain('<span>POST:/v1/signup</span>')
    expect(detail.body).not.toContain('This route on the Routes page')
  })
})

describe('the task audit on the admin event stream', () => {
  for (const order of [
    ['routes', 'tasks'],
    ['tasks', 'routes'],
  ] as const) {
    it(`${order.join(' then ')}: each task-audit entry is a task_audit event, a refused action none`, async () => {
      const { app } = await mount([...order])
      const address = await app.listen({ host: '127.0.0.1', port: 0 })
      const token = (await cookieOf(app)).cookie.replace('switchyard_session=', '')
      const auth = { authorization: `Bearer ${token}` }
      const stream = openStream(`${address}/ops/api/events`, auth)
      cleanups.push(() => {
        stream.close()
        return Promise.resolve()
      })
      expect((await stream.ready).statusCode).toBe(200)
      const post = (url: string) => app.inject({ method: 'POST', url, headers: auth })
      expect((await post('/jobs/queues/default/pause')).statusCode).toBe(200)
      // An unknown queue is refused: no entry, so no event.
      expect((await post('/jobs/queues/nowhere/pause')).statusCode).toBe(404)
      expect((await post('/jobs/queues/default/resume')).statusCode).toBe(200)
      const notices = () =>
        stream.frames
          .filter((frame) => frame.event === 'task_audit')
          .map((frame) => JSON.parse(frame.data ?? 'null') as Record<string, unknown>)
      await stream.whenFrames(() => notices().length >= 2)
      expect(notices()).toEqual([
        {
          id: expect.any(Number),
          timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
          action: 'queue_pause',
          actor: 'ada',
          task_id: null,
        },
        expect.objectContaining({ action: 'queue_resume', actor: 'ada' }),
      ])
      // The task admin's own audit holds the same entries, as its API serializes them.
      const listed = await app.inject({ url: '/jobs/audit', headers: auth })
      const items = listed.json<{ items: Record<string, unknown>[] }>().items
      expect(items.map(({ detail: _detail, ...entry }) => entry)).toEqual(notices().reverse())
    })
  }
})
