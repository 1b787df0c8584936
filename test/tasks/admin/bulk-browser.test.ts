/**
 * "Select all matching this filter" on the Runs view in Chromium: the dialog says how many
 * records the filter matches (more than one page), Retry acts on all of them and the toast
 * gives the counts; axe passes with the dialog open. An operator's dialog has no Delete.
 */
import Fastify, { type FastifyInstance } from 'fastify'
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { TaskManager } from '../../../src/tasks/index.js'
import { taskAdmin } from '../../../src/tasks/fastify/index.js'
import {
  logIn,
  openBrowserSession,
  requireChromium,
  seriousViolations,
  waitLive,
  type BrowserSession,
} from '../../browser/browser.js'
import { quietLogger, waitForStatus } from '../helpers.js'
import { login } from './helpers.js'

const enabled = requireChromium()
const ADMIN = { username: 'ada', password: 'admin-pass', role: 'admin' as const }
const OPERATOR = { username: 'otto', password: 'oper-pass', role: 'operator' as const }
/** More than one page of the run table (50 rows). */
const FAILED = 60

describe.skipIf(!enabled)('bulk actions in the task dashboard', { timeout: 60_000 }, () => {
  let app: FastifyInstance
  let manager: TaskManager
  let base: string
  let session: BrowserSession
  let page: Page
  let fail = true

  beforeAll(async () => {
    manager = new TaskManager({ logger: quietLogger })
    const job = manager.task({ name: 'importRows' }, () => {
      if (fail) throw new Error('bad row')
    })
    const ok = manager.task({ name: 'sendEmail' }, () => undefined)
    app = Fastify()
    await app.register(taskAdmin, { taskManager: manager, auth: { users: [ADMIN, OPERATOR] } })
    base = `${await app.listen({ host: '127.0.0.1', port: 0 })}/tasks`
    const ids = [await manager.addTask(ok, [])]
    for (let i = 0; i < FAILED; i++) ids.push(await manager.addTask(job, []))
    for (const id of ids) await waitForStatus(manager, id)
    fail = false
    session = await openBrowserSession()
    page = session.page
  })

  afterAll(async () => {
    await session.browser.close()
    await app.close()
  })

  it('selects every failed run, confirms the count, retries them all', async () => {
    await logIn(page, `${base}/auth/login`, ADMIN)
    await page.goto(`${base}/dashboard?status=failed&range=all`)
    await waitLive(page)
    await page.getByRole('button', { name: 'Select all matching this filter…' }).click()
    const dialog = page.getByRole('dialog')
    await dialog.getByText(`${FAILED} tasks match this filter`).waitFor()
    expect(await dialog.getByRole('button', { name: `Delete ${FAILED} tasks` }).count()).toBe(1)
    expect(await seriousViolations(page)).toEqual([])
    await dialog.getByRole('button', { name: `Retry ${FAILED} tasks` }).click()
    await page
      .locator('#ui-toasts')
      .getByText(`Retried ${FAILED} of ${FAILED} matching tasks.`)
      .waitFor()
    await dialog.waitFor({ state: 'hidden' })
    await expect
      .poll(async () => (await manager.listTasks({ status: 'success', perPage: 500 })).total)
      .toBe(FAILED + 1)
    const runs = await manager.listTasks({ funcName: 'importRows', perPage: 1 })
    expect(runs.total).toBe(2 * FAILED)
  })

  it("an operator's dialog offers retry and cancel, not delete", async () => {
    const { cookie, csrf } = await login(app, OPERATOR.username, OPERATOR.password)
    const dialog = await app.inject({
      url: '/tasks/dashboard/bulk?status=failed&range=all',
      headers: { cookie, 'hx-request': 'true' },
    })
    expect(dialog.statusCode).toBe(200)
    expect(dialog.body).toContain(`Retry ${FAILED} tasks`)
    expect(dialog.body).toContain(`Cancel ${FAILED} tasks`)
    expect(dialog.body).not.toContain('Delete')
    const refused = await app.inject({
      method: 'POST',
      url: '/tasks/dashboard/bulk/delete?status=failed&range=all',
      headers: { cookie, 'x-csrf-token': csrf, 'hx-request': 'true' },
    })
    expect(refused.statusCode).toBe(403)
    expect(JSON.stringify(refused.headers)).toContain('needs the admin role')
    expect((await manager.listTasks({ status: 'failed', perPage: 1 })).total).toBe(FAILED)
  })
})
