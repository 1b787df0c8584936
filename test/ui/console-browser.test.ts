/**
 * One console for both admins, in a real browser (Debian's Chromium via playwright-core): the
 * route-control admin at /switchyard and the task admin at /tasks on one app with the same
 * `auth` value. One login serves both halves, both wear one header and navigation, an ended
 * session stops the live stream and says "Session expired — log in" with a login that returns
 * to the page (never to a fragment), and audit entries and tasks link to their routes. axe-core
 * finds no serious or critical violation at desktop and phone width. Every wait is for a
 * condition.
 */
import Fastify, { type FastifyInstance } from 'fastify'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { createEngine, type Engine } from '../../src/index.js'
import { switchyard } from '../../src/fastify/index.js'
import { TaskManager } from '../../src/tasks/index.js'
import { taskAdmin, tasksPlugin } from '../../src/tasks/fastify/index.js'
import {
  launchBrowser,
  logIn,
  openContext,
  requireChromium,
  seriousViolations,
  waitLive,
  watchErrors,
} from '../browser/browser.js'
import { quietLogger } from '../tasks/helpers.js'
import { adminDataOf } from '../../src/tasks/admin/local-data.js'

const enabled = requireChromium()

const USER = { username: 'ada', password: 'console-pass' }
/** One value for both mounts: one login. */
const AUTH = { users: [{ ...USER, role: 'admin' as const }] }

