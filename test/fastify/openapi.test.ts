import { afterEach, describe, expect, it } from 'vitest'
import { openApiFilterOf } from '../../src/fastify/openapi.js'
import {
  buildDocsApp,
  closeDocsApps,
  fetchJson,
  fetchYaml,
  HOUR,
  operation,
  operations,
  type Doc,
} from './openapi-helpers.js'

afterEach(closeDocsApps)

const DECLARED = [
  'GET /health',
  'GET /orders',
  'GET /orders/{id}',
  'GET /payments',
  'GET /prod-tools',
  'GET /reports',
  'GET /v1/users',
  'POST /orders',
]

describe('the served document follows the declared states', () => {
  it('hides disabled and env-gated operations, keeps every other one, stays valid', async () => {
    const { app } = await buildDocsApp()
    const doc = await fetchJson(app)
    expect(operations(doc)).toEqual(DECLARED)
    expect(doc.paths['/legacy']).toBeUndefined()
    expect(doc.paths['/debug']).toBeUndefined()
    // The app's own swagger-ui routes stay hidden (schema.hide), as without switchyard.
    expect(Object.keys(doc.paths).some((path) => path.startsWith('/docs'))).toBe(false)
  })

  it('drops the tags only hidden operations used and keeps the others, unused ones included', async () => {
    const { app } = await buildDocsApp()
    const doc = await fetchJson(app)
    expect(doc.tags?.map((tag) => tag.name)).toEqual(['orders', 'payments', 'users', 'unused'])
  })

  it('maintenance without a window: a banner in the description and x-switchyard-status', async () => {
    const { app } = await buildDocsApp()
    const payments = operation(await fetchJson(app), 'GET', '/payments')
    expect(payments['x-switchyard-status']).toBe('maintenance')
    expect(payments.description).toBe(
      '> **Under maintenance**: DB migration. Requests answer 503 MAINTENANCE_MODE.\n\nTakes payments.',
    )
    expect(payments.deprecated).toBeUndefined()
  })

  it('a window not started yet shows nothing; once started, the banner with its end', async () => {
    const { app, clock } = await buildDocsApp()
    const before = operation(await fetchJson(app), 'GET', '/reports')
    expect(before).not.toHaveProperty('x-switchyard-status')
    expect(before).not.toHaveProperty('description')
    const end = new Date(clock.time + 2 * HOUR).toISOString().replace('Z', '+00:00')
    clock.advance(HOUR)
    const during = operation(await fetchJson(app), 'GET', '/reports')
    expect(during['x-switchyard-status']).toBe('maintenance')
    expect(during.description).toBe(
      `> **Under maintenance**: Reindex. Requests answer 503 MAINTENANCE_MODE. Expected back at ${end}.`,
    )
    clock.advance(HOUR)
    expect(operation(await fetchJson(app), 'GET', '/reports')).not.toHaveProperty(
      'x-switchyard-status',
    )
  })

  it('deprecated: deprecated true, the sunset date and a link to the successor', async () => {
    const { app } = await buildDocsApp()
    const users = operation(await fetchJson(app), 'GET', '/v1/users')
    expect(users.deprecated).toBe(true)
    expect(users['x-switchyard-status']).toBe('deprecated')
    expect(users.description).toBe(
      '> **Deprecated**. Sunset: Sat, 01 Jan 2028 00:00:00 GMT. Use [`/v2/users`](/v2/users) instead.',
    )
  })

  it('active, env-allowed and force-active operations are served exactly as generated', async () => {
    const { app } = await buildDocsApp({ plugin: { openapi: false } })
    const unfiltered = await fetchJson(app)
    const { app: filteredApp } = await buildDocsApp()
    const filtered = await fetchJson(filteredApp)
    for (const [method, path] of [
      ['GET', '/orders'],
      ['POST', '/orders'],
      ['GET', '/orders/{id}'],
      ['GET', '/prod-tools'],
      ['GET', '/health'],
    ] as const) {
      expect(operation(filtered, method, path)).toEqual(operation(unfiltered, method, path))
    }
  })

  it('the YAML route serves the same filtered document', async () => {
    const { app } = await buildDocsApp()
    expect(await fetchYaml(app)).toEqual(await fetchJson(app))
  })
})

