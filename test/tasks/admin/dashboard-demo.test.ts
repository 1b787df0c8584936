/**
 * The demo's task dashboard is not empty: on a fresh history the demo enqueues receipts that
 * succeed, a charge that fails once and succeeds on its retry, inventory syncs that fail for
 * good, an image batch with progress, and two schedules.
 */
import { describe, expect, it } from 'vitest'
import { buildDemoApp, DEMO_ADMIN } from '../../../src/demo/app.js'
import { login } from './helpers.js'

describe('the demo task dashboard', () => {
  it('shows successes, a retry, dead letters, progress and schedules', async () => {
    const app = await buildDemoApp({ tasksPath: null })
    await app.ready()
    const { cookie } = await login(app, DEMO_ADMIN.username, DEMO_ADMIN.password)
    const get = async (url: string) => (await app.inject({ url, headers: { cookie } })).body
    const list = async (query: string) =>
      (await app.inject({ url: `/tasks/?${query}`, headers: { cookie } })).json<{
        items: {
          func_name: string
          status: string
          retries_used: number
          progress: number | null
        }[]
      }>().items
    await expect.poll(async () => (await list('status=failed')).length, { timeout: 15_000 }).toBe(2)
    await expect
      .poll(async () => (await list('func_name=chargeCard')).map((task) => task.status), {
        timeout: 15_000,
      })
      .toEqual(['success'])
    expect((await list('func_name=chargeCard'))[0]!.retries_used).toBe(1)
    await expect
      .poll(async () => (await list('func_name=resizeImages'))[0]?.progress ?? 0)
      .toBeGreaterThan(0)
    expect((await list('status=success')).length).toBeGreaterThanOrEqual(3)
    const view = await get('/tasks/dashboard')
    expect(view).toContain('switchyard demo tasks')
    expect(view).toContain('syncInventory')
    const schedules = await get('/tasks/dashboard/schedules')
    expect(schedules).toContain('cleanupSessions')
    expect(schedules).toContain('cron 0 6 * * *')
    await app.close()
  })
})
