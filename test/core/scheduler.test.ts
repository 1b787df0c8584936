import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { createEngine, type Engine } from '../../src/create-engine.js'
import { RouteRegistry } from '../../src/core/registry.js'
import { Replica } from '../../src/core/replica.js'
import { TransitionScheduler } from '../../src/core/scheduler.js'
import { fileStore } from '../../src/stores/file.js'
import { memoryStore } from '../../src/stores/memory.js'
import { redisStore } from '../../src/stores/redis.js'
import type { Store } from '../../src/stores/types.js'
import { FakeClock } from '../helpers/clock.js'
import { until } from '../helpers/wait.js'
import { deleteKeys, redisTestsEnabled, TEST_REDIS_URL, testPrefix } from '../helpers/redis.js'

const HOUR = 60 * 60 * 1000
const engines: Engine[] = []
afterEach(async () => {
  await Promise.all(engines.splice(0).map((engine) => engine.close()))
})

async function engineOn(store: Store, clock: FakeClock): Promise<Engine> {
  const engine = createEngine({ store, clock, service: 'shop' })
  engines.push(engine)
  engine.registerRoute('GET', '/payments')
  await engine.start()
  return engine
}

const actions = async (engine: Engine) =>
  (await engine.getAuditLog()).items.map(
    (e) => `${e.action} ${e.previous_status}>${e.new_status} ${e.actor}/${e.platform}`,
  )

describe('scheduler with a fake clock', () => {
  it('audits a scheduled window start once and persists its end as ACTIVE', async () => {
    const clock = new FakeClock()
    const store = memoryStore()
    const engine = await engineOn(store, clock)
    await engine.schedule('GET:/payments', {
      start: clock.iso(HOUR),
      end: clock.iso(2 * HOUR),
      reason: 'db',
    })
    expect(await engine.runDue()).toBe(0)
    clock.advance(HOUR)
    expect(engine.getState('GET:/payments')[0]!.status).toBe('maintenance')
    expect(await engine.runDue()).toBe(1)
    expect(await engine.runDue()).toBe(0)
    clock.advance(HOUR)
    expect(await engine.runDue()).toBe(1)
    const [stored] = await store.routes.list()
    expect(stored).toMatchObject({
      status: 'active',
      window: null,
      since: clock.iso().replace('Z', '+00:00'),
    })
    expect(await actions(engine)).toEqual([
      'enable maintenance>active system/scheduler',
      'maintenance_on active>maintenance system/scheduler',
      'maintenance_scheduled active>active system/',
    ])
    expect((await engine.getAuditLog()).items[0]!.reason).toBe('maintenance window ended')
  })

  it('re-enables a route disabled until a deadline', async () => {
    const clock = new FakeClock()
    const store = memoryStore()
    const engine = await engineOn(store, clock)
    await engine.disable('GET:/payments', { until: clock.iso(HOUR) })
    await engine.runDue() // the wake-up the change asked for, out of the way
    clock.advance(HOUR - 1)
    expect(await engine.runDue()).toBe(0)
    clock.advance(1)
    expect(await engine.runDue()).toBe(1)
    expect((await store.routes.list())[0]).toMatchObject({ status: 'active', until: null })
    expect(await actions(engine)).toEqual([
      'enable disabled>active system/scheduler',
      'disable active>disabled system/',
    ])
  })

  it('records no start for a window that began at once, only its end', async () => {
    const clock = new FakeClock()
    const engine = await engineOn(memoryStore(), clock)
    await engine.setMaintenance('GET:/payments', { end: clock.iso(HOUR) })
    clock.advance(HOUR)
    expect(await engine.runDue()).toBe(1)
    expect(await actions(engine)).toEqual([
      'enable maintenance>active system/scheduler',
      'maintenance_on active>maintenance system/',
    ])
  })

  it('does nothing for a cancelled window or a deadline overtaken by a newer change', async () => {
    const clock = new FakeClock()
    const engine = await engineOn(memoryStore(), clock)
    await engine.schedule('GET:/payments', { start: clock.iso(HOUR), end: clock.iso(2 * HOUR) })
    await engine.cancelSchedule('GET:/payments')
    clock.advance(3 * HOUR)
    expect(await engine.runDue()).toBe(0)
    await engine.disable('GET:/payments', { until: clock.iso(HOUR) })
    await engine.disable('GET:/payments', { reason: 'for good' })
    clock.advance(2 * HOUR)
    expect(await engine.runDue()).toBe(0)
    expect(engine.getState('GET:/payments')[0]!.status).toBe('disabled')
  })

  it('plans its next check from the soonest start, end or deadline', async () => {
    const clock = new FakeClock()
    const engine = await engineOn(memoryStore(), clock)
    engine.registerRoute('GET', '/orders')
    expect(engine.nextDue()).toBeNull()
    await engine.schedule('GET:/payments', { start: clock.iso(2 * HOUR), end: clock.iso(3 * HOUR) })
    await engine.disable('GET:/orders', { until: clock.iso(HOUR) })
    expect(engine.nextDue()).toBe(clock.time + HOUR)
  })
})

