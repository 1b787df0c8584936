import { describe, expect, it } from 'vitest'
import {
  ConfigError,
  createEngine,
  memoryStore,
  RouteNotFoundError,
  RouteProtectedError,
  ValidationError,
  type Engine,
  type Operation,
} from '../../src/index.js'
import { FakeClock } from '../helpers/clock.js'
import { pushMessage } from '../helpers/logger.js'

function setup(): { engine: Engine; clock: FakeClock; operations: Operation[] } {
  const clock = new FakeClock()
  const engine = createEngine({ store: 'memory', env: 'prod', clock })
  engine.registerRoute('GET', '/payments')
  engine.registerRoute('POST', '/payments')
  engine.registerRoute('GET', '/items/:id')
  engine.registerRoute('GET', '/health', { kind: 'force_active' })
  engine.registerRoute('GET', '/debug', { kind: 'env_only', envs: ['dev'] })
  engine.registerRoute('GET', '/other', null, { service: 'billing' })
  const operations: Operation[] = []
  engine.onOperation((op) => operations.push(op))
  return { engine, clock, operations }
}

const statuses = (engine: Engine, route: string) =>
  engine.getState(route).map((s) => `${s.route}=${s.status}`)

describe('engine configuration', () => {
  it('reads CTL_ENV and CTL_BACKEND, defaulting to dev and memory', () => {
    const saved = { env: process.env.CTL_ENV, backend: process.env.CTL_BACKEND }
    try {
      delete process.env.CTL_ENV
      delete process.env.CTL_BACKEND
      const engine = createEngine()
      expect(engine.env).toBe('dev')
      expect(engine.backend).toBe('memory')
      process.env.CTL_ENV = 'staging'
      expect(createEngine().env).toBe('staging')
      process.env.CTL_BACKEND = 'mongodb'
      expect(() => createEngine()).toThrow(ConfigError)
      expect(() => createEngine()).toThrow(/Unknown backend "mongodb" \(CTL_BACKEND\)/)
    } finally {
      if (saved.env === undefined) delete process.env.CTL_ENV
      else process.env.CTL_ENV = saved.env
      if (saved.backend === undefined) delete process.env.CTL_BACKEND
      else process.env.CTL_BACKEND = saved.backend
    }
  })

  it('rejects an invalid service name', () => {
    expect(() => createEngine({ service: 'bad name' })).toThrow(ValidationError)
  })
})

describe('route registration', () => {
  it('registers every route with its declared state and since=startup', () => {
    const { engine } = setup()
    const page = engine.listRoutes()
    expect(page.total).toBe(6)
    expect(page.items.map((s) => s.route)).toEqual([
      'GET:/debug',
      'GET:/health',
      'GET:/items/:id',
      'GET:/other',
      'GET:/payments',
      'POST:/payments',
    ])
    expect(page.items.every((s) => s.since === 'startup')).toBe(true)
    expect(engine.getState('GET:/debug')[0]).toMatchObject({ status: 'env_gated', envs: ['dev'] })
    expect(engine.getState('GET:/health')[0]).toMatchObject({
      status: 'active',
      force_active: true,
    })
  })

  it('is idempotent', () => {
    const { engine } = setup()
    const a = engine.registerRoute('GET', '/payments')
    const b = engine.registerRoute('GET', '/payments')
    expect(a).toBe(b)
  })

  it('rejects bad methods and paths', () => {
    const { engine } = setup()
    expect(() => engine.registerRoute('FETCH', '/x')).toThrow(ValidationError)
    expect(() => engine.registerRoute('GET', 'x')).toThrow(ValidationError)
  })
})

