import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Fastify, { type FastifyInstance } from 'fastify'
import { afterEach, describe, expect, it } from 'vitest'
import { ConfigError, createEngine } from '../../src/index.js'
import {
  disabled,
  envOnly,
  maintenance,
  rateLimit,
  switchyard,
  type SwitchyardPluginOptions,
} from '../../src/fastify/index.js'
import { loadPromClient } from '../../src/metrics/loader.js'
import { createMetrics } from '../../src/metrics/registry.js'
import { TaskManager } from '../../src/tasks/index.js'
import { memoryStore } from '../../src/stores/memory.js'
import { booleanFlag } from '../flags/helpers.js'
import {
  deferred,
  fakeClock,
  fakeTimer,
  quietLogger,
  SCHEDULE_START,
  until,
  waitForStatus,
} from '../tasks/helpers.js'

const apps: FastifyInstance[] = []
const managers: TaskManager[] = []
const dirs: string[] = []

afterEach(async () => {
  for (const app of apps.splice(0)) await app.close()
  for (const manager of managers.splice(0)) await manager.shutdown()
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})

const AUTH = { username: 'admin', password: 's3cret-password' }

async function protectedApp(options: Partial<SwitchyardPluginOptions> = {}) {
  const engine = createEngine({ store: 'memory', env: 'production' })
  const app = Fastify({ logger: false })
  apps.push(app)
  await app.register(switchyard, { engine, metrics: { public: true }, ...options })
  app.get('/maintained/:id', { onRequest: maintenance({ reason: 'migration' }) }, () => 'ok')
  app.get('/off', { onRequest: disabled({ reason: 'gone' }) }, () => 'ok')
  app.get('/staging', { onRequest: envOnly('staging') }, () => 'ok')
  app.get('/limited', { onRequest: rateLimit({ limit: '1/minute' }) }, () => 'ok')
  app.post('/open', () => 'ok')
  await app.ready()
  return { app, engine }
}

/** The value of one series in Prometheus text, or undefined when it is absent. */
function sample(
  text: string,
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue
    const match = /^([a-z_]+)(?:\{(.*)\})? (\S+)$/.exec(line)
    if (match === null || match[1] !== name) continue
    const found = new Map(
      [...(match[2] ?? '').matchAll(/([a-z_]+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]),
    )
    if (Object.entries(labels).every(([key, value]) => found.get(key) === value))
      return Number(match[3])
  }
  return undefined
}

const seriesOf = (text: string, name: string) =>
  text.split('\n').filter((line) => line.startsWith(`${name}{`) || line.startsWith(`${name} `))

async function scrape(app: FastifyInstance, url = '/metrics', headers = {}): Promise<string> {
  const response = await app.inject({ url, headers })
  expect(response.statusCode).toBe(200)
  expect(response.headers['content-type']).toContain('text/plain')
  return response.body
}

