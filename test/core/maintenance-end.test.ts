import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { createEngine, type Engine } from '../../src/create-engine.js'
import { ValidationError } from '../../src/core/errors.js'
import { fileStore } from '../../src/stores/file.js'
import { memoryStore } from '../../src/stores/memory.js'
import { redisStore } from '../../src/stores/redis.js'
import type { Store } from '../../src/stores/types.js'
import { FakeClock } from '../helpers/clock.js'
import { deleteKeys, redisTestsEnabled, TEST_REDIS_URL, testPrefix } from '../helpers/redis.js'
import { until } from '../helpers/wait.js'

const MINUTE = 60_000
const engines: Engine[] = []
afterEach(async () => {
  await Promise.all(engines.splice(0).map((engine) => engine.close()))
})

async function engineOn(store: Store, clock?: FakeClock): Promise<Engine> {
  const engine = createEngine({ store, service: 'shop', ...(clock ? { clock } : {}) })
  engines.push(engine)
  engine.registerRoute('GET', '/payments')
  engine.registerRoute('GET', '/invoices', null, { service: 'billing' })
  await engine.start()
  return engine
}

const request = (path: string) => ({ method: 'GET', url: path, headers: {}, ip: '127.0.0.1' })

/** The billing service's `GET /invoices`, as enforcement decides it now. */
async function check(engine: Engine) {
  const slot = engine.registerRoute('GET', '/invoices', null, { service: 'billing' })
  return engine.decide(slot, request('/invoices'))
}

async function statusOf(engine: Engine): Promise<number | 'pass'> {
  const decision = await check(engine)
  return decision.action === 'block' ? decision.statusCode : 'pass'
}

const actions = async (engine: Engine) => {
  await engine.audit.flush()
  return (await engine.getAuditLog()).items.map(
    (e) => `${e.action} ${e.previous_status}>${e.new_status} ${e.actor}/${e.platform}`,
  )
}

describe.each(['global', 'service'] as const)('%s maintenance with an end time', (scope) => {
  const handle = (engine: Engine) =>
    scope === 'global' ? engine.maintenance.global : engine.maintenance.service('billing')
  const prefix = scope === 'global' ? 'global' : 'service'

  it('stores ends_at, blocks until it, then the scheduler ends it once as system/scheduler', async () => {
    const clock = new FakeClock()
    const engine = await engineOn(memoryStore(), clock)
    const config = await handle(engine).enable({
      reason: 'upgrade',
      until: new Date(clock.time + 30 * MINUTE),
    })
    expect(config).toMatchObject({ active: true, ends_at: toWire(clock.time + 30 * MINUTE) })
    expect(handle(engine).get().ends_at).toBe(config.ends_at)
    expect(engine.nextDue()).toBe(clock.time + 30 * MINUTE)
    const blocked = await check(engine)
    expect(blocked).toMatchObject({ action: 'block', statusCode: 503 })
    expect(blocked.action === 'block' && blocked.headers).toEqual([['retry-after', '1800']])

    clock.advance(30 * MINUTE - 1)
    expect(await engine.runDue()).toBe(0)
    expect(await statusOf(engine)).toBe(503)
    clock.advance(1)
    // Enforcement stops at the instant, before the scheduler stores anything.
    expect(await statusOf(engine)).toBe('pass')
    expect(await engine.runDue()).toBe(1)
    expect(await engine.runDue()).toBe(0)
    expect(handle(engine).get()).toEqual({
      active: false,
      reason: 'upgrade',
      include_force_active: false,
      exempt_paths: [],
    })
    expect(await actions(engine)).toEqual([
      `${prefix}_maintenance_off on>off system/scheduler`,
      `${prefix}_maintenance_on off>on system/`,
    ])
  })

  it('rejects an end time in the past or unreadable and changes nothing', async () => {
    const clock = new FakeClock()
    const engine = await engineOn(memoryStore(), clock)
    for (const bad of [new Date(clock.time), clock.iso(-MINUTE), 'tomorrow', 42]) {
      await expect(
        handle(engine).enable({ reason: 'x', until: bad as unknown as Date }),
      ).rejects.toBeInstanceOf(ValidationError)
    }
    expect(handle(engine).get().active).toBe(false)
    expect(await actions(engine)).toEqual([])
  })

  it('an end overtaken by a newer enable or a manual disable does nothing', async () => {
    const clock = new FakeClock()
    const engine = await engineOn(memoryStore(), clock)
    await handle(engine).enable({ until: new Date(clock.time + MINUTE) })
    await handle(engine).enable({ reason: 'open-ended' }) // replaces the end time
    expect(handle(engine).get().ends_at).toBeUndefined()
    clock.advance(2 * MINUTE)
    expect(await engine.runDue()).toBe(0)
    expect(handle(engine).get().active).toBe(true)
    await handle(engine).enable({ until: new Date(clock.time + MINUTE) })
    await handle(engine).disable()
    clock.advance(2 * MINUTE)
    expect(await engine.runDue()).toBe(0)
    expect(handle(engine).get()).not.toHaveProperty('ends_at')
  })

  it('keeps the end time when exemptions change', async () => {
    const clock = new FakeClock()
    const engine = await engineOn(memoryStore(), clock)
    const { ends_at } = await handle(engine).enable({ until: clock.iso(MINUTE) })
    await handle(engine).addExemption('/status')
    expect(handle(engine).get()).toMatchObject({ ends_at, exempt_paths: ['/status'] })
  })
})