describe('route operations', () => {
  it('disables, enables and records one operation per method', async () => {
    const { engine, clock, operations } = setup()
    const states = await engine.disable('/payments', {
      reason: 'fraud',
      actor: 'ana',
      platform: 'cli',
    })
    expect(states.map((s) => `${s.route}=${s.status}`)).toEqual([
      'GET:/payments=disabled',
      'POST:/payments=disabled',
    ])
    expect(states[0]!.since).toBe(new Date(clock.time).toISOString().replace('Z', '+00:00'))
    expect(operations).toEqual([
      expect.objectContaining({
        action: 'disable',
        route: 'GET:/payments',
        actor: 'ana',
        platform: 'cli',
        previous_status: 'active',
        new_status: 'disabled',
        reason: 'fraud',
      }),
      expect.objectContaining({ action: 'disable', route: 'POST:/payments' }),
    ])
    await engine.enable('POST:/payments')
    expect(statuses(engine, '/payments')).toEqual([
      'GET:/payments=disabled',
      'POST:/payments=active',
    ])
    expect(operations.at(-1)).toMatchObject({
      action: 'enable',
      actor: 'system',
      platform: '',
      previous_status: 'disabled',
    })
  })

  it('disable --until re-enables at the deadline', async () => {
    const { engine, clock } = setup()
    const [state] = await engine.disable('GET:/payments', { until: clock.iso(60_000) })
    expect(state!.until).toBe(new Date(clock.time + 60_000).toISOString().replace('Z', '+00:00'))
    clock.advance(59_999)
    expect(statuses(engine, 'GET:/payments')).toEqual(['GET:/payments=disabled'])
    clock.advance(1)
    expect(statuses(engine, 'GET:/payments')).toEqual(['GET:/payments=active'])
  })

  it('maintenance without a window is immediate; with a future start it waits', async () => {
    const { engine, clock } = setup()
    await engine.setMaintenance('GET:/items/:id', { reason: 'reindex' })
    expect(engine.getState('GET:/items/:id')[0]).toMatchObject({
      status: 'maintenance',
      reason: 'reindex',
      window: null,
    })
    await engine.setMaintenance('GET:/payments', { start: clock.iso(1000), end: clock.iso(2000) })
    expect(statuses(engine, 'GET:/payments')).toEqual(['GET:/payments=active'])
    clock.advance(1000)
    expect(statuses(engine, 'GET:/payments')).toEqual(['GET:/payments=maintenance'])
    clock.advance(1000)
    expect(statuses(engine, 'GET:/payments')).toEqual(['GET:/payments=active'])
  })

  it('schedule keeps the route active until start; cancel is permanent', async () => {
    const { engine, clock, operations } = setup()
    const [scheduled] = await engine.schedule('GET:/payments', {
      start: clock.iso(1000),
      end: clock.iso(5000),
      reason: 'upgrade',
    })
    expect(scheduled).toMatchObject({ status: 'active', reason: 'upgrade' })
    expect(scheduled!.window).toEqual({
      start: new Date(clock.time + 1000).toISOString().replace('Z', '+00:00'),
      end: new Date(clock.time + 5000).toISOString().replace('Z', '+00:00'),
    })
    expect(operations.at(-1)).toMatchObject({
      action: 'maintenance_scheduled',
      new_status: 'active',
    })
    await engine.cancelSchedule('GET:/payments')
    expect(operations.at(-1)).toMatchObject({ action: 'schedule_cancelled' })
    clock.advance(2000)
    expect(engine.getState('GET:/payments')[0]).toMatchObject({ status: 'active', window: null })
  })

  it('refuses every change to a force-active route', async () => {
    const { engine } = setup()
    await expect(engine.disable('GET:/health')).rejects.toBeInstanceOf(RouteProtectedError)
    await expect(engine.setMaintenance('/health')).rejects.toThrow(/force-active/)
    expect(engine.getState('/health')[0]!.status).toBe('active')
  })

  it('scopes operations to a service', async () => {
    const { engine } = setup()
    await expect(engine.disable('GET:/other')).rejects.toBeInstanceOf(RouteNotFoundError)
    const [state] = await engine.disable('GET:/other', { service: 'billing' })
    expect(state).toMatchObject({ service: 'billing', status: 'disabled' })
    expect(engine.listRoutes({ service: 'billing' }).items.map((s) => s.route)).toEqual([
      'GET:/other',
    ])
    expect(engine.listServices()).toEqual(['billing', 'default'])
  })

  it('paginates listings', () => {
    const { engine } = setup()
    const page = engine.listRoutes({ page: 2, perPage: 2 })
    expect(page).toMatchObject({ total: 6, page: 2, per_page: 2 })
    expect(page.items.map((s) => s.route)).toEqual(['GET:/items/:id', 'GET:/other'])
    expect(engine.listRoutes({ service: 'default' }).total).toBe(5)
    expect(engine.listRoutes({ page: 9 }).items).toEqual([])
  })
})

