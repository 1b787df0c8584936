/**
 * The Workers tab in a real browser: two managers share one SQLite store; the tab lists both
 * alive with what each runs (linked to the task), passes axe-core, a task's detail links to its
 * worker's row ("Ran on"), and an instance that shut down reads dead. Waits are for conditions.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Fastify, { type FastifyInstance } from 'fastify'
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { sqliteStore, TaskManager } from '../../../src/tasks/index.js'
import { taskAdmin } from '../../../src/tasks/fastify/index.js'
import {
  logIn,
  openBrowserSession,
  requireChromium,
  seriousViolations,
  waitLive,
  type BrowserSession,
} from '../../browser/browser.js'
import { deferred, quietLogger, until, waitForStatus } from '../helpers.js'

const enabled = requireChromium()
const USER = { username: 'admin', password: 's3cret' }

describe.skipIf(!enabled)('Workers tab in Chromium', { timeout: 60_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'sy-workers-browser-'))
  const path = join(dir, 'tasks.db')
  const gate = deferred()
  let app: FastifyInstance
  let local: TaskManager
  let remote: TaskManager
  let base: string
  let session: BrowserSession
  let page: Page
  let doneId: string
  let heldId: string

  beforeAll(async () => {
    local = new TaskManager({ logger: quietLogger, store: sqliteStore(path) })
    const ping = local.task({ name: 'ping', persist: true }, () => 'pong')
    remote = new TaskManager({
      logger: quietLogger,
      store: sqliteStore(path),
      queues: { reports: { concurrency: 1 } },
    })
    remote.task({ name: 'ping', persist: true }, () => 'pong')
    const held = remote.task(
      { name: 'buildReport', queue: 'reports', persist: true },
      () => gate.promise,
    )
    app = Fastify()
    await app.register(taskAdmin, {
      taskManager: local,
      auth: [USER.username, USER.password],
    })
    base = `${await app.listen({ host: '127.0.0.1', port: 0 })}/tasks`
    await remote.startup()
    doneId = await local.addTask(ping, [])
    await waitForStatus(local, doneId)
    heldId = await remote.addTask(held, [])
    await waitForStatus(remote, heldId, ['running'])
    // The remote's heartbeat after its task started names it.
    await until(async () => {
      const workers = await local.listWorkers()
      return workers.some((w) => w.id === remote.workerId && w.running === 1)
    }, 15_000)
    session = await openBrowserSession()
    page = session.page
    await logIn(page, `${base}/auth/login`, USER)
  })

  afterAll(async () => {
    gate.resolve()
    await session.browser.close()
    await app.close()
    await remote.shutdown()
    rmSync(dir, { recursive: true, force: true })
  })

  const row = (id: string) => page.locator('#workers tbody tr', { hasText: id })

  it('lists both instances alive with what each runs; axe passes', async () => {
    await page.goto(`${base}/dashboard/workers`)
    await waitLive(page)
    await page.getByRole('heading', { name: 'Workers' }).waitFor()
    expect(await page.getByRole('link', { name: 'Workers' }).getAttribute('aria-current')).toBe(
      'page',
    )
    await expect.poll(() => page.locator('#workers tbody tr').count()).toBe(2)
    expect(await row(local.workerId).textContent()).toContain('alive')
    expect(await row(remote.workerId).textContent()).toContain('reports')
    const running = row(remote.workerId).getByRole('link', { name: 'buildReport' })
    expect(await running.getAttribute('href')).toContain(`/dashboard/task/${heldId}`)
    expect(await seriousViolations(page)).toEqual([])
  })

  it('a task detail says where it ran and links to that worker', async () => {
    await page.goto(`${base}/dashboard/task/${doneId}`)
    await waitLive(page)
    const link = page.getByRole('link', { name: local.workerId })
    await link.click()
    await page.waitForURL(/\/dashboard\/workers#worker-/)
    expect(await page.locator('tr:target').textContent()).toContain(local.workerId)
    expect(await seriousViolations(page)).toEqual([])
  })

  it('an instance that shut down reads dead', async () => {
    gate.resolve()
    await waitForStatus(remote, heldId)
    await remote.shutdown()
    await page.goto(`${base}/dashboard/workers`)
    await waitLive(page)
    expect(await row(remote.workerId).textContent()).toContain('dead')
    expect(await row(local.workerId).textContent()).toContain('alive')
    expect(await seriousViolations(page)).toEqual([])
  })
})
