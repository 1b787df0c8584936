/**
 * The task admin is an admin surface: with the route-control plugin on the same app, none of its
 * routes is registered with the engine or listed, and global maintenance or a global rate limit
 * never locks an operator out of it, while the app's own routes under the same prefix stay
 * route-controlled.
 */
import Fastify, { type FastifyInstance } from 'fastify'
import { afterEach, describe, expect, it } from 'vitest'
import { createEngine } from '../../src/index.js'
import { switchyard } from '../../src/fastify/index.js'
import { TaskManager } from '../../src/tasks/index.js'
import { taskAdmin } from '../../src/tasks/fastify/index.js'
import { login, loginRequest } from '../tasks/admin/helpers.js'
import { quietLogger } from '../tasks/helpers.js'

const apps: FastifyInstance[] = []
afterEach(async () => {
  for (const app of apps.splice(0)) await app.close()
})

async function appWithBoth() {
  const app = Fastify()
  apps.push(app)
  const manager = new TaskManager({ logger: quietLogger })
  manager.task({ name: 'noop' }, () => 'done')
  const engine = createEngine({ store: 'memory', env: 'prod', logger: quietLogger })
  await app.register(switchyard, { engine })
  app.get('/orders', () => ({ ok: true }))
  await app.register(taskAdmin, { taskManager: manager, path: '/tasks', auth: ['admin', 's3cret'] })
  // The app's own route under the task admin's prefix, outside the task admin.
  app.get('/tasks/report', () => ({ report: true }))
  await app.ready()
  return { app, engine }
}

describe('admin surfaces are not route-controlled', () => {
  it('registers none of the task admin routes with the engine, and still the app’s own', async () => {
    const { engine } = await appWithBoth()
    const listed = engine.listRoutes({ perPage: 500 }).items.map((state) => state.route)
    expect(listed).toContain('GET:/orders')
    expect(listed).toContain('GET:/tasks/report')
    expect(
      listed.filter((route) => route.includes('/tasks/') && route !== 'GET:/tasks/report'),
    ).toEqual([])
  })

  it('keeps the task admin reachable under global maintenance and a global rate limit', async () => {
    const { app, engine } = await appWithBoth()
    await engine.enableGlobalMaintenance({ reason: 'incident' })
    expect((await app.inject('/orders')).statusCode).toBe(503)
    expect((await app.inject('/tasks/report')).statusCode).toBe(503)
    const form = await app.inject('/tasks/auth/login')
    expect(form.statusCode).toBe(200)
    expect(form.headers['content-type']).toMatch(/^text\/html/)
    const { cookie } = await login(app)
    const page = await app.inject({ url: '/tasks/dashboard', headers: { cookie } })
    expect(page.statusCode).toBe(200)
    const api = await app.inject({ url: '/tasks/queues', headers: { cookie } })
    expect(api.statusCode).toBe(200)

    await engine.disableGlobalMaintenance()
    await engine.setGlobalRateLimit({ limit: '1/minute' })
    // 1/minute allows a burst of 2 on the app's route; the task admin is never counted.
    for (let i = 0; i < 5; i += 1) {
      expect((await app.inject(await loginRequest(app, 'admin', 's3cret'))).statusCode).toBe(303)
    }
    const statuses = [] as number[]
    for (let i = 0; i < 3; i += 1) statuses.push((await app.inject('/orders')).statusCode)
    expect(statuses).toContain(429)
  })
})
