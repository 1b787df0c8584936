/**
 * axe-core on every page of the one console (the demo app: route control at /switchyard, tasks
 * at /tasks, one login), at 1280×800 and 390×844, in light and dark: no serious or critical
 * violation anywhere. One browser; one context per size and scheme, its one page reused.
 */
import type { FastifyInstance } from 'fastify'
import type { Browser } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildDemoApp, DEMO_ADMIN } from '../../src/demo/app.js'
import { createEngine, type Engine } from '../../src/index.js'
import {
  launchBrowser,
  logIn,
  openContext,
  requireChromium,
  seriousViolations,
  waitLive,
  watchErrors,
} from '../browser/browser.js'
import { until } from '../helpers/wait.js'
import { login } from '../tasks/admin/helpers.js'

const enabled = requireChromium()

const SIZES = {
  desktop: { width: 1280, height: 800 },
  phone: { width: 390, height: 844 },
} as const

describe.skipIf(!enabled)('axe on every page of the console', { timeout: 240_000 }, () => {
  let app: FastifyInstance
  let engine: Engine
  let browser: Browser
  let origin: string
  let pages: string[]

  beforeAll(async () => {
    engine = createEngine({ store: 'memory', service: 'demo' })
    app = await buildDemoApp({ engine, tasksPath: null })
    origin = await app.listen({ host: '127.0.0.1', port: 0 })
    // Something on every page: a disabled route with an end, service maintenance with an end
    // time, a blocked request, a failed task (dead letters, its detail page).
    await engine.disable('GET:/orders/:id', {
      reason: 'Hotfix',
      until: new Date(Date.now() + 3_600_000),
    })
    await engine.maintenance.service('demo').enable({
      reason: 'Ledger migration',
      until: new Date(Date.now() + 1_800_000),
      exemptPaths: ['/health'],
    })
    for (let i = 0; i < 4; i++) await app.inject('/search')
    const { cookie } = await login(app, DEMO_ADMIN.username, DEMO_ADMIN.password)
    const failed = async () =>
      (await app.inject({ url: '/tasks/?status=failed', headers: { cookie } })).json<{
        items: { task_id: string }[]
      }>().items
    await until(async () => (await failed()).length > 0, 15_000)
    const failedId = (await failed())[0]!.task_id
    pages = [
      '/switchyard/',
      '/switchyard/flags',
      '/switchyard/flags/new-checkout',
      '/switchyard/flags/new-checkout?tab=targeting',
      '/switchyard/segments',
      '/switchyard/rate-limits',
      '/switchyard/blocked',
      '/switchyard/audit',
      '/switchyard/evaluation-keys',
      '/tasks/dashboard',
      `/tasks/dashboard/task/${failedId}`,
      '/tasks/dashboard/tasks',
      '/tasks/dashboard/schedules',
      '/tasks/dashboard/queues',
      '/tasks/dashboard/workers',
      '/tasks/dashboard/dead-letters',
      '/tasks/dashboard/audit',
    ]
    browser = await launchBrowser()
  })

  afterAll(async () => {
    await browser.close()
    await app.close()
    await engine.close()
  })

  for (const scheme of ['light', 'dark'] as const) {
    for (const size of ['desktop', 'phone'] as const) {
      it(`${scheme}, ${SIZES[size].width}×${SIZES[size].height}`, async () => {
        const context = await openContext(browser, { colorScheme: scheme })
        try {
          const page = await context.newPage()
          await page.setViewportSize(SIZES[size])
          await page.emulateMedia({ colorScheme: scheme })
          const errors = watchErrors(page)
          const found: string[] = []
          const check = async (path: string) => {
            for (const violation of await seriousViolations(page))
              found.push(`${path}: ${violation}`)
          }
          await page.goto(`${origin}/switchyard/login`)
          await check('/switchyard/login')
          await page.goto(`${origin}/tasks/auth/login`)
          await check('/tasks/auth/login')
          await logIn(page, `${origin}/switchyard/login`, DEMO_ADMIN)
          for (const path of pages) {
            await page.goto(`${origin}${path}`)
            await waitLive(page)
            await check(path)
          }
          // A dialog with forms and a second section: the maintenance dialog.
          await page.goto(`${origin}/switchyard/`)
          await waitLive(page)
          await page.getByRole('button', { name: 'Global maintenance…' }).click()
          await page
            .getByRole('dialog', { name: 'Global maintenance' })
            .getByRole('heading', { name: 'Exemptions' })
            .waitFor()
          await check('/switchyard/ (maintenance dialog)')
          expect(found).toEqual([])
          expect(errors).toEqual([])
        } finally {
          await context.close()
        }
      })
    }
  }
})