describe('bad input changes nothing', () => {
  const cases: [string, (engine: Engine, clock: FakeClock) => unknown, RegExp][] = [
    ['unknown route', (e) => e.disable('GET:/nope'), /No route GET:\/nope/],
    ['malformed key', (e) => e.enable('payments'), /Invalid route key/],
    ['unknown method', (e) => e.enable('BREW:/payments'), /Unknown HTTP method/],
    [
      'until in the past',
      (e, c) => e.disable('GET:/payments', { until: c.iso(-1000) }),
      /until time must be in the future/,
    ],
    [
      'until not a date',
      (e) => e.disable('GET:/payments', { until: 'tomorrow' }),
      /Invalid until "tomorrow"/,
    ],
    [
      'end before start',
      (e, c) => e.setMaintenance('GET:/payments', { start: c.iso(5000), end: c.iso(1000) }),
      /end of a maintenance window must be after its start/,
    ],
    [
      'end in the past',
      (e, c) => e.setMaintenance('GET:/payments', { end: c.iso(-5) }),
      /end time must be in the future/,
    ],
    [
      'schedule without end',
      (e, c) => e.schedule('GET:/payments', { start: c.iso(1000) } as never),
      /needs both start and end/,
    ],
    [
      'schedule start in the past',
      (e, c) => e.schedule('GET:/payments', { start: c.iso(-1000), end: c.iso(1000) }),
      /start time must be in the future/,
    ],
    [
      'reason not a string',
      (e) => e.disable('GET:/payments', { reason: 42 as never }),
      /reason must be a string/,
    ],
    ['bad service', (e) => e.disable('GET:/payments', { service: '../x' }), /Invalid service name/],
    ['bad page', (e) => e.listRoutes({ page: 0 }), /Invalid page/],
    ['bad per_page', (e) => e.listRoutes({ perPage: 501 }), /Invalid per_page/],
    [
      'bad exemption',
      (e) => e.enableGlobalMaintenance({ exemptPaths: ['health'] }),
      /Invalid route key/,
    ],
    [
      'exemptions not a list',
      (e) => e.enableGlobalMaintenance({ exemptPaths: '/x' as never }),
      /list of/,
    ],
    [
      'bad include flag',
      (e) => e.enableServiceMaintenance('default', { includeForceActive: 'yes' as never }),
      /boolean/,
    ],
    ['bad exempt-add', (e) => e.addGlobalExemption('x'), /Invalid route key/],
    ['service maintenance without a name', (e) => e.enableServiceMaintenance(''), /service name/],
  ]

  it.each(cases)('%s', async (_name, call, message) => {
    const { engine, clock, operations } = setup()
    const before = JSON.stringify([
      engine.listRoutes({ perPage: 500 }),
      engine.getGlobalMaintenance(),
    ])
    await expect(Promise.resolve().then(() => call(engine, clock))).rejects.toThrow(message)
    expect(
      JSON.stringify([engine.listRoutes({ perPage: 500 }), engine.getGlobalMaintenance()]),
    ).toBe(before)
    expect(operations).toEqual([])
  })

  it('errors carry stable codes and the JSON error shape', async () => {
    const { engine } = setup()
    const error = await engine.disable('GET:/nope').catch((e: unknown) => e)
    expect(error).toBeInstanceOf(RouteNotFoundError)
    expect((error as RouteNotFoundError).toJSON()).toEqual({
      error: {
        code: 'ROUTE_NOT_FOUND',
        message: 'No route GET:/nope is registered in service "default".',
        route: 'GET:/nope',
        service: 'default',
      },
    })
  })
})

describe('maintenance operations', () => {
  it('global maintenance: enable, exemptions without toggling, disable', async () => {
    const { engine, operations } = setup()
    await engine.enableGlobalMaintenance({
      reason: 'upgrade',
      exemptPaths: ['get:/payments'],
      includeForceActive: true,
    })
    expect(engine.getGlobalMaintenance()).toEqual({
      active: true,
      reason: 'upgrade',
      include_force_active: true,
      exempt_paths: ['GET:/payments'],
    })
    await engine.addGlobalExemption('/items/:id')
    await engine.removeGlobalExemption('GET:/payments')
    expect(engine.getGlobalMaintenance()).toMatchObject({
      active: true,
      exempt_paths: ['/items/:id'],
    })
    await engine.disableGlobalMaintenance()
    expect(engine.getGlobalMaintenance().active).toBe(false)
    await engine.addGlobalExemption('/health')
    expect(engine.getGlobalMaintenance().active).toBe(false)
    expect(operations.map((o) => o.action)).toEqual([
      'global_maintenance_on',
      'global_maintenance_exempt_add',
      'global_maintenance_exempt_remove',
      'global_maintenance_off',
      'global_maintenance_exempt_add',
    ])
    expect(operations[0]).toMatchObject({ route: '[Global Maintenance]', service: null })
  })

  it('service maintenance is per service', async () => {
    const { engine, operations } = setup()
    await engine.enableServiceMaintenance('billing', { reason: 'ledger' })
    expect(engine.getServiceMaintenance('billing')).toMatchObject({
      active: true,
      reason: 'ledger',
    })
    expect(engine.getServiceMaintenance('default').active).toBe(false)
    expect(operations[0]).toMatchObject({
      action: 'service_maintenance_on',
      route: '[billing Maintenance]',
      service: 'billing',
    })
    await engine.disableServiceMaintenance('billing')
    expect(engine.getServiceMaintenance('billing').active).toBe(false)
  })
})

describe('fail-open store', () => {
  it('serves declared states when the store fails at startup, and keeps retrying', async () => {
    const errors: string[] = []
    let attempts = 0
    const broken = {
      ...memoryStore(),
      kind: 'broken',
      connect: () => {
        attempts++
        return Promise.reject(new Error('connection refused'))
      },
    }
    const engine = createEngine({
      store: broken,
      retryInterval: 0.01,
      logger: { warn: () => undefined, error: pushMessage(errors) },
    })
    engine.registerRoute('GET', '/x', { kind: 'disabled', reason: 'declared' })
    await engine.start()
    expect(errors[0]).toMatch(/store "broken" unavailable at startup/)
    expect(engine.getState('GET:/x')[0]!.status).toBe('disabled')
    await expect.poll(() => attempts).toBeGreaterThan(1)
    await engine.close()
  })
})