describe('route-control metrics', () => {
  it('counts blocked requests by route pattern and reason', async () => {
    const { app } = await protectedApp()
    await app.inject('/maintained/1')
    await app.inject('/maintained/2')
    await app.inject('/off')
    await app.inject('/staging')
    await app.inject('/limited')
    await app.inject('/limited')
    await app.inject({ method: 'POST', url: '/open' })
    const text = await scrape(app)
    const blocked = (route: string, reason: string) =>
      sample(text, 'switchyard_requests_blocked_total', {
        method: 'GET',
        route,
        service: 'default',
        reason,
      })
    expect(blocked('/maintained/:id', 'maintenance')).toBe(2)
    expect(blocked('/off', 'disabled')).toBe(1)
    expect(blocked('/staging', 'env_gated')).toBe(1)
    expect(blocked('/limited', 'rate_limited')).toBe(1)
    // Passing requests and raw URLs make no series.
    expect(seriesOf(text, 'switchyard_requests_blocked_total')).toHaveLength(4)
    expect(text).not.toContain('/maintained/1')
  })

  it('keeps the blocked counts cumulative from one scrape to the next', async () => {
    const { app } = await protectedApp()
    const blocked = (text: string) =>
      sample(text, 'switchyard_requests_blocked_total', {
        method: 'GET',
        route: '/off',
        service: 'default',
        reason: 'disabled',
      })
    await app.inject('/off')
    expect(blocked(await scrape(app))).toBe(1)
    // A scrape with nothing new blocked reads the same total, not 0 and not twice.
    expect(blocked(await scrape(app))).toBe(1)
    await app.inject('/off')
    await app.inject('/off')
    expect(blocked(await scrape(app))).toBe(3)
  })

  it('reports one route_state series per route, following runtime changes', async () => {
    const { app, engine } = await protectedApp()
    let text = await scrape(app)
    expect(
      sample(text, 'switchyard_route_state', { method: 'GET', route: '/off', status: 'disabled' }),
    ).toBe(1)
    expect(
      sample(text, 'switchyard_route_state', { method: 'POST', route: '/open', status: 'active' }),
    ).toBe(1)
    const routes = engine.registeredRoutes().length
    expect(seriesOf(text, 'switchyard_route_state')).toHaveLength(routes)
    await engine.enable('GET:/off')
    text = await scrape(app)
    expect(
      sample(text, 'switchyard_route_state', { method: 'GET', route: '/off', status: 'active' }),
    ).toBe(1)
    expect(
      sample(text, 'switchyard_route_state', { method: 'GET', route: '/off', status: 'disabled' }),
    ).toBeUndefined()
    expect(seriesOf(text, 'switchyard_route_state')).toHaveLength(routes)
    expect(sample(text, 'switchyard_backend_up')).toBe(1)
  })

  it('drops the series of a route that is no longer registered', async () => {
    const { app, engine } = await protectedApp()
    engine.registerRoute('GET', '/remote', null, { service: 'billing' })
    let text = await scrape(app)
    const remote = { route: '/remote', service: 'billing', status: 'active' }
    expect(sample(text, 'switchyard_route_state', remote)).toBe(1)
    engine.unregisterRoute('GET', '/remote', { service: 'billing' })
    text = await scrape(app)
    expect(sample(text, 'switchyard_route_state', remote)).toBeUndefined()
    // Registered again (a new slot with the same labels): one series again.
    engine.registerRoute('GET', '/remote', null, { service: 'billing' })
    text = await scrape(app)
    expect(
      seriesOf(text, 'switchyard_route_state').filter((l) => l.includes('/remote')),
    ).toHaveLength(1)
  })

  it('unknown URLs add no series', async () => {
    const { app } = await protectedApp()
    const before = (await scrape(app)).split('\n').length
    for (let i = 0; i < 20; i++) await app.inject(`/invented-${i}`)
    const text = await scrape(app)
    expect(text.split('\n').length).toBe(before)
    expect(text).not.toContain('invented')
  })

  it('the metrics endpoint itself is not route-controlled', async () => {
    const { app, engine } = await protectedApp()
    await engine.enableGlobalMaintenance({ reason: 'all down' })
    expect((await app.inject({ method: 'POST', url: '/open' })).statusCode).toBe(503)
    expect((await app.inject('/metrics')).statusCode).toBe(200)
  })
})

