import { readFileSync } from 'node:fs'
import { afterEach, describe, expect, it } from 'vitest'
import { adminErrorCatalogue } from '../../src/admin/index.js'
import { expectValidOpenApi } from '../helpers/openapi.js'
import { authedAdmin, closeAdmins } from './helpers.js'

afterEach(closeAdmins)

const authed = (options: Parameters<typeof authedAdmin>[0] = {}) => authedAdmin(options)

describe('route endpoints', () => {
  it('lists routes in the envelope, filtered by service and paged', async () => {
    const { call } = await authed()
    const all = (await call('GET', '/routes')).json()
    expect(all).toMatchObject({ total: 5, page: 1, per_page: 20 })
    expect(all.items.map((s: { route: string }) => s.route)).toContain('POST:/payments')
    const billing = (await call('GET', '/routes?service=billing')).json()
    expect(billing.items.map((s: { route: string }) => s.route)).toEqual(['GET:/invoices'])
    const paged = (await call('GET', '/routes?page=2&per_page=2')).json()
    expect(paged).toMatchObject({ total: 5, page: 2, per_page: 2 })
    expect(paged.items).toHaveLength(2)
    for (const bad of ['page=0', 'per_page=501', 'page=x', 'bogus=1']) {
      const response = await call('GET', `/routes?${bad}`)
      expect(response.statusCode, bad).toBe(400)
      expect(response.json().error.code).toBe('VALIDATION_ERROR')
      expect(response.json().error.details.length).toBeGreaterThan(0)
    }
  })

  it('reads the state of a route key, one entry per method', async () => {
    const { call } = await authed()
    const states = (await call('GET', '/routes/state?route=/payments')).json()
    expect(states.map((s: { method: string }) => s.method).sort()).toEqual(['GET', 'POST'])
    expect((await call('GET', '/routes/state?route=GET:/nope')).statusCode).toBe(404)
    expect((await call('GET', '/routes/state')).statusCode).toBe(400)
    expect((await call('GET', '/routes/state?route=nonsense')).json().error.code).toBe(
      'VALIDATION_ERROR',
    )
  })

  it('enables, disables, puts in maintenance, schedules and cancels, with actor and platform', async () => {
    const { call, clock } = await authed()
    const now = clock!.time
    const disabled = await call(
      'POST',
      '/routes/disable',
      { route: 'GET:/payments', reason: 'broken', until: new Date(now + 3_600_000).toISOString() },
      { 'x-ctl-platform': 'cli' },
    )
    expect(disabled.statusCode).toBe(200)
    expect(disabled.json()[0]).toMatchObject({ status: 'disabled', reason: 'broken' })
    expect(disabled.json()[0].until).toMatch(/\+00:00$/)

    const maintenance = await call('POST', '/routes/maintenance', {
      route: '/payments',
      reason: 'migration',
      end: new Date(now + 7_200_000).toISOString(),
    })
    expect(maintenance.json().map((s: { status: string }) => s.status)).toEqual([
      'maintenance',
      'maintenance',
    ])

    const enabled = await call('POST', '/routes/enable', { route: '/payments' })
    expect(enabled.json().every((s: { status: string }) => s.status === 'active')).toBe(true)

    const start = new Date(now + 3_600_000).toISOString()
    const end = new Date(now + 7_200_000).toISOString()
    const scheduled = await call('POST', '/routes/schedule', { route: 'GET:/orders', start, end })
    expect(scheduled.json()[0]).toMatchObject({ status: 'active' })
    expect(scheduled.json()[0].window).not.toBeNull()
    const cancelled = await call('POST', '/routes/schedule/cancel', { route: 'GET:/orders' })
    expect(cancelled.json()[0]).toMatchObject({ status: 'active', window: null })

    const audit = (await call('GET', '/audit?per_page=10')).json()
    expect(audit.items.map((e: { action: string }) => e.action)).toEqual([
      'schedule_cancelled',
      'maintenance_scheduled',
      'enable',
      'enable',
      'maintenance_on',
      'maintenance_on',
      'disable',
    ])
    expect(audit.items[0]).toMatchObject({ actor: 'admin', platform: 'api' })
    expect(audit.items.at(-1)).toMatchObject({
      actor: 'admin',
      platform: 'cli',
      previous_status: 'active',
      new_status: 'disabled',
      route: 'GET:/payments',
    })
  })

  it('rejects bad input with a 4xx in the shared shape and changes nothing', async () => {
    const { call, engine } = await authed()
    const cases: [string, unknown, number, string][] = [
      ['/routes/disable', { route: 'GET:/nope' }, 404, 'ROUTE_NOT_FOUND'],
      ['/routes/disable', { route: 'GET:/health' }, 409, 'ROUTE_PROTECTED'],
      ['/routes/disable', { route: 'GET:/payments', until: 'tomorrow' }, 400, 'VALIDATION_ERROR'],
      [
        '/routes/disable',
        { route: 'GET:/payments', until: '2001-01-01T00:00:00Z' },
        400,
        'VALIDATION_ERROR',
      ],
      ['/routes/disable', { route: 'GET:/payments', reason: 42 }, 400, 'VALIDATION_ERROR'],
      ['/routes/disable', { route: 'GET:/payments', colour: 'red' }, 400, 'VALIDATION_ERROR'],
      ['/routes/disable', {}, 400, 'VALIDATION_ERROR'],
      ['/routes/enable', { route: 'BREW:/payments' }, 400, 'VALIDATION_ERROR'],
      [
        '/routes/schedule',
        { route: 'GET:/payments', start: '2030-01-01T00:00:00Z' },
        400,
        'VALIDATION_ERROR',
      ],
      [
        '/routes/maintenance',
        { route: 'GET:/payments', start: '2030-01-02T00:00:00Z', end: '2030-01-01T00:00:00Z' },
        400,
        'VALIDATION_ERROR',
      ],
      [
        '/routes/enable',
        { route: 'GET:/payments', service: 'bad service!' },
        400,
        'VALIDATION_ERROR',
      ],
      ['/global-maintenance/enable', { exempt_paths: 'not-a-list' }, 400, 'VALIDATION_ERROR'],
      ['/global-maintenance/enable', { exempt_paths: ['no-slash'] }, 400, 'VALIDATION_ERROR'],
      ['/global-maintenance/exempt-add', {}, 400, 'VALIDATION_ERROR'],
      ['/global-maintenance/disable', { extra: true }, 400, 'VALIDATION_ERROR'],
    ]
    for (const [url, payload, status, code] of cases) {
      const response = await call('POST', url, payload)
      expect(response.statusCode, `${url} ${JSON.stringify(payload)}`).toBe(status)
      const body = response.json()
      expect(body.error.code).toBe(code)
      expect(typeof body.error.message).toBe('string')
    }
    const malformed = await call('POST', '/routes/disable', '{"route":', {
      'content-type': 'application/json',
    })
    expect(malformed.statusCode).toBe(400)
    expect(malformed.json().error.code).toBe('VALIDATION_ERROR')
    const wrongType = await call('POST', '/routes/disable', 'route=x', {
      'content-type': 'application/xml',
    })
    expect(wrongType.statusCode).toBe(415)
    expect(wrongType.json().error.code).toBe('UNSUPPORTED_MEDIA_TYPE')
    const badPlatform = await call(
      'POST',
      '/routes/enable',
      { route: 'GET:/payments' },
      {
        'x-ctl-platform': 'not valid!',
      },
    )
    expect(badPlatform.statusCode).toBe(400)

    expect(engine.getState('/payments').every((s) => s.status === 'active')).toBe(true)
    expect(engine.getGlobalMaintenance().active).toBe(false)
    expect((await engine.getAuditLog()).total).toBe(0)
  })

  it('answers unknown endpoints with 404 in the shared shape', async () => {
    const { call } = await authed()
    const response = await call('GET', '/nothing-here')
    expect(response.statusCode).toBe(404)
    expect(response.json().error.code).toBe('NOT_FOUND')
  })
})

