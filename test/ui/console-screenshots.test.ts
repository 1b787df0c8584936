/**
 * Screenshots of every page of the one console for docs/dashboard.md and docs/task-dashboard.md,
 * taken from the demo app (route control at /switchyard, tasks at /tasks, one login) with some
 * state changed so the pages are not empty: each page on a desktop in light, and Routes and Runs
 * also dark and on a phone. Runs only with SCREENSHOTS=1 (`npm run screenshots`).
 */
import type { FastifyInstance } from 'fastify'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, it } from 'vitest'
import { buildDemoApp, DEMO_ADMIN } from '../../src/demo/app.js'
import { createEngine, type Engine } from '../../src/index.js'
import { launchBrowser, logIn, openContext, requireChromium, waitLive } from '../browser/browser.js'
import { until } from '../helpers/wait.js'
import { login } from '../tasks/admin/helpers.js'

const wanted = process.env.SCREENSHOTS === '1' && requireChromium()

/** Where the images go: `docs/images/console-<name>.png`. */
const image = (name: string) => `docs/images/console-${name}.png`

describe.skipIf(!wanted)('console screenshots', { timeout: 180_000 }, () => {
  let app: FastifyInstance
  let engine: Engine
  let browser: Browser
  let origin: string
  let failedId: string

  beforeAll(async () => {
    engine = createEngine({ store: 'memory', service: 'demo' })
    app = await buildDemoApp({ engine, tasksPath: null })
    origin = await app.listen({ host: '127.0.0.1', port: 0 })
    const as = { actor: 'admin', platform: 'dashboard' }
    const hours = (n: number) => new Date(Date.now() + n * 3_600_000)
    await engine.disable('GET:/orders/:id', {
      reason: 'Hotfix for duplicate charges',
      until: hours(2),
      ...as,
    })
    await engine.schedule('GET:/v2/users', {
      reason: 'Index rebuild',
      start: hours(3),
      end: hours(4),
      ...as,
    })
    await engine.maintenance.service('demo').enable({
      reason: 'Ledger migration',
      until: hours(0.5),
      exemptPaths: ['/health'],
      ...as,
    })
    await engine.rateLimits.global.set({ limit: '1000/minute', keyStrategy: 'ip', ...as })
    await engine.rateLimits.service('demo').set({ limit: '300/minute', burst: 50, ...as })
    await engine.saveSegment(
      { key: 'beta-testers', name: 'Beta testers', included: ['ada', 'grace', 'linus'] },
      { audit: false },
    )
    await engine.flags.patchFlag(
      'new-checkout',
      {
        description: 'The one-page checkout with saved cards.',
        tags: ['checkout', 'web'],
        rules: [
          {
            description: 'Beta testers first',
            clauses: [{ attribute: 'key', operator: 'in_segment', values: ['beta-testers'] }],
            variation: 'on',
          },
        ],
      },
      as,
    )
    for (let i = 0; i < 8; i++) await app.inject('/search')
    const { cookie } = await login(app, DEMO_ADMIN.username, DEMO_ADMIN.password)
    const failed = async () =>
      (await app.inject({ url: '/tasks/?status=failed', headers: { cookie } })).json<{
        items: { task_id: string }[]
      }>().items
    await until(async () => (await failed()).length === 2, 15_000)
    failedId = (await failed())[0]!.task_id
    browser = await launchBrowser()
  })

  afterAll(async () => {
    await browser.close()
    await app.close()
    await engine.close()
  })

  /** A logged-in page in a fresh context of the given look, closed after `use`. */
  const withPage = async (
    look: { colorScheme: 'light' | 'dark'; viewport: 'desktop' | 'narrow' },
    use: (page: Page) => Promise<void>,
  ) => {
    const context = await openContext(browser, look)
    try {
      await use(await context.newPage())
    } finally {
      await context.close()
    }
  }

  const open = async (page: Page, path: string) => {
    await page.goto(`${origin}${path}`)
    await waitLive(page)
  }

  it('every page, desktop, light', async () => {
    await withPage({ colorScheme: 'light', viewport: 'desktop' }, async (page) => {
      await page.goto(`${origin}/switchyard/login`)
      await page.screenshot({ path: image('login') })
      await logIn(page, `${origin}/switchyard/login`, DEMO_ADMIN)
      for (const [name, path] of [
        ['routes', '/switchyard/'],
        ['flags', '/switchyard/flags'],
        ['flag-targeting', '/switchyard/flags/new-checkout?tab=targeting'],
        ['segments', '/switchyard/segments'],
        ['rate-limits', '/switchyard/rate-limits'],
        ['blocked', '/switchyard/blocked'],
        ['audit', '/switchyard/audit'],
        ['keys', '/switchyard/evaluation-keys'],
        ['runs', '/tasks/dashboard'],
        ['task-detail', `/tasks/dashboard/task/${failedId}`],
        ['functions', '/tasks/dashboard/tasks'],
        ['schedules', '/tasks/dashboard/schedules'],
        ['queues', '/tasks/dashboard/queues'],
        ['workers', '/tasks/dashboard/workers'],
        ['dead-letters', '/tasks/dashboard/dead-letters'],
      ] as const) {
        await open(page, path)
        await page.screenshot({ path: image(name), fullPage: true })
      }
      await open(page, '/switchyard/')
      await page.getByRole('button', { name: 'Global maintenance…' }).click()
      const dialog = page.getByRole('dialog', { name: 'Global maintenance' })
      await dialog.getByRole('radio', { name: '1 h' }).waitFor()
      await page.screenshot({ path: image('maintenance-dialog') })
    })
  })

  for (const [scheme, viewport, suffix] of [
    ['dark', 'desktop', 'dark'],
    ['light', 'narrow', 'phone'],
  ] as const) {
    it(`Routes and Runs, ${suffix}`, async () => {
      await withPage({ colorScheme: scheme, viewport }, async (page) => {
        await logIn(page, `${origin}/switchyard/login`, DEMO_ADMIN)
        await open(page, '/switchyard/')
        await page.screenshot({ path: image(`routes-${suffix}`), fullPage: viewport === 'desktop' })
        await open(page, '/tasks/dashboard')
        await page.screenshot({ path: image(`runs-${suffix}`), fullPage: viewport === 'desktop' })
      })
    })
  }
})
