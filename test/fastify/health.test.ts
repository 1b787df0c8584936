/**
 * The health routes: liveness and readiness under the admin mount, unauthenticated and outside
 * route control, the allowed-hosts check, maintenance and rate limits; readiness with an
 * unreachable store and while the app closes; the task admin's readiness.
 */
import Fastify, { type FastifyInstance } from 'fastify'
import { afterEach, describe, expect, it } from 'vitest'
import { createEngine } from '../../src/create-engine.js'
import { switchyard } from '../../src/fastify/plugin.js'
import { memoryStore } from '../../src/stores/memory.js'
import { redisStore } from '../../src/stores/redis.js'
import { taskAdmin } from '../../src/tasks/admin/lazy-plugin.js'
import { TaskManager } from '../../src/tasks/manager.js'
import { taskReadiness } from '../../src/tasks/admin/readiness.js'
import { redisStore as redisTaskStore } from '../../src/tasks/stores/index.js'
import { quietLogger } from '../helpers/logger.js'
import { deleteKeys, testPrefix } from '../helpers/redis.js'

const ADMIN = { username: 'admin', password: 's3cret-pass' }
const quiet = { level: 'silent' } as const
const apps: FastifyInstance[] = []
afterEach(async () => {
  for (const app of apps.splice(0)) await app.close()
})

type ReadyBody = { status: string; checks: Record<string, { status: string; detail?: string }> }

async function appWith(options: Parameters<typeof switchyard>[1] = {}) {
  const app = Fastify({ logger: quiet })
  apps.push(app)
  const engine = createEngine({ store: memoryStore() })
  await app.register(switchyard, {
    engine,
    admin: { auth: ADMIN, allowedHosts: ['admin.example.com'] },
    ...options,
  })
  app.get('/orders', () => 'ok')
  await app.ready()
  return { app, engine }
}

describe('admin health routes', () => {
  it('answer without credentials, from any host, whatever maintenance and rate limits say', async () => {
    const { app, engine } = await appWith()
    // A probe sends the pod IP as Host: the admin API refuses it, the health routes do not.
    const podHost = { host: '10.1.2.3:8080' }
    const api = await app.inject({ url: '/switchyard/api/routes', headers: podHost })
    expect(api.statusCode).toBe(421)
    const live = await app.inject({ url: '/switchyard/health/live', headers: podHost })
    expect(live.statusCode).toBe(200)
    expect(live.json()).toEqual({ status: 'ok' })
    expect(live.headers['cache-control']).toBe('no-store')
    const ready = await app.inject({ url: '/switchyard/health/ready', headers: podHost })
    expect(ready.statusCode).toBe(200)
    expect(ready.json()).toEqual({
      status: 'ok',
      checks: { replica: { status: 'ok' }, backend: { status: 'ok' } },
    })

    await engine.enableGlobalMaintenance({ reason: 'upgrade' })
    await engine.setGlobalRateLimit({ limit: '1/minute' })
    expect((await app.inject({ url: '/orders' })).statusCode).toBe(503)
    for (let i = 0; i < 5; i++) {
      expect((await app.inject({ url: '/switchyard/health/ready' })).statusCode).toBe(200)
      expect((await app.inject({ url: '/switchyard/health/live' })).statusCode).toBe(200)
    }
    // Not route-controlled: never registered as routes of the app.
    const listed = engine.registeredRoutes().map((slot) => slot.state.route)
    expect(listed).toContain('GET:/orders')
    expect(listed.filter((route) => route.includes('health'))).toEqual([])
  })

  it('are not subject to the login throttle', async () => {
    const { app } = await appWith()
    // Many probes from one address never lock anything.
    for (let i = 0; i < 30; i++)
      expect((await app.inject({ url: '/switchyard/health/ready' })).statusCode).toBe(200)
  })

  it('answers 503 with a failing backend check when Redis cannot be reached, nothing secret', async () => {
    const app = Fastify({ logger: quiet })
    apps.push(app)
    const engine = createEngine({
      store: redisStore({
        url: 'redis://user:hunter2-secret@127.0.0.1:1',
        prefix: 'sy-test:health-down:',
      }),
    })
    await app.register(switchyard, { engine, admin: { auth: ADMIN } })
    await app.ready()
    const ready = await app.inject({ url: '/switchyard/health/ready' })
    expect(ready.statusCode).toBe(503)
    const body = ready.json<ReadyBody>()
    expect(body.status).toBe('unavailable')
    expect(body.checks.backend?.status).toBe('failing')
    expect(body.checks.replica?.status).toBe('failing')
    expect(ready.body).not.toContain('hunter2')
    expect(ready.body).not.toContain('127.0.0.1')
    expect(ready.body).not.toMatch(/\n\s+at /)
    // Liveness is about the process, not its backend.
    expect((await app.inject({ url: '/switchyard/health/live' })).statusCode).toBe(200)
  })

  it('answers 503 once the app has started closing', async () => {
    const app = Fastify({ logger: quiet })
    await app.register(switchyard, {
      engine: createEngine({ store: memoryStore() }),
      admin: { auth: ADMIN },
    })
    let url = ''
    let during: { status: number; direct: ReadyBody } | null = null
    app.addHook('preClose', async () => {
      const response = await fetch(`${url}/switchyard/health/ready`)
      during = {
        status: response.status,
        direct: (await app.switchyardReadiness.evaluate()).body,
      }
    })
    url = await app.listen({ host: '127.0.0.1', port: 0 })
    expect((await fetch(`${url}/switchyard/health/ready`)).status).toBe(200)
    await app.close()
    expect(during).toMatchObject({
      status: 503,
      direct: { status: 'unavailable', checks: { shutdown: { status: 'failing' } } },
    })
  })

  it('serves the routes at the `health` path without the admin app, refuses bad values', async () => {
    const { app } = await appWith({ admin: undefined, health: { path: '/ops/' } })
    expect((await app.inject({ url: '/ops/health/live' })).json()).toEqual({ status: 'ok' })
    expect((await app.inject({ url: '/switchyard/health/live' })).statusCode).toBe(404)
    const bad = [
      [{ admin: undefined, health: { path: 'ops' } }, /Invalid health path/],
      [{ admin: undefined, health: 'yes' }, /health must be true, false or \{ path \}/],
      [{ health: { path: '/ops' } }, /served under the admin mount path/],
    ] as const
    for (const [options, message] of bad) {
      const other = Fastify({ logger: quiet })
      await expect(
        other.register(switchyard, {
          engine: createEngine({ store: memoryStore() }),
          admin: { auth: ADMIN },
          ...(options as object),
        }),
      ).rejects.toThrow(message)
      await other.close().catch(() => undefined)
    }
  })
})