describe('maintenance endpoints', () => {
  it('drives global maintenance and exemptions without toggling active', async () => {
    const { call } = await authed()
    expect((await call('GET', '/global-maintenance')).json()).toEqual({
      active: false,
      reason: '',
      include_force_active: false,
      exempt_paths: [],
      ends_at: null,
    })
    const enabled = await call('POST', '/global-maintenance/enable', {
      reason: 'upgrade',
      exempt_paths: ['/health', 'get:/orders'],
      include_force_active: true,
    })
    expect(enabled.json()).toEqual({
      active: true,
      reason: 'upgrade',
      include_force_active: true,
      exempt_paths: ['/health', 'GET:/orders'],
      ends_at: null,
    })
    await call('POST', '/global-maintenance/exempt-add', { path: '/status' })
    await call('POST', '/global-maintenance/exempt-remove', { path: '/health' })
    const current = (await call('GET', '/global-maintenance')).json()
    expect(current).toMatchObject({ active: true, exempt_paths: ['GET:/orders', '/status'] })
    const disabled = await call('POST', '/global-maintenance/disable')
    expect(disabled.json().active).toBe(false)
    await call('POST', '/global-maintenance/exempt-add', { path: '/more' })
    expect((await call('GET', '/global-maintenance')).json().active).toBe(false)
    const actions = (await call('GET', '/audit'))
      .json()
      .items.map((e: { action: string }) => e.action)
    expect(actions).toEqual([
      'global_maintenance_exempt_add',
      'global_maintenance_off',
      'global_maintenance_exempt_remove',
      'global_maintenance_exempt_add',
      'global_maintenance_on',
    ])
  })

  it('drives one service without touching another, and lists services', async () => {
    const { call, engine } = await authed()
    expect((await call('GET', '/services')).json()).toEqual(['billing', 'default'])
    const on = await call('POST', '/services/billing/maintenance/enable', { reason: 'invoices' })
    expect(on.json()).toMatchObject({ active: true, reason: 'invoices' })
    expect(engine.getServiceMaintenance('default').active).toBe(false)
    expect((await call('GET', '/services/billing/maintenance')).json().active).toBe(true)
    await call('POST', '/services/billing/maintenance/exempt-add', { path: '/invoices' })
    await call('POST', '/services/billing/maintenance/exempt-remove', { path: '/invoices' })
    expect((await call('POST', '/services/billing/maintenance/disable')).json().active).toBe(false)
    const bad = await call('GET', '/services/bad%20name/maintenance')
    expect(bad.statusCode).toBe(400)
    const audit = (await call('GET', '/audit?service=billing')).json()
    expect(audit.items[0]).toMatchObject({
      action: 'service_maintenance_off',
      route: '[billing Maintenance]',
      service: 'billing',
    })
  })
})

