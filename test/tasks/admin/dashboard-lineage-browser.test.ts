/**
 * The task dashboard in Chromium, for retry lineage and the fixes around it: a retried run
 * links to its retry and is not offered for retry again, the retry links back, Dead Letters
 * hide retried runs until asked; the failed card leaves out retried failures; the count cards
 * catch up with a change without another event;
 * a login started by an in-page request comes back to the page (and never leaves the site); a
 * bad `status:` in the search lists nothing; an unknown dashboard address is an HTML 404 page.
 * Every wait is for a condition.
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

const enabled = requireChromium()
const USER = { username: 'admin', password: 's3cret' }

describe.skipIf(!enabled)(
  'task dashboard: lineage and fixes in Chromium',
  { timeout: 60_000 },
  () => {
    let app: FastifyInstance
    let manager: TaskManager
    let base: string
    let session: BrowserSession
    let page: Page
    let ok: ReturnType<TaskManager['task']>
    let flaky: ReturnType<TaskManager['task']>

    const open = async (path: string) => {
      await page.goto(`${base}${path}`)
      await waitLive(page)
    }
    const expectAccessible = async () => {
      expect(await seriousViolations(page)).toEqual([])
    }
    /** Submits the login form shown on the page. */
    const submitLogin = async () => {
      await page.getByLabel('Username').fill(USER.username)
      await page.getByLabel('Password').fill(USER.password)
      await page.getByRole('button', { name: 'Log in' }).click()
      await page.waitForURL((url) => !url.pathname.endsWith('/login'))
    }

    beforeAll(async () => {
      manager = new TaskManager({ logger: quietLogger })
      ok = manager.task({ name: 'sendEmail' }, () => undefined)
      flaky = manager.task({ name: 'chargeCard' }, () => {
        throw new Error('card declined')
      })
      app = Fastify()
      await app.register(taskAdmin, { taskManager: manager, auth: [USER.username, USER.password] })
      base = `${await app.listen({ host: '127.0.0.1', port: 0 })}/tasks`
      await waitForStatus(manager, await manager.addTask(ok, []))
      session = await openBrowserSession()
      page = session.page
      await logIn(page, `${base}/auth/login`, USER)
    })

    afterAll(async () => {
      await session.browser.close()
      await app.close()
    })

    it('a retried run links to its retry, offers no retry, and hides from Dead Letters', async () => {
      const original = await manager.addTask(flaky, [])
      await waitForStatus(manager, original)
      const retry = await manager.retryTask(original)
      await waitForStatus(manager, retry)

      await open(`/dashboard/task/${original}`)
      const originalPanel = page.locator('#task-detail')
      await expect.poll(() => originalPanel.textContent()).toContain(`retried → ${retry}`)
      expect(await page.getByRole('button', { name: 'Retry' }).count()).toBe(0)
      await expectAccessible()
      await page.getByRole('link', { name: retry }).click()
      await page.waitForURL((url) => url.pathname.endsWith(`/dashboard/task/${retry}`))
      await waitLive(page)
      expect(await page.locator('#task-detail').textContent()).toContain(`retry of ${original}`)
      // The retry failed too: it is the one to retry now.
      expect(await page.getByRole('button', { name: 'Retry' }).count()).toBe(1)
      expect(await page.locator('#task-detail').textContent()).toContain(
        'Hidden: set displayFuncArgs to show them.',
      )

      // A successful run's page names the option that would show its result.
      const succeeded = await manager.addTask(ok, [])
      await waitForStatus(manager, succeeded)
      await open(`/dashboard/task/${succeeded}`)
      await expect
        .poll(() => page.locator('#task-detail').textContent())
        .toContain('Hidden: set displayResults to show it.')
      await expectAccessible()

      await open('/dashboard?status=failed')
      const originalRow = page.locator(`tr[data-live-key="${original}"]`)
      await originalRow.waitFor()
      expect(await originalRow.locator('input[type="checkbox"]').count()).toBe(0)
      expect(
        await page.locator(`tr[data-live-key="${retry}"] input[type="checkbox"]`).count(),
      ).toBe(1)

      await open('/dashboard/dead-letters')
      const table = page.locator('#dead-letters tbody')
      await expect.poll(() => table.textContent()).toContain(retry)
      // Its id shows only as the retry's "retry of" link, not as a row of its own.
      expect(await table.locator('div.mono', { hasText: original }).count()).toBe(0)
      await page.getByRole('button', { name: 'Show retried' }).click()
      await page.waitForURL(/retried=1/)
      await waitLive(page)
      await expect.poll(() => table.textContent()).toContain(`retried → ${retry}`)
      const shownRow = page.locator('#dead-letters tbody tr', { hasText: `retried → ${retry}` })
      expect(await shownRow.locator('input[type="checkbox"]').count()).toBe(0)
      await expectAccessible()
    })

    it('the failed card leaves out failures that were retried', async () => {
      await open('/dashboard')
      const card = page.locator('#run-metrics .count', {
        has: page.locator('span', { hasText: /^failed$/ }),
      })
      const shown = async () => Number(await card.locator('strong').textContent())
      const unretried = async () =>
        (await manager.listTasks({ status: 'failed', retried: false, perPage: 1 })).total
      // Earlier tests left failures, some retried: the card counts the others only.
      const failed = (await manager.metrics()).by_status.failed
      expect(failed).toBeGreaterThan(await unretried())
      await expect.poll(shown, { timeout: 10_000 }).toBe(await unretried())
      // Retrying the newest failure adds a failure (its retry fails too) and leaves the card.
      const newest = (await manager.listTasks({ status: 'failed', retried: false, perPage: 1 }))
        .items[0]
      await waitForStatus(manager, await manager.retryTask(newest!.task_id))
      expect((await manager.metrics()).by_status.failed).toBe(failed + 1)
      await expect.poll(shown, { timeout: 10_000 }).toBe(await unretried())
      expect(await card.getAttribute('title')).toMatch(/^\d+ retried failures not counted$/)
    })

    it('the count cards catch up with a change without waiting for another event', async () => {
      await open('/dashboard')
      const card = page.locator('#run-metrics .count', {
        has: page.locator('span', { hasText: /^success$/ }),
      })
      await expect.poll(() => card.locator('strong').textContent()).toMatch(/^\d+$/)
      const before = Number(await card.locator('strong').textContent())
      const succeeded = (await manager.metrics()).by_status.success
      // The cards may show a count read before this test; they catch up first.
      await expect
        .poll(async () => Number(await card.locator('strong').textContent()), { timeout: 4_000 })
        .toBe(succeeded)
      await waitForStatus(manager, await manager.addTask(ok, []))
      // The task's events come at once; the figures they fetch may be cached from before it.
      await expect
        .poll(async () => Number(await card.locator('strong').textContent()), { timeout: 4_000 })
        .toBe(succeeded + 1)
      expect(before).toBeLessThanOrEqual(succeeded)
    })

    it('a login started by an in-page request comes back to the page; next never leaves the site', async () => {
      await open('/dashboard/queues')
      await session.context.clearCookies()
      // A live refresh of the page's section, as the stream would ask, after the session ended.
      await page.evaluate(() => {
        const scope = globalThis as unknown as {
          document: { querySelector(selector: string): { getAttribute(name: string): string } }
          htmx: { ajax(method: string, url: string, options: object): Promise<void> }
        }
        const section = scope.document.querySelector('[data-live-url]')
        void scope.htmx.ajax('GET', section.getAttribute('data-live-url'), {
          source: section,
          target: section,
          swap: 'outerHTML',
        })
      })
      // The page says the session expired; its link logs in and comes back to the page.
      const notice = page.getByRole('alert').filter({ hasText: 'Session expired' })
      await notice.waitFor()
      await notice.getByRole('link', { name: 'log in' }).click()
      await page.waitForURL(/\/auth\/login\?next=/)
      await submitLogin()
      expect(new URL(page.url()).pathname).toBe('/tasks/dashboard/queues')

      for (const next of ['//evil.example/x', 'https://evil.example/', '/tasks/../evil']) {
        await session.context.clearCookies()
        await page.goto(`${base}/auth/login?next=${encodeURIComponent(next)}`)
        await submitLogin()
        const landed = new URL(page.url())
        expect(landed.origin).toBe(new URL(base).origin)
        expect(landed.pathname).toBe('/tasks/dashboard')
      }
    })

    it('a bad status in the search shows the error and lists nothing', async () => {
      await open('/dashboard?q=status%3Abogus')
      await expect
        .poll(() => page.locator('#runs [role="alert"]').textContent())
        .toContain('Unknown status "bogus"')
      expect(await page.locator('#runs tbody tr[data-live-key]').count()).toBe(0)
      expect(await page.locator('#runs').textContent()).toContain('No tasks match')
      await expectAccessible()
    })

    it('an unknown dashboard address is an HTML 404 page; an unknown API path stays JSON', async () => {
      const response = await page.goto(`${base}/dashboard/no-such-page`)
      expect(response?.status()).toBe(404)
      expect(response?.headers()['content-type']).toContain('text/html')
      await page.getByRole('link', { name: 'Back to the runs' }).waitFor()
      await expectAccessible()
      const api = await page.request.get(`${base}/no-such-endpoint`)
      expect(api.status()).toBe(404)
      expect(await api.json()).toMatchObject({
        error: { code: expect.stringMatching(/NOT_FOUND$/) },
      })
    })
  },
)