describe('runtime changes show on the next call', () => {
  it('disable → gone from app.swagger(), /json and /yaml; enable → back as generated', async () => {
    const { app, engine } = await buildDocsApp()
    const before = await fetchJson(app)
    await engine.disable('GET:/orders/:id', { reason: 'hotfix' })
    for (const doc of [app.swagger() as Doc, await fetchJson(app), await fetchYaml(app)]) {
      expect(doc.paths['/orders/{id}']).toBeUndefined()
      expect(operations(doc)).toContain('GET /orders')
    }
    await engine.enable('GET:/orders/:id')
    const after = await fetchJson(app)
    expect(after).toEqual(before)
  })

  it('a path keeps its other methods when one is disabled; the last one takes the path away', async () => {
    const { app, engine } = await buildDocsApp()
    await engine.disable('POST:/orders')
    expect(Object.keys((await fetchJson(app)).paths['/orders'] ?? {})).toEqual(['get'])
    await engine.disable('GET:/orders')
    await engine.disable('GET:/orders/:id')
    const doc = await fetchJson(app)
    expect(doc.paths['/orders']).toBeUndefined()
    expect(doc.tags?.map((tag) => tag.name)).not.toContain('orders')
  })

  it('route maintenance set and ended at runtime, a disabled route enabled', async () => {
    const { app, engine } = await buildDocsApp()
    await engine.setMaintenance('GET:/orders', { reason: 'reindex' })
    await engine.enable('GET:/legacy')
    const doc = await fetchJson(app)
    expect(operation(doc, 'GET', '/orders')['x-switchyard-status']).toBe('maintenance')
    expect(operation(doc, 'GET', '/legacy')).not.toHaveProperty('x-switchyard-status')
    expect(doc.tags?.map((tag) => tag.name)).toContain('legacy')
    await engine.enable('GET:/orders')
    expect(operation(await fetchJson(app), 'GET', '/orders')).not.toHaveProperty('description')
  })

  it('a disable --until deadline passing brings the operation back', async () => {
    const { app, engine, clock } = await buildDocsApp()
    await engine.disable('GET:/orders', { until: new Date(clock.time + HOUR) })
    expect(operations(await fetchJson(app))).not.toContain('GET /orders')
    clock.advance(HOUR)
    expect(operations(await fetchJson(app))).toContain('GET /orders')
  })

  it('global maintenance: a banner on every operation but exempt and force-active ones', async () => {
    const { app, engine } = await buildDocsApp()
    await engine.enableGlobalMaintenance({
      reason: 'Upgrade',
      exemptPaths: ['GET:/orders', '/v1/users'],
    })
    const doc = await fetchJson(app)
    const marked = operations(doc).filter((key) => {
      const [method, path] = key.split(' ') as [string, string]
      return operation(doc, method, path)['x-switchyard-status'] === 'maintenance'
    })
    expect(marked).toEqual([
      'GET /orders/{id}',
      'GET /payments',
      'GET /prod-tools',
      'GET /reports',
      'POST /orders',
    ])
    expect(operation(doc, 'GET', '/orders/{id}').description).toBe(
      '> **Under maintenance (whole application)**: Upgrade. Requests answer 503 MAINTENANCE_MODE.',
    )
    // Disabled and env-gated operations stay hidden under a maintenance.
    expect(doc.paths['/legacy']).toBeUndefined()
    expect(operation(doc, 'GET', '/health')).not.toHaveProperty('x-switchyard-status')
    expect(operation(doc, 'GET', '/v1/users')['x-switchyard-status']).toBe('deprecated')

    await engine.enableGlobalMaintenance({ reason: 'Upgrade', includeForceActive: true })
    const strict = await fetchJson(app)
    expect(operation(strict, 'GET', '/health')['x-switchyard-status']).toBe('maintenance')
    const users = operation(strict, 'GET', '/v1/users')
    expect(users['x-switchyard-status']).toBe('maintenance')
    expect(users.deprecated).toBe(true)
    expect(users.description?.split('\n\n')).toHaveLength(2)

    await engine.disableGlobalMaintenance()
    expect(operation(await fetchJson(app), 'GET', '/health')).not.toHaveProperty(
      'x-switchyard-status',
    )
  })

  it("service maintenance marks this service's operations; another service's changes nothing", async () => {
    const { app, engine } = await buildDocsApp()
    await engine.enableServiceMaintenance('billing', { reason: 'elsewhere' })
    expect(operation(await fetchJson(app), 'GET', '/orders')).not.toHaveProperty('description')
    await engine.enableServiceMaintenance('shop', {
      reason: 'Shop move',
      exemptPaths: ['/orders'],
    })
    const doc = await fetchJson(app)
    expect(operation(doc, 'GET', '/orders')).not.toHaveProperty('x-switchyard-status')
    expect(operation(doc, 'POST', '/orders')).not.toHaveProperty('x-switchyard-status')
    expect(operation(doc, 'GET', '/orders/{id}').description).toBe(
      '> **Under maintenance (service shop)**: Shop move. Requests answer 503 MAINTENANCE_MODE.',
    )
    expect(operation(doc, 'GET', '/health')).not.toHaveProperty('x-switchyard-status')
  })

  it('operator text is escaped: no markup reaches the description', async () => {
    const { app, engine } = await buildDocsApp()
    await engine.setMaintenance('GET:/orders', {
      reason: '<img src=x onerror=alert(1)> [click](javascript:alert(1))\nsecond line',
    })
    const description = operation(await fetchJson(app), 'GET', '/orders').description ?? ''
    expect(description).toBe(
      '> **Under maintenance**: \\<img src=x onerror=alert(1)\\> \\[click\\](javascript:alert(1)) second line. Requests answer 503 MAINTENANCE_MODE.',
    )
  })
})