describe('task admin readiness', () => {
  it('is unready before the manager starts, ready after, unready again once it shuts down', async () => {
    const manager = new TaskManager({ logger: quietLogger })
    // Before the app is ready (inject would start it): the checks themselves.
    const early = await taskReadiness(manager).evaluate()
    expect(early.statusCode).toBe(503)
    expect(early.body.checks.manager?.status).toBe('failing')
    expect(early.body.checks.store).toEqual({ status: 'ok' })
    const app = Fastify({ logger: quiet })
    apps.push(app)
    await app.register(taskAdmin, { taskManager: manager, path: '/tasks', auth: ADMIN })
    await app.ready()
    const ready = await app.inject({ url: '/tasks/health/ready', headers: { host: '10.0.0.9' } })
    expect(ready.statusCode).toBe(200)
    expect(ready.json()).toEqual({
      status: 'ok',
      checks: { manager: { status: 'ok' }, store: { status: 'ok' } },
    })
    expect((await app.inject({ url: '/tasks/health/live' })).json()).toEqual({ status: 'ok' })
    await manager.shutdown()
    const after = await app.inject({ url: '/tasks/health/ready' })
    expect(after.statusCode).toBe(503)
    expect(after.json<ReadyBody>().checks.manager?.status).toBe('failing')
  })

  it('is ready with a reachable Redis store and fails its store check with an unreachable one', async () => {
    const prefix = testPrefix('health-tasks')
    const up = new TaskManager({
      logger: quietLogger,
      store: redisTaskStore({ url: 'redis://127.0.0.1:6379', prefix }),
    })
    const app = Fastify({ logger: quiet })
    apps.push(app)
    await app.register(taskAdmin, { taskManager: up, path: '/tasks', auth: ADMIN })
    await app.ready()
    const ready = await app.inject({ url: '/tasks/health/ready' })
    expect(ready.json()).toMatchObject({ status: 'ok', checks: { store: { status: 'ok' } } })
    expect(ready.statusCode).toBe(200)

    // Never started (its startup would fail): the checks report the store within the deadline.
    const down = new TaskManager({
      logger: quietLogger,
      store: redisTaskStore({
        url: 'redis://:hunter2-secret@127.0.0.1:1',
        prefix: 'sy-test:health-down:',
      }),
    })
    const failing = await taskReadiness(down).evaluate()
    expect(failing.statusCode).toBe(503)
    expect(failing.body.checks.store?.status).toBe('failing')
    expect(JSON.stringify(failing.body)).not.toMatch(/hunter2|127\.0\.0\.1/)
    await down.shutdown().catch(() => undefined)
    await up.shutdown()
    await deleteKeys(prefix)
  })
})