describe('flag and store metrics', () => {
  it('counts flag evaluations; invented keys share one series', async () => {
    const { app, engine } = await protectedApp()
    await engine.saveFlag(booleanFlag('beta'))
    engine.flags.evaluate('beta', { key: 'u1' })
    engine.flags.evaluate('beta', { key: 'u2' })
    for (let i = 0; i < 50; i++) engine.flags.evaluate(`invented-${i}`, { key: 'u1' })
    const text = await scrape(app)
    const beta = seriesOf(text, 'switchyard_flag_evaluations_total').filter((line) =>
      line.includes('flag="beta"'),
    )
    expect(beta).toHaveLength(1)
    expect(Number(beta[0]?.split(' ').at(-1))).toBe(2)
    expect(
      sample(text, 'switchyard_flag_evaluations_total', {
        flag: '__unknown__',
        variant: '__none__',
      }),
    ).toBe(50)
    expect(seriesOf(text, 'switchyard_flag_evaluations_total')).toHaveLength(2)
    expect(text).not.toContain('invented')
  })

  it('reports an unreachable store and counts its failed loads', async () => {
    let failing = true
    const base = memoryStore()
    const store = {
      ...base,
      connect: () => (failing ? Promise.reject(new Error('connection refused')) : base.connect()),
    }
    const engine = createEngine({ store, retryInterval: 0.01, logger: quietLogger })
    const app = Fastify({ logger: false })
    apps.push(app)
    await app.register(switchyard, { engine, metrics: { public: true } })
    await app.ready()
    let text = await scrape(app)
    expect(sample(text, 'switchyard_backend_up')).toBe(0)
    expect(sample(text, 'switchyard_backend_errors_total', { operation: 'load' })).toBeGreaterThan(
      0,
    )
    failing = false
    await until(async () => {
      text = await scrape(app)
      return sample(text, 'switchyard_backend_up') === 1
    })
  })
})

describe('the endpoint', () => {
  it('needs a viewer of the admin app unless public', async () => {
    const { app } = await protectedApp({ metrics: {}, admin: { auth: AUTH } })
    expect((await app.inject('/metrics')).statusCode).toBe(404)
    const denied = await app.inject('/switchyard/metrics')
    expect(denied.statusCode).toBe(401)
    const login = await app.inject({
      method: 'POST',
      url: '/switchyard/api/auth/login',
      payload: AUTH,
    })
    expect(login.statusCode).toBe(200)
    const { token } = login.json<{ token: string }>()
    const text = await scrape(app, '/switchyard/metrics', { authorization: `Bearer ${token}` })
    expect(text).toContain('switchyard_route_state')
  })

  it('serves anyone at its path with public: true, beside a protected admin', async () => {
    const { app } = await protectedApp({
      metrics: { public: true, path: '/ops/metrics' },
      admin: { auth: AUTH },
    })
    await scrape(app, '/ops/metrics')
    expect((await app.inject('/switchyard/metrics')).statusCode).toBe(401)
  })

  it('refuses a protected endpoint without the admin app, and bad options', async () => {
    const attempt = async (metrics: unknown) => {
      const app = Fastify({ logger: false })
      apps.push(app)
      await app.register(switchyard, {
        engine: createEngine({ store: 'memory' }),
        metrics: metrics as SwitchyardPluginOptions['metrics'],
      })
      await app.ready()
    }
    await expect(attempt({})).rejects.toThrow(/admin.*public: true/s)
    await expect(attempt({ public: 'yes' })).rejects.toThrow(ConfigError)
    await expect(attempt({ public: true, path: 'metrics' })).rejects.toThrow(/Invalid metrics path/)
    await expect(attempt({ public: true, bogus: 1 })).rejects.toThrow(/Unknown metrics option/)
    await expect(attempt({ public: true, taskManager: {} })).rejects.toThrow(/TaskManager/)
  })

  it('explains a missing prom-client', async () => {
    const missing = () => Promise.reject(new Error("Cannot find package 'prom-client'"))
    await expect(loadPromClient(missing)).rejects.toThrow(ConfigError)
    await expect(loadPromClient(missing)).rejects.toThrow(/npm install prom-client/)
    await expect(
      createMetrics({ engine: createEngine({ store: 'memory' }), load: missing }),
    ).rejects.toThrow(/npm install prom-client/)
    await expect(loadPromClient(() => Promise.resolve({}))).rejects.toThrow(/prom-client/)
  })
})