describe('the filtered document is cached per state', () => {
  it('reuses the same object and YAML text while nothing changes, rebuilds once after a change', async () => {
    const { app, engine } = await buildDocsApp()
    const filter = openApiFilterOf(app.swagger)
    if (filter === undefined) throw new Error('app.swagger is not wrapped')
    const first = app.swagger()
    const builds = filter.stats.builds
    for (let i = 0; i < 5; i++) expect(app.swagger()).toBe(first)
    await fetchJson(app)
    const yaml = app.swagger({ yaml: true })
    expect(app.swagger({ yaml: true })).toBe(yaml)
    await fetchYaml(app)
    expect(filter.stats).toEqual({ builds, yamlBuilds: 1 })

    await engine.disable('GET:/orders')
    const second = app.swagger()
    expect(second).not.toBe(first)
    expect(app.swagger()).toBe(second)
    expect(app.swagger({ yaml: true })).not.toBe(yaml)
    expect(filter.stats).toEqual({ builds: builds + 1, yamlBuilds: 2 })
  })

  it('a change of a maintenance configuration or of the clock past a transition rebuilds', async () => {
    const { app, engine, clock } = await buildDocsApp()
    const filter = openApiFilterOf(app.swagger)
    if (filter === undefined) throw new Error('app.swagger is not wrapped')
    app.swagger()
    let builds = filter.stats.builds
    clock.advance(HOUR - 1)
    app.swagger()
    expect(filter.stats.builds).toBe(builds)
    clock.advance(1)
    app.swagger()
    expect(filter.stats.builds).toBe(++builds)
    await engine.enableServiceMaintenance('shop', { reason: 'x' })
    app.swagger()
    expect(filter.stats.builds).toBe(++builds)
    await engine.enableGlobalMaintenance({ reason: 'y' })
    app.swagger()
    app.swagger()
    expect(filter.stats.builds).toBe(++builds)
  })

  it('a global or service maintenance is not shown past its end, before the scheduler stores it', async () => {
    const { app, engine, clock } = await buildDocsApp()
    // The scheduler of this engine never runs by itself on the fake clock: the stored
    // configurations still say "active" after their end, as they do until its change event.
    await engine.enableServiceMaintenance('shop', {
      reason: 'Shop move',
      until: new Date(clock.time + HOUR / 2),
    })
    const during = operation(await fetchJson(app), 'GET', '/orders/{id}')
    expect(during['x-switchyard-status']).toBe('maintenance')
    expect(app.swagger()).toBe(app.swagger())
    clock.advance(HOUR / 2)
    expect(engine.activeMaintenance('shop').active).toBe(true)
    expect(operation(await fetchJson(app), 'GET', '/orders/{id}')).not.toHaveProperty(
      'x-switchyard-status',
    )

    await engine.enableGlobalMaintenance({
      reason: 'Upgrade',
      until: new Date(clock.time + HOUR / 4),
    })
    const yaml = app.swagger({ yaml: true })
    expect(yaml).toContain('Under maintenance (whole application)')
    clock.advance(HOUR / 4)
    expect(engine.activeMaintenance().active).toBe(true)
    expect(app.swagger({ yaml: true })).not.toContain('Under maintenance (whole application)')
    expect(operation(await fetchJson(app), 'GET', '/orders/{id}')).not.toHaveProperty(
      'x-switchyard-status',
    )
  })

  it('once every change is undone, the document is exactly the first one again', async () => {
    const { app, engine } = await buildDocsApp({ plugin: { openapi: { decorator: 'swagger' } } })
    const source = structuredClone(await fetchJson(app))
    await engine.disable('GET:/orders')
    await engine.enableGlobalMaintenance({ reason: 'z' })
    await fetchJson(app)
    await engine.disableGlobalMaintenance()
    await engine.enable('GET:/orders')
    expect(await fetchJson(app)).toEqual(source)
  })
})