/** The shared navigation, in order, for an admin. */
const CONSOLE_NAV = [
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

describe.skipIf(!enabled)('one console in Chromium', { timeout: 90_000 }, () => {
  let app: FastifyInstance
  let engine: Engine
  let manager: TaskManager
  let origin: string
  let browser: Browser
  let context: BrowserContext
  let page: Page
  let errors: string[]
  let processorDown = false

  beforeAll(async () => {
    engine = createEngine({
      store: 'memory',
      service: 'shop',
      env: 'prod',
      logger: { warn: () => undefined, error: () => undefined },
    })
    manager = new TaskManager({ logger: quietLogger })
    const welcome = manager.task({ name: 'send_welcome' }, (email: string) => `sent ${email}`)
    // Fails while the card processor is down (the journey test), succeeds once it is back.
    const charge = manager.task({ name: 'charge_card' }, (order: string) => {
      if (processorDown) throw new Error(`card processor unreachable for ${order}`)
      return `charged ${order}`
    })
    app = Fastify({ logger: false })
    await app.register(switchyard, { engine, admin: { path: '/switchyard', auth: AUTH } })
    await app.register(tasksPlugin, { taskManager: manager })
    await app.register(taskAdmin, { taskManager: manager, path: '/tasks', auth: AUTH })
    app.get('/v1/users', () => ({ users: [] }))
    app.post('/v1/charge', (request) => {
      request.backgroundTasks.add(charge, 'order-1')
      return { ok: true }
    })
    app.post('/v1/signup', (request) => {
      request.backgroundTasks.add(welcome, 'ada@example.com')
      return { ok: true }
    })
    await app.listen({ host: '127.0.0.1', port: 0 })
    const address = app.server.address()
    origin = `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}`
    browser = await launchBrowser()
  })

  afterAll(async () => {
    await browser.close()
    await app.close()
    await engine.close()
  })

  beforeEach(async () => {
    context = await openContext(browser, { viewport: 'desktop' })
    page = await context.newPage()
    await page.setViewportSize({ width: 1280, height: 800 })
    errors = watchErrors(page)
    await logIn(page, `${origin}/switchyard/login`, USER)
  })

  afterEach(async () => {
    await context.close()
  })

  const navLabels = (label: string) =>
    page.getByRole('navigation', { name: label }).getByRole('link').allTextContents()
  const current = (label: string) =>
    page.getByRole('navigation', { name: label }).locator('[aria-current="page"]').textContent()
  /** The page's session, as the browser holds it (HttpOnly: read from the context). */
  const sessionToken = async () => {
    const cookie = (await context.cookies()).find((each) => each.name === 'switchyard_session')
    expect(cookie?.path).toBe('/')
    return cookie?.value ?? ''
  }
  /** Ends the browser's session on the server, as its expiry or a logout elsewhere does. */
  const endSession = async () => {
    const response = await app.inject({
      method: 'POST',
      url: '/switchyard/api/auth/logout',
      headers: { authorization: `Bearer ${await sessionToken()}` },
    })
    expect(response.statusCode).toBeLessThan(300)
  }

  it('one login serves both halves, which share one header, navigation and live indicator', async () => {
    // logged in on the route half: the task half opens without another login
    await page.goto(`${origin}/tasks/dashboard`)
    expect(new URL(page.url()).pathname).toBe('/tasks/dashboard')
    await waitLive(page)
    expect(await navLabels('Dashboard')).toEqual(CONSOLE_NAV)
    expect(await current('Dashboard')).toBe('Tasks')
    expect(await navLabels('Task views')).toEqual(['Runs', 'Functions', 'Dead Letters', 'Audit'])
    expect(await current('Task views')).toBe('Runs')
    expect(await page.locator('#ui-live').count()).toBe(1)
    expect(await page.locator('.brand').textContent()).toContain('switchyard')

    await page
      .getByRole('navigation', { name: 'Task views' })
      .getByRole('link', { name: 'Functions' })
      .click()
    await page.getByRole('heading', { name: 'Registered functions' }).waitFor()
    expect(await current('Dashboard')).toBe('Tasks')

    await page
      .getByRole('navigation', { name: 'Dashboard' })
      .getByRole('link', { name: 'Queues' })
      .click()
    await page.waitForURL(`${origin}/tasks/dashboard/queues`)
    expect(await current('Dashboard')).toBe('Queues')
    expect(await page.getByRole('navigation', { name: 'Task views' }).count()).toBe(0)

    await page
      .getByRole('navigation', { name: 'Dashboard' })
      .getByRole('link', { name: 'Flags' })
      .click()
    await page.waitForURL(`${origin}/switchyard/flags`)
    await waitLive(page)
    expect(await navLabels('Dashboard')).toEqual(CONSOLE_NAV)
    expect(await current('Dashboard')).toBe('Flags')
    expect(await page.locator('#ui-live').count()).toBe(1)
    expect(errors).toEqual([])
  })

  it('has no serious or critical accessibility violation on either half, at 1280×800 and 390×844', async () => {
    for (const size of [
      { width: 1280, height: 800 },
      { width: 390, height: 844 },
    ]) {
      await page.setViewportSize(size)
      for (const path of [
        '/switchyard/',
        '/switchyard/audit',
        '/tasks/dashboard',
        '/tasks/dashboard/schedules',
      ]) {
        await page.goto(`${origin}${path}`)
        await waitLive(page)
        expect(await seriousViolations(page), `${path} at ${size.width}`).toEqual([])
      }
    }
  })

  it('the maintenance dialog sets its Exemptions section apart from the submit button', async () => {
    for (const size of [
      { width: 1280, height: 800 },
      { width: 390, height: 844 },
    ]) {
      await page.setViewportSize(size)
      await page.goto(`${origin}/switchyard/`)
      await waitLive(page)
      await page.getByRole('button', { name: 'Global maintenance…' }).click()
      const dialog = page.getByRole('dialog', { name: 'Global maintenance' })
      const heading = dialog.getByRole('heading', { name: 'Exemptions' })
      await heading.waitFor()
      const submit = await dialog
        .getByRole('button', { name: 'Put every service in maintenance' })
        .boundingBox()
      const below = await heading.boundingBox()
      if (submit === null || below === null) throw new Error('the dialog is not laid out')
      // Room between the form's buttons and the next section (without it: none at all).
      expect(below.y - (submit.y + submit.height), `at ${size.width}`).toBeGreaterThanOrEqual(12)
      await dialog.getByRole('button', { name: 'Close' }).click()
      await dialog.waitFor({ state: 'hidden' })
    }
    expect(errors).toEqual([])
  })

  it('an ended session stops the stream and offers a login that returns to the page', async () => {
    await page.goto(`${origin}/switchyard/?q=v1`)
    await waitLive(page)
    const notice = page.getByRole('alert').filter({ hasText: 'Session expired' })
    expect(await notice.isVisible()).toBe(false)
    await endSession()
    await notice.waitFor({ state: 'visible' })
    expect(await notice.textContent()).toMatch(/Session expired — log in/)
    await page.locator('#ui-live[data-conn="expired"]').waitFor({ state: 'attached' })
    expect(await page.locator('#ui-live').textContent()).toContain('Session expired')
    // the stream is not reopened
    expect(await page.locator('#ui-stream').getAttribute('sse-connect')).toBeNull()
    const link = notice.getByRole('link', { name: 'log in' })
    expect(await link.getAttribute('href')).toBe(
      `/switchyard/login?next=${encodeURIComponent('/switchyard/?q=v1')}`,
    )
    await link.click()
    await page.getByLabel('Username').fill(USER.username)
    await page.getByLabel('Password').fill(USER.password)
    await page.getByRole('button', { name: 'Log in' }).click()
    await page.waitForURL(`${origin}/switchyard/?q=v1`)
    // a whole page again, styled and live
    await waitLive(page)
    expect(await current('Dashboard')).toBe('Routes')
    expect(await page.locator('link[rel="stylesheet"]').count()).toBe(1)
  })

  it('a fragment refused for an ended session never becomes the login’s destination', async () => {
    await page.goto(`${origin}/switchyard/?q=users`)
    await waitLive(page)
    // Only the fragment's 401 may tell: the page's own session check is kept from answering.
    await page.route('**/api/auth/me', (route) => route.abort())
    await endSession()
    await page.getByRole('button', { name: 'Manage… GET:/v1/users' }).click()
    const notice = page.getByRole('alert').filter({ hasText: 'Session expired' })
    await notice.waitFor({ state: 'visible' })
    expect(await notice.getByRole('link', { name: 'log in' }).getAttribute('href')).toBe(
      `/switchyard/login?next=${encodeURIComponent('/switchyard/?q=users')}`,
    )
  })

  it('the task half: an ended session says so, and its login returns to the tab', async () => {
    await page.goto(`${origin}/tasks/dashboard/queues`)
    await waitLive(page)
    await endSession()
    const notice = page.getByRole('alert').filter({ hasText: 'Session expired' })
    await notice.waitFor({ state: 'visible' })
    const href = await notice.getByRole('link', { name: 'log in' }).getAttribute('href')
    expect(href).toBe(`/tasks/auth/login?next=${encodeURIComponent('/tasks/dashboard/queues')}`)
    await notice.getByRole('link', { name: 'log in' }).click()
    await page.getByLabel('Username').fill(USER.username)
    await page.getByLabel('Password').fill(USER.password)
    await page.getByRole('button', { name: 'Log in' }).click()
    await page.waitForURL(`${origin}/tasks/dashboard/queues`)
    await waitLive(page)
    expect(await current('Dashboard')).toBe('Queues')
  })

  it('a task links to the route that enqueued it, an audit entry to its route', async () => {
    const answer = await app.inject({ method: 'POST', url: '/v1/signup' })
    expect(answer.statusCode).toBe(200)
    let taskId = ''
    await expect
      .poll(async () => {
        const tasks = await manager.listTasks({ funcName: 'send_welcome' })
        taskId = tasks.items[0]?.task_id ?? ''
        return tasks.items[0]?.tags.route
      })
      .toBe('POST:/v1/signup')
    await page.goto(`${origin}/tasks/dashboard/task/${taskId}`)
    await page.getByRole('link', { name: 'POST:/v1/signup' }).click()
    await page.waitForURL((url) => url.pathname === '/switchyard/')
    expect(new URL(page.url()).searchParams.get('q')).toBe('POST:/v1/signup')
    await page.getByRole('button', { name: 'Manage… POST:/v1/signup' }).waitFor()

    await engine.disable('GET:/v1/users', { reason: 'cross-link test' })
    await page.goto(`${origin}/switchyard/audit`)
    await page.getByRole('link', { name: 'GET:/v1/users on the Routes page' }).first().click()
    await page.waitForURL((url) => url.searchParams.get('q') === 'GET:/v1/users')
    await page.getByRole('button', { name: 'Manage… GET:/v1/users' }).waitFor()
    expect(errors).toEqual([])
  })

  it('a task operator action reaches the open Audit page live, on its one stream', async () => {
    const streams: string[] = []
    page.on('request', (request) => {
      if (request.headers().accept?.includes('text/event-stream')) streams.push(request.url())
    })
    await page.goto(`${origin}/switchyard/audit`)
    await waitLive(page)
    const row = page.locator('#audit-table tbody tr').filter({ hasText: 'queue_pause' })
    const before = await row.count()
    // An operator pauses a queue through the task admin's API, not through this page.
    const token = await sessionToken()
    const paused = await app.inject({
      method: 'POST',
      url: '/tasks/queues/default/pause',
      headers: { authorization: `Bearer ${token}` },
    })
    expect(paused.statusCode).toBe(200)
    // Without a reload: the new row appears on top.
    await expect.poll(() => row.count(), { timeout: 20_000 }).toBe(before + 1)
    expect(await page.locator('#audit-table tbody tr').first().textContent()).toContain(
      'queue_pause',
    )
    const resumed = await app.inject({
      method: 'POST',
      url: '/tasks/queues/default/resume',
      headers: { authorization: `Bearer ${token}` },
    })
    expect(resumed.statusCode).toBe(200)
    await expect
      .poll(() => page.locator('#audit-table tbody tr').first().textContent(), {
        timeout: 20_000,
      })
      .toContain('queue_resume')
    // One event stream for the page: the admin's, which carries both halves' entries.
    expect([...new Set(streams.map((url) => new URL(url).pathname))]).toEqual([
      '/switchyard/api/events',
    ])
    expect(errors).toEqual([])
  })

  it('the incident journey: maintenance with an end, failed tasks retried, service restored', async () => {
    const shop = () => engine.activeMaintenance('shop')
    const status = async (method: 'GET' | 'POST', url: string) =>
      (await app.inject({ method, url })).statusCode
    const chargeTasks = async () =>
      (await manager.listTasks({ funcName: 'charge_card' })).items.map((task) => task.status)
    try {
      // Tasks of a route fail: the console shows them, linked to the route.
      processorDown = true
      expect(await status('POST', '/v1/charge')).toBe(200)
      expect(await status('POST', '/v1/charge')).toBe(200)
      await expect.poll(chargeTasks, { timeout: 20_000 }).toEqual(['failed', 'failed'])
      const failedId = (await manager.listTasks({ funcName: 'charge_card' })).items[0]?.task_id
      await page.goto(`${origin}/tasks/dashboard/task/${failedId ?? ''}`)
      await page.getByRole('link', { name: 'POST:/v1/charge' }).click()
      await page.waitForURL((url) => url.searchParams.get('q') === 'POST:/v1/charge')
      await page.getByRole('button', { name: 'Manage… POST:/v1/charge' }).waitFor()

      // Its service goes into maintenance with an end time, from the Routes page.
      await page.goto(`${origin}/switchyard/`)
      await waitLive(page)
      await page.getByRole('button', { name: 'Service maintenance… shop' }).click()
      const dialog = page.getByRole('dialog', { name: 'Maintenance of shop' })
      await dialog.getByLabel('Reason').fill('Card processor outage')
      await dialog.getByRole('radio', { name: '1 h' }).check()
      await dialog.getByRole('button', { name: 'Put service shop in maintenance' }).click()
      const banner = page.getByRole('status').filter({ hasText: 'SERVICE MAINTENANCE' })
      await banner.filter({ hasText: 'Card processor outage' }).waitFor()
      // What the console shows is what clients get: 503 with the end, for every shop route.
      expect(shop().active).toBe(true)
      expect(Number.isFinite(shop().endsAt)).toBe(true)
      expect(shop().endsAt).toBeGreaterThan(Date.now())
      expect(await status('POST', '/v1/signup')).toBe(503)
      expect(await status('POST', '/v1/charge')).toBe(503)
      expect(await banner.locator('time').count()).toBeGreaterThan(0)

      // The failed tasks of the last hour are found and retried; they succeed now.
      processorDown = false
      await page.goto(`${origin}/tasks/dashboard?status=failed&range=1h`)
      await waitLive(page)
      await page.getByRole('button', { name: 'Select all matching this filter…' }).click()
      const bulk = page.getByRole('dialog', { name: 'Act on every matching task' })
      await bulk.getByText('2 tasks match this filter', { exact: false }).waitFor()
      await bulk.getByRole('button', { name: 'Retry 2 tasks' }).click()
      await expect
        .poll(async () => (await chargeTasks()).sort(), { timeout: 20_000 })
        .toEqual(['failed', 'failed', 'success', 'success'])

      // The service is restored: the banner goes, and clients are served again.
      await page.goto(`${origin}/switchyard/`)
      await waitLive(page)
      await banner.getByRole('button', { name: 'Turn off' }).click()
      await page.getByRole('dialog').locator('[data-confirm-ok]').click()
      await banner.waitFor({ state: 'detached' })
      expect(shop().active).toBe(false)
      expect(await status('POST', '/v1/signup')).toBe(200)
      // The audit tells the whole story, both halves in one list.
      await page.goto(`${origin}/switchyard/audit`)
      const actions = await page.locator('#audit-table tbody tr td.mono').allTextContents()
      expect(actions).toEqual(
        expect.arrayContaining(['service_maintenance_on', 'bulk_retry', 'service_maintenance_off']),
      )
      expect(errors).toEqual([])
    } finally {
      processorDown = false
      if (shop().active) await engine.disableServiceMaintenance('shop')
    }
  })

  it('the Audit page lists route-control and task entries together, newest first, with a kind filter', async () => {
    const tasksAudit = adminDataOf(manager).data
    await engine.enableServiceMaintenance('shop', { reason: 'audit view test' })
    await engine.disableServiceMaintenance('shop')
    await tasksAudit.appendAudit({
      timestamp: Date.now() + 1000, // the newest of all
      action: 'queue_pause',
      task_id: null,
      actor: 'ada',
      detail: { queue: 'emails' },
    })
    await page.goto(`${origin}/switchyard/audit`)
    await waitLive(page)
    const rows = page.locator('#audit-table tbody tr')
    // newest first: the task entry, then the route-control ones
    await expect.poll(() => rows.first().textContent()).toContain('queue_pause')
    expect(await rows.first().textContent()).toContain('Tasks')
    const actions = await page.locator('#audit-table tbody tr td.mono').allTextContents()
    expect(actions).toEqual(expect.arrayContaining(['service_maintenance_off', 'queue_pause']))
    expect(actions).not.toContain('login')
    expect(await seriousViolations(page)).toEqual([])

    await page.getByLabel('Kind').selectOption('tasks')
    await page.getByRole('button', { name: 'Filter' }).click()
    await page.waitForURL((url) => url.searchParams.get('kind') === 'tasks')
    // Only task entries (other tests of this suite write some too).
    const taskRows = page.locator('#audit-table tbody tr')
    expect(await taskRows.locator('td.mono').allTextContents()).toContain('queue_pause')
    for (const kind of await taskRows.locator('td:nth-child(2)').allTextContents())
      expect(kind).toBe('Tasks')
    await page.getByLabel('Kind').selectOption('maintenance')
    await page.getByRole('button', { name: 'Filter' }).click()
    await page.waitForURL((url) => url.searchParams.get('kind') === 'maintenance')
    const maintenance = await page.locator('#audit-table tbody tr td.mono').allTextContents()
    expect(maintenance).toEqual(
      expect.arrayContaining(['service_maintenance_off', 'service_maintenance_on']),
    )
    for (const action of maintenance) expect(action).toMatch(/^(service|global)_maintenance_/)
    // The Tasks section's Audit tab leads to this one Audit page, narrowed to task entries.
    await page.goto(`${origin}/tasks/dashboard`)
    await page
      .getByRole('navigation', { name: 'Task views' })
      .getByRole('link', { name: 'Audit' })
      .click()
    await page.waitForURL((url) => url.pathname === '/switchyard/audit')
    expect(new URL(page.url()).searchParams.get('kind')).toBe('tasks')
    expect(errors).toEqual([])
  })
})