describe('maintenance end time in the stores', () => {
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-maintenance-end-'))
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  it('survives a restart on the file store, and an end passed while down is applied once', async () => {
    const path = join(dir, 'state.json')
    const clock = new FakeClock()
    const first = await engineOn(fileStore({ path }), clock)
    const { ends_at } = await first.maintenance.service('billing').enable({
      until: clock.iso(MINUTE),
    })
    await first.close()
    engines.splice(engines.indexOf(first), 1)
    const second = await engineOn(fileStore({ path }), clock)
    expect(second.maintenance.service('billing').get().ends_at).toBe(ends_at)
    await second.close()
    engines.splice(engines.indexOf(second), 1)
    clock.advance(2 * MINUTE)
    const third = await engineOn(fileStore({ path }), clock)
    expect(await statusOf(third)).toBe('pass')
    await third.runDue()
    expect(third.maintenance.service('billing').get().active).toBe(false)
    expect((await actions(third))[0]).toBe('service_maintenance_off on>off system/scheduler')
  })
})

const redisEnabled = await redisTestsEnabled('test/core/maintenance-end.test.ts')

describe.skipIf(!redisEnabled)('maintenance end time with several instances on Redis', () => {
  const prefix = testPrefix('maintenance-end')
  afterAll(() => deleteKeys(prefix))

  it('is stored, reaches every instance, and is ended once', async () => {
    const clock = new FakeClock()
    const instances = await Promise.all(
      [1, 2, 3].map(() => engineOn(redisStore({ url: TEST_REDIS_URL, prefix }), clock)),
    )
    const [a, , c] = instances as [Engine, Engine, Engine]
    const { ends_at } = await a.maintenance.global.enable({ until: clock.iso(MINUTE) })
    await until(() => instances.every((e) => e.maintenance.global.get().ends_at === ends_at))
    clock.advance(MINUTE)
    await Promise.all(instances.map((engine) => engine.runDue()))
    await until(() => instances.every((e) => !e.maintenance.global.get().active))
    await Promise.all(instances.map((engine) => engine.audit.flush()))
    expect((await c.getAuditLog()).items.map((e) => `${e.action} ${e.actor}`)).toEqual([
      'global_maintenance_off system',
      'global_maintenance_on system',
    ])
  })
})

describe('maintenance end time in real time', () => {
  it('ends service maintenance at its end time without being asked', async () => {
    const engine = await engineOn(memoryStore())
    await engine.maintenance.service('billing').enable({ until: new Date(Date.now() + 200) })
    await until(() => !engine.maintenance.service('billing').get().active, 5000)
    expect((await engine.getAuditLog()).items[0]).toMatchObject({
      action: 'service_maintenance_off',
      actor: 'system',
      platform: 'scheduler',
    })
  })
})

function toWire(ms: number): string {
  return new Date(ms).toISOString().replace('Z', '+00:00')
}