describe('audit endpoint', () => {
  it('pages newest first and filters by route key, bare path and label', async () => {
    const { call } = await authed()
    await call('POST', '/routes/disable', { route: 'GET:/payments' })
    await call('POST', '/routes/disable', { route: 'POST:/payments' })
    await call('POST', '/routes/enable', { route: 'GET:/orders' })
    await call('POST', '/global-maintenance/enable', {})
    const page = (await call('GET', '/audit?per_page=2&page=2')).json()
    expect(page).toMatchObject({ total: 4, page: 2, per_page: 2 })
    expect(page.items.map((e: { route: string }) => e.route)).toEqual([
      'POST:/payments',
      'GET:/payments',
    ])
    expect((await call('GET', '/audit?route=/payments')).json().total).toBe(2)
    expect((await call('GET', '/audit?route=GET:/payments')).json().total).toBe(1)
    expect(
      (await call('GET', `/audit?route=${encodeURIComponent('[Global Maintenance]')}`)).json()
        .total,
    ).toBe(1)
    expect((await call('GET', '/audit?per_page=0')).statusCode).toBe(400)
  })
})

describe('OpenAPI document', () => {
  it('describes every endpoint with its schemas', async () => {
    const { call } = await authed()
    const doc = (await call('GET', '/openapi.json')).json()
    expect(doc.openapi).toBe('3.1.0')
    await expectValidOpenApi(doc)
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining([
        '/api/routes',
        '/api/routes/state',
        '/api/routes/enable',
        '/api/routes/schedule/cancel',
        '/api/global-maintenance/exempt-add',
        '/api/services/{service}/maintenance/enable',
        '/api/services',
        '/api/audit',
        '/api/events',
        '/api/auth/login',
      ]),
    )
    const disable = doc.paths['/api/routes/disable'].post
    expect(disable.requestBody.content['application/json'].schema.properties.until).toBeDefined()
  })

  it('lists the values the rate-limit fields really take, and describes 204s and the stream', async () => {
    const { call } = await authed()
    const doc = (await call('GET', '/openapi.json')).json()
    type Field = { description?: string; anyOf?: { description?: string }[] }
    const body = (path: string, method: string) =>
      doc.paths[path][method].requestBody.content['application/json'].schema.properties as Record<
        string,
        Field
      >
    for (const properties of [
      body('/api/rate-limits', 'post'),
      body('/api/global-rate-limit', 'put'),
      body('/api/services/{service}/rate-limit', 'put'),
    ]) {
      const onMissingKey = properties.on_missing_key?.anyOf?.[0]?.description
      expect(onMissingKey).toMatch(/^exempt, fallback_ip or block;/)
      expect(onMissingKey).not.toContain('allow')
      expect(properties.algorithm?.description).toMatch(
        /^fixed_window, sliding_window, moving_window or token_bucket; default fixed_window$/,
      )
      expect(properties.key_strategy?.description).toMatch(/^ip, user, api_key or global;/)
    }
    expect(doc.paths['/api/flags/{key}'].delete.responses['204']).toEqual({
      description: 'No content',
    })
    const stream = doc.paths['/api/events'].get.responses['200']
    expect(Object.keys(stream.content)).toEqual(['text/event-stream'])
    expect(stream.content['text/event-stream'].schema.description).toContain('rl_hit')
  })

  it('is mirrored by docs/admin-api.md: every endpoint and every error code', async () => {
    const docs = readFileSync(new URL('../../docs/admin-api.md', import.meta.url), 'utf8')
    const { call } = await authed()
    const doc = (await call('GET', '/openapi.json')).json<{ paths: Record<string, object> }>()
    for (const [path, methods] of Object.entries(doc.paths)) {
      for (const method of Object.keys(methods)) {
        expect(docs, `${method} ${path}`).toContain(`\`${method.toUpperCase()} ${path}\``)
      }
    }
    for (const ErrorClass of adminErrorCatalogue) {
      const error = new ErrorClass('m')
      expect(docs).toContain(`| ${error.statusCode} | \`${error.code}\` |`)
    }
    const reference = readFileSync(
      new URL('../../docs/reference/admin-rest.md', import.meta.url),
      'utf8',
    )
    for (const [path, methods] of Object.entries(doc.paths)) {
      for (const method of Object.keys(methods)) {
        const endpoint = `\`${method.toUpperCase()} ${path}\``
        expect(reference, `docs/reference/admin-rest.md lacks ${endpoint}`).toContain(endpoint)
      }
    }
  })
})
