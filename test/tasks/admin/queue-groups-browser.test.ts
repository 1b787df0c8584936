/**
 * The Queues tab's groups view and group-limit fields in Chromium: a grouped queue lists its
 * groups under the table and the counts follow the stream; a bad rate limit is shown next to
 * its field with the input kept; a valid one applies; axe-core finds nothing serious at desktop
 * and phone width. Open mode (no auth), in memory. Every wait is for a condition.
 */
import Fastify, { type FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { TaskManager } from '../../../src/tasks/index.js'
import { taskAdmin } from '../../../src/tasks/fastify/index.js'
import {
  openBrowserSession,
  requireChromium,
  seriousViolations,
  VIEWPORTS,
  waitLive,
  type BrowserSession,
} from '../../browser/browser.js'
import { quietLogger } from '../helpers.js'

const enabled = requireChromium()

describe.skipIf(!enabled)('Queues tab groups in Chromium', { timeout: 60_000 }, () => {
  let app: FastifyInstance
  let manager: TaskManager
  let base: string
  let session: BrowserSession
  let release: () => void = () => undefined
  const held = new Promise<void>((resolve) => (release = resolve))

  beforeAll(async () => {
    manager = new TaskManager({
      logger: quietLogger,
      queues: { exports: { groupConcurrency: 1 } },
    })
    app = Fastify()
    await app.register(taskAdmin, { taskManager: manager })
    base = `${await app.listen({ host: '127.0.0.1', port: 0 })}/tasks`
    session = await openBrowserSession()
  })

  afterAll(async () => {
    release()
    await session.browser.close()
    await app.close()
    await manager.shutdown()
  })

  it('lists the groups live and edits the rate limits inline', async () => {
    const job = manager.task({ name: 'export', queue: 'exports' }, () => held)
    await manager.addTask(job, [], { group: 'acme' })
    const { page } = session
    await page.goto(`${base}/dashboard/queues`)
    await waitLive(page)
    const groups = page.getByRole('region', { name: 'Groups of exports' })
    await expect.poll(() => groups.textContent()).toContain('acme')
    expect(await seriousViolations(page)).toEqual([])

    // A second task of the group waits (one place per group): the view follows the stream.
    await manager.addTask(job, [], { group: 'acme' })
    await manager.addTask(job, [], { group: 'globex' })
    await expect.poll(() => groups.locator('tr', { hasText: 'acme' }).textContent()).toBe('acme11')
    await expect.poll(() => page.locator('.queue-groups p').textContent()).toContain('2 groups')

    const rate = page.getByLabel('Rate of exports', { exact: true })
    await rate.fill('lots')
    await page.getByRole('button', { name: 'Save' }).first().click()
    // The message sits next to the field, tied to it for screen readers.
    const error = page.locator('.queue-form .error')
    await expect.poll(() => error.textContent()).toContain('100/minute')
    expect(await rate.getAttribute('aria-describedby')).toBe(await error.getAttribute('id'))
    expect(await page.getByLabel('Rate of exports', { exact: true }).inputValue()).toBe('lots')
    expect(manager.queueStats()[0]).toMatchObject({ rate_limit: null })
    await page.getByLabel('Rate of exports', { exact: true }).fill('30/second')
    await page.getByRole('button', { name: 'Save' }).first().click()
    await expect.poll(() => manager.queueStats()[0]?.rate_limit).toBe('30/second')

    await page.setViewportSize(VIEWPORTS.narrow)
    expect(await seriousViolations(page)).toEqual([])
    // The refused form's 422 is the one failed request expected here.
    expect(session.errors.filter((error) => !error.includes('status of 422'))).toEqual([])
  })
})