describe('scheduler planning', () => {
  it('a deadline that passes while a tick runs is due at once, not at the safety-net wake-up', async () => {
    const clock = new FakeClock()
    const store = memoryStore()
    const engine = await engineOn(store, clock)
    await engine.disable('GET:/payments', { until: clock.iso(HOUR) })
    await engine.close()
    // The scheduler on its own, over a replica of the same store, so its plan can be read.
    const replica = new Replica(new RouteRegistry('dev'))
    replica.load(await store.changes.snapshot())
    const scheduler = new TransitionScheduler({
      replica,
      routes: store.routes,
      claims: store.claims,
      clock,
      report: () => undefined,
      logger: { error: () => undefined },
    })
    scheduler.start()
    await scheduler.tick() // the first tick start() asked for, out of the way
    clock.advance(HOUR - 1)
    // The tick reads the clock 1 ms before the deadline; by the time it plans, it has passed
    // (a timer may fire a millisecond before the clock shows the deadline).
    const read = clock.now.bind(clock)
    let reads = 0
    clock.now = () => {
      const time = read()
      if (++reads === 1) clock.advance(1)
      return time
    }
    expect(await scheduler.tick()).toBe(0)
    expect(scheduler.plannedAt).toBe(clock.time)
    clock.now = read
    expect(await scheduler.tick()).toBe(1)
    expect((await store.routes.list())[0]).toMatchObject({ status: 'active', until: null })
    scheduler.stop()
  })
})

describe('scheduler across a restart (file store)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-scheduler-'))
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  it('applies a window that ended while the process was down, once', async () => {
    const path = join(dir, 'state.json')
    const clock = new FakeClock()
    const first = await engineOn(fileStore({ path }), clock)
    await first.setMaintenance('GET:/payments', {
      start: clock.iso(HOUR),
      end: clock.iso(2 * HOUR),
    })
    await first.close()
    engines.splice(engines.indexOf(first), 1)
    clock.advance(3 * HOUR)
    const second = await engineOn(fileStore({ path }), clock)
    // The expired window is ignored at once, before the scheduler catches up.
    expect(second.getState('GET:/payments')[0]!.status).toBe('active')
    await second.runDue()
    expect(await actions(second)).toEqual([
      'enable maintenance>active system/scheduler',
      'maintenance_on active>active system/', // the command stored a future window
    ])
  })
})

const redisEnabled = await redisTestsEnabled('test/core/scheduler.test.ts')

describe.skipIf(!redisEnabled)('scheduler with several instances sharing Redis', () => {
  const prefix = testPrefix('scheduler')
  afterAll(() => deleteKeys(prefix))

  it('applies each transition once, whatever the number of instances', async () => {
    const clock = new FakeClock()
    const instances = await Promise.all(
      [1, 2, 3].map(() => engineOn(redisStore({ url: TEST_REDIS_URL, prefix }), clock)),
    )
    const [a, b, c] = instances as [Engine, Engine, Engine]
    await a.schedule('GET:/payments', { start: clock.iso(HOUR), end: clock.iso(2 * HOUR) })
    await b.disable('GET:/payments', { until: clock.iso(3 * HOUR) })
    await a.schedule('GET:/payments', { start: clock.iso(HOUR), end: clock.iso(2 * HOUR) })
    // Every instance has the last change (the window; the disable in between had none).
    await until(() =>
      instances.every((engine) => engine.getState('GET:/payments')[0]?.window !== null),
    )
    clock.advance(HOUR)
    await Promise.all(instances.map((engine) => engine.runDue()))
    clock.advance(HOUR)
    await Promise.all(instances.map((engine) => engine.runDue()))
    await Promise.all(instances.map((engine) => engine.audit.flush()))
    const log = await c.getAuditLog()
    expect(log.items.map((e) => e.action)).toEqual([
      'enable',
      'maintenance_on',
      'maintenance_scheduled',
      'disable',
      'maintenance_scheduled',
    ])
    // The stored ACTIVE (window cleared) reached every instance.
    await until(() =>
      instances.every((engine) => engine.getState('GET:/payments')[0]?.window === null),
    )
  })
})

describe('scheduler in real time', () => {
  it('re-enables a route at its deadline without being asked', async () => {
    const store = memoryStore()
    const engine = createEngine({ store, service: 'shop' })
    engines.push(engine)
    engine.registerRoute('GET', '/payments')
    await engine.start()
    await engine.disable('GET:/payments', { until: new Date(Date.now() + 200) })
    // The deadline passes by itself; the scheduler then stores ACTIVE (clearing `until`).
    await until(() => engine.getState('GET:/payments')[0]?.until === null, 5000)
    expect((await engine.getAuditLog()).items[0]).toMatchObject({
      action: 'enable',
      actor: 'system',
      platform: 'scheduler',
    })
  })
})
