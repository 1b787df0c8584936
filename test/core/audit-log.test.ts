import { describe, expect, it } from 'vitest'
import { createEngine } from '../../src/create-engine.js'
import type { ChangeEvent } from '../../src/core/events.js'
import { ValidationError } from '../../src/core/errors.js'
import { memoryStore } from '../../src/stores/memory.js'
import { FakeClock } from '../helpers/clock.js'
import { pushMessage } from '../helpers/logger.js'

async function setup(options: { maxAuditEntries?: number } = {}) {
  const clock = new FakeClock()
  const store = memoryStore()
  const engine = createEngine({ store, clock, service: 'shop', ...options })
  engine.registerRoute('GET', '/payments')
  engine.registerRoute('POST', '/payments')
  engine.registerRoute('GET', '/orders')
  engine.registerRoute('GET', '/health', { kind: 'force_active' })
  await engine.start()
  return { clock, store, engine }
}

describe('audit log', () => {
  it('records one entry per route change with who, when, and the statuses', async () => {
    const { engine, clock } = await setup()
    await engine.disable('GET:/payments', { reason: 'fraud', actor: 'alice', platform: 'cli' })
    clock.advance(1000)
    await engine.enable('GET:/payments')
    const page = await engine.getAuditLog()
    expect(page).toMatchObject({ total: 2, page: 1, per_page: 20 })
    expect(page.items[0]).toMatchObject({
      route: 'GET:/payments',
      service: 'shop',
      action: 'enable',
      actor: 'system',
      platform: '',
      previous_status: 'disabled',
      new_status: 'active',
      timestamp: '2026-11-21T12:00:01.000+00:00',
    })
    expect(page.items[1]).toMatchObject({
      action: 'disable',
      actor: 'alice',
      platform: 'cli',
      reason: 'fraud',
      previous_status: 'active',
      new_status: 'disabled',
      timestamp: '2026-11-21T12:00:00.000+00:00',
    })
    expect(page.items[0]!.id).toMatch(/^[0-9a-f-]{36}$/)
    expect(page.items[0]!.id).not.toBe(page.items[1]!.id)
  })

  it('records a bare-path change once per method', async () => {
    const { engine } = await setup()
    await engine.setMaintenance('/payments', { reason: 'db' })
    const page = await engine.getAuditLog()
    expect(page.items.map((e) => [e.route, e.action])).toEqual([
      ['POST:/payments', 'maintenance_on'],
      ['GET:/payments', 'maintenance_on'],
    ])
  })

  it('labels global and service maintenance entries', async () => {
    const { engine } = await setup()
    await engine.enableGlobalMaintenance({ reason: 'upgrade' })
    await engine.addGlobalExemption('/health')
    await engine.enableServiceMaintenance('billing')
    await engine.disableGlobalMaintenance()
    const { items } = await engine.getAuditLog()
    expect(items.map((e) => [e.route, e.action, e.previous_status, e.new_status])).toEqual([
      ['[Global Maintenance]', 'global_maintenance_off', 'on', 'off'],
      ['[billing Maintenance]', 'service_maintenance_on', 'off', 'on'],
      ['[Global Maintenance]', 'global_maintenance_exempt_add', 'on', 'on'],
      ['[Global Maintenance]', 'global_maintenance_on', 'off', 'on'],
    ])
  })

  it('filters by route, bare path, label and service, and pages', async () => {
    const { engine } = await setup()
    await engine.disable('GET:/payments')
    await engine.disable('POST:/payments')
    await engine.disable('GET:/orders')
    await engine.enableGlobalMaintenance()
    const routes = async (query: Parameters<typeof engine.getAuditLog>[0]) =>
      (await engine.getAuditLog(query)).items.map((e) => e.route)
    expect(await routes({ route: 'GET:/payments' })).toEqual(['GET:/payments'])
    expect(await routes({ route: '/payments' })).toEqual(['POST:/payments', 'GET:/payments'])
    expect(await routes({ route: '[Global Maintenance]' })).toEqual(['[Global Maintenance]'])
    expect(await routes({ service: 'shop' })).toEqual([
      'GET:/orders',
      'POST:/payments',
      'GET:/payments',
    ])
    const second = await engine.getAuditLog({ page: 2, perPage: 3 })
    expect(second).toMatchObject({ total: 4, page: 2, per_page: 3 })
    expect(second.items.map((e) => e.route)).toEqual(['GET:/payments'])
  })

  it('keeps at most maxAuditEntries, evicting the oldest', async () => {
    const { engine } = await setup({ maxAuditEntries: 3 })
    for (const route of ['GET:/payments', 'POST:/payments', 'GET:/orders'])
      await engine.disable(route)
    await engine.enable('GET:/payments')
    const { items, total } = await engine.getAuditLog()
    expect(total).toBe(3)
    expect(items.map((e) => `${e.action} ${e.route}`)).toEqual([
      'enable GET:/payments',
      'disable GET:/orders',
      'disable POST:/payments',
    ])
  })

  it('publishes an audit change event for the admin stream', async () => {
    const { engine, store } = await setup()
    const events: ChangeEvent[] = []
    store.changes.subscribe((event) => events.push(event))
    await engine.disable('GET:/orders')
    await engine.getAuditLog() // waits for the append
    const audit = events.filter((e) => e.type === 'audit')
    expect(audit).toHaveLength(1)
    expect(audit[0]).toMatchObject({ entry: { action: 'disable', route: 'GET:/orders' } })
  })

  it('writes nothing for a rejected change', async () => {
    const { engine } = await setup()
    await expect(async () => engine.disable('GET:/health')).rejects.toThrow(/force-active/)
    await expect(async () => engine.disable('GET:/nope')).rejects.toThrow(/No route/)
    await expect(async () => engine.disable('GET:/orders', { until: 'tomorrow' })).rejects.toThrow(
      ValidationError,
    )
    expect((await engine.getAuditLog()).total).toBe(0)
  })

  it('rejects bad queries and options with clear errors', async () => {
    const { engine } = await setup()
    await expect(engine.getAuditLog({ page: 0 })).rejects.toThrow(/Invalid page 0/)
    await expect(engine.getAuditLog({ perPage: 501 })).rejects.toThrow(/per_page/)
    await expect(engine.getAuditLog({ service: 'bad name!' })).rejects.toThrow(/Invalid service/)
    await expect(engine.getAuditLog({ route: 42 as never })).rejects.toThrow(/route filter/)
    expect(() => createEngine({ store: memoryStore(), maxAuditEntries: 0 })).toThrow(
      /maxAuditEntries/,
    )
    expect(() => createEngine({ store: memoryStore(), retryInterval: -1 })).toThrow(/retryInterval/)
  })

  it('keeps the change when the audit store fails, and logs it', async () => {
    const errors: string[] = []
    const store = memoryStore()
    const broken = {
      ...store,
      audit: { ...store.audit, append: () => Promise.reject(new Error('disk full')) },
    }
    const engine = createEngine({
      store: broken,
      logger: { warn: () => undefined, error: pushMessage(errors) },
    })
    engine.registerRoute('GET', '/x')
    await engine.start()
    const [state] = await engine.disable('GET:/x')
    expect(state!.status).toBe('disabled')
    await engine.audit.flush()
    expect(errors).toEqual(['audit entry disable GET:/x not stored'])
    await engine.close()
  })
})