describe('task metrics', () => {
  for (const store of ['memory', 'sqlite'] as const) {
    it(`counts tasks and reads the queue gauges (${store} store)`, async () => {
      let path: string | undefined
      if (store === 'sqlite') {
        const dir = mkdtempSync(join(tmpdir(), 'switchyard-metrics-'))
        dirs.push(dir)
        path = join(dir, 'tasks.db')
      }
      const manager = new TaskManager({
        logger: quietLogger,
        queues: { emails: { concurrency: 1 } },
        ...(path === undefined ? {} : { store: path }),
      })
      managers.push(manager)
      const gate = deferred()
      const send = manager.task({ queue: 'emails', persist: true }, async function send() {
        await gate.promise
      })
      const fail = manager.task({ persist: true }, function boom() {
        throw new Error('boom')
      })
      await manager.startup()
      const { app } = await protectedApp({ metrics: { public: true, taskManager: manager } })
      const failed = await manager.addTask(fail, [])
      await waitForStatus(manager, failed)
      const ids = [
        await manager.addTask(send, []),
        await manager.addTask(send, []),
        await manager.addTask(send, []),
      ]
      await until(() => manager.localTask(ids[0] ?? '')?.status === 'running')
      let text = await scrape(app)
      expect(sample(text, 'switchyard_tasks_running', { queue: 'emails' })).toBe(1)
      expect(sample(text, 'switchyard_tasks_waiting', { queue: 'emails' })).toBe(2)
      expect(sample(text, 'switchyard_tasks_enqueued_total', { function: 'send' })).toBe(3)
      expect(
        sample(text, 'switchyard_tasks_finished_total', { function: 'boom', status: 'failed' }),
      ).toBe(1)
      gate.resolve()
      for (const id of ids) await waitForStatus(manager, id)
      // The live counts are read at most once a second.
      await until(async () => {
        text = await scrape(app)
        // A configured queue that emptied reads 0 rather than losing its series.
        return sample(text, 'switchyard_tasks_running', { queue: 'emails' }) === 0
      }, 5000)
      const finished = { function: 'send', queue: 'emails', status: 'success' }
      expect(sample(text, 'switchyard_tasks_finished_total', finished)).toBe(3)
      expect(sample(text, 'switchyard_task_duration_seconds_count', finished)).toBe(3)
      expect(sample(text, 'switchyard_tasks_waiting', { queue: 'emails' })).toBe(0)
    })
  }

  it('reports how late each schedule enqueued its last slot, and no series before one fired', async () => {
    const clock = fakeClock(SCHEDULE_START)
    const timer = fakeTimer()
    const manager = new TaskManager({ clock, timer, logger: quietLogger })
    managers.push(manager)
    manager.schedule({ every: 2 }, () => undefined, { name: 'heartbeat' })
    manager.schedule({ every: 60 }, () => undefined, { name: 'hourly-report' })
    await manager.startup()
    const { app } = await protectedApp({ metrics: { public: true, taskManager: manager } })
    let text = await scrape(app)
    expect(seriesOf(text, 'switchyard_schedule_lag_seconds')).toEqual([])
    // The tick comes 2.5 s after the slot due at +2 s: that slot is enqueued half a second late.
    clock.advance(2500)
    timer.fire()
    await until(() => manager.listSchedules()[0]?.last_lag_seconds !== null)
    text = await scrape(app)
    expect(sample(text, 'switchyard_schedule_lag_seconds', { schedule: 'heartbeat' })).toBe(0.5)
    expect(seriesOf(text, 'switchyard_schedule_lag_seconds')).toHaveLength(1)
  })
})

describe('task expiry metrics', () => {
  it('counts a task that expired before it started as finished with status expired', async () => {
    const manager = new TaskManager({ logger: quietLogger })
    managers.push(manager)
    let calls = 0
    const job = manager.task({ name: 'late' }, () => {
      calls++
    })
    const { app } = await protectedApp({ metrics: { public: true, taskManager: manager } })
    const id = await manager.addTask(job, [], { expiresAt: new Date(Date.now() - 1000) })
    expect((await waitForStatus(manager, id)).status).toBe('expired')
    const text = await scrape(app)
    const expired = { function: 'late', queue: 'default', status: 'expired' }
    expect(sample(text, 'switchyard_tasks_finished_total', expired)).toBe(1)
    // It never ran: no run time is observed.
    expect(sample(text, 'switchyard_task_duration_seconds_count', expired)).toBeUndefined()
    expect(calls).toBe(0)
  })
})
