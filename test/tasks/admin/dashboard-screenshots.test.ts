/**
 * Screenshots of the task dashboard for docs/task-dashboard.md, in light and dark, at desktop
 * (1440 px) and phone (390 px) width, taken from the demo app once its seeded tasks have run
 * (successes, a retry, dead letters, progress, schedules). Runs only with SCREENSHOTS=1
 * (`SCREENSHOTS=1 npx vitest run test/tasks/admin/dashboard-screenshots.test.ts`).
 */
import { afterAll, beforeAll, describe } from 'vitest'
import type { FastifyInstance } from 'fastify'
import { buildDemoApp, DEMO_ADMIN } from '../../../src/demo/app.js'
import { logIn, requireChromium, screenshotEachLook, waitLive } from '../../browser/browser.js'
import { until } from '../../helpers/wait.js'
import { login } from './helpers.js'

const wanted = process.env.SCREENSHOTS === '1' && requireChromium()

describe.skipIf(!wanted)('task dashboard screenshots', { timeout: 180_000 }, () => {
  let app: FastifyInstance
  let base: string
  let failedId: string

  beforeAll(async () => {
    app = await buildDemoApp({ tasksPath: null })
    const address = await app.listen({ host: '127.0.0.1', port: 0 })
    base = `${address}/tasks`
    const { cookie } = await login(app, DEMO_ADMIN.username, DEMO_ADMIN.password)
    const failed = async () =>
      (await app.inject({ url: '/tasks/?status=failed', headers: { cookie } })).json<{
        items: { task_id: string }[]
      }>().items
    await until(async () => (await failed()).length === 2, 15_000)
    failedId = (await failed())[0]!.task_id
  })

  afterAll(async () => {
    await app.close()
  })

  screenshotEachLook(async (page, { scheme, viewport }) => {
    const shot = (name: string) =>
      page.screenshot({
        path: `docs/images/task-dashboard-${name}-${scheme}-${viewport}.png`,
        fullPage: viewport === 'desktop',
      })
    await page.goto(`${base}/auth/login`)
    await shot('login')
    await logIn(page, `${base}/auth/login`, DEMO_ADMIN)
    for (const [name, path] of [
      ['view', '/dashboard'],
      ['detail', `/dashboard/task/${failedId}`],
      ['dead-letters', '/dashboard/dead-letters'],
      ['queues', '/dashboard/queues'],
      ['schedules', '/dashboard/schedules'],
    ] as const) {
      await page.goto(`${base}${path}`)
      await waitLive(page)
      await shot(name)
    }
  })
})
