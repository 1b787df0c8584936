/**
 * Configuration as code over the admin API: export, plan and apply, the round trip to an empty
 * engine, all-or-nothing validation with every problem's path, prune (admin only), the audit
 * platform `apply`, YAML bodies and documents of one service.
 */
import type { FastifyInstance } from 'fastify'
import { afterEach, describe, expect, it } from 'vitest'
import { stringify } from 'yaml'
import type { Engine } from '../../src/index.js'
import { booleanFlag } from '../flags/helpers.js'
import { API, buildAdmin, closeAdmins, closeLater, login } from '../admin/helpers.js'

afterEach(closeAdmins)

const USERS = {
  users: [
    { username: 'vera', password: 'v', role: 'viewer' as const },
    { username: 'otto', password: 'o', role: 'operator' as const },
    { username: 'ada', password: 'a', role: 'admin' as const },
  ],
}

/** An admin app with the three roles, and a caller per role. */
async function admins() {
  const { app, engine } = await buildAdmin({ auth: USERS, clock: null })
  closeLater(app)
  const tokens = {
    viewer: await login(app, { username: 'vera', password: 'v' }),
    operator: await login(app, { username: 'otto', password: 'o' }),
    admin: await login(app, { username: 'ada', password: 'a' }),
  }
  const call = (
    role: keyof typeof tokens,
    method: 'GET' | 'POST',
    url: string,
    payload?: unknown,
    headers: Record<string, string> = {},
  ) =>
    app.inject({
      method,
      url: `${API}${url}`,
      headers: { authorization: `Bearer ${tokens[role]}`, ...headers },
      ...(payload === undefined
        ? {}
        : typeof payload === 'string'
          ? { payload }
          : { payload: payload as object }),
    })
  return { app, engine, call }
}

const future = (hours: number) => new Date(Date.now() + hours * 3_600_000).toISOString()

/** A state touching every section. */
async function populate(engine: Engine): Promise<void> {
  await engine.saveSegment({ key: 'staff', name: 'Staff', included: ['u1', 'u2'] })
  await engine.saveFlag(booleanFlag('base'))
  await engine.saveFlag({
    ...booleanFlag('checkout'),
    prerequisites: [{ flag_key: 'base', variation: 'on' }],
    rules: [
      {
        clauses: [{ attribute: 'key', operator: 'in_segment', values: ['staff'] }],
        variation: 'on',
      },
    ],
  })
  await engine.disable('GET:/payments', { reason: 'incident', until: future(5) })
  await engine.schedule('GET:/orders', { reason: 'db upgrade', start: future(1), end: future(2) })
  await engine.setRateLimitPolicy({ path: '/payments', method: 'POST', limit: '10/minute' })
  await engine.setServiceRateLimit('billing', { limit: '100/minute', burst: 5 })
  await engine.setGlobalRateLimit({ limit: '1000/minute', exemptRoutes: ['/health'] })
  await engine.enableGlobalMaintenance({ reason: 'migration', exemptPaths: ['/health'] })
  await engine.addServiceExemption('billing', '/invoices')
}

async function exported(app: FastifyInstance, query = ''): Promise<Record<string, unknown>> {
  const response = await app.inject({ url: `${API}/config${query}` })
  expect(response.statusCode, response.body).toBe(200)
  return response.json()
}

describe('configuration as code (admin API)', () => {
  it('round trip: the export applied to an empty engine exports the same; applying it again changes nothing', async () => {
    const source = await buildAdmin({ clock: null })
    const target = await buildAdmin({ clock: null })
    closeLater(source.app, target.app)
    await populate(source.engine)
    const doc = await exported(source.app)
    expect(doc).toMatchObject({ apiVersion: 'switchyard/v1', kind: 'Config' })
    expect((doc.flags as unknown[]).length).toBe(2)
    expect(doc.routes).toEqual([
      expect.objectContaining({ route: 'GET:/orders', status: 'maintenance' }),
      expect.objectContaining({ route: 'GET:/payments', status: 'disabled', reason: 'incident' }),
    ])

    const applied = await target.app.inject({
      method: 'POST',
      url: `${API}/config/apply`,
      payload: doc,
    })
    expect(applied.statusCode, applied.body).toBe(200)
    const changes = applied.json<{ changes: { op: string; kind: string; key: string }[] }>().changes
    expect(changes.map((change) => `${change.op} ${change.kind} ${change.key}`)).toEqual([
      'create segment staff',
      'create flag base',
      'create flag checkout',
      'create route_rate_limit POST:/payments',
      'create service_rate_limit billing',
      'create global_rate_limit global',
      'create route_state GET:/orders',
      'create route_state GET:/payments',
      'create global_maintenance global',
      'create service_maintenance billing',
    ])
    expect(await exported(target.app)).toEqual(doc)

    for (const app of [source.app, target.app]) {
      const plan = await app.inject({ method: 'POST', url: `${API}/config/plan`, payload: doc })
      expect(plan.json()).toEqual({ changes: [] })
      const again = await app.inject({ method: 'POST', url: `${API}/config/apply`, payload: doc })
      expect(again.json()).toEqual({ dry_run: false, changes: [] })
    }
  })

  it('plan lists exactly the differences, with the diff of each update; dry_run changes nothing', async () => {
    const { app, engine } = await buildAdmin({ clock: null })
    closeLater(app)
    await populate(engine)
    const doc = await exported(app)
    const flags = doc.flags as Record<string, unknown>[]
    flags[0] = { ...flags[0], description: 'the base flag' }
    ;(doc.segments as unknown[]).push({ key: 'beta', name: 'Beta', included: ['u9'] })
    doc.routes = (doc.routes as { route: string }[]).filter(
      (entry) => entry.route !== 'GET:/orders',
    )
    ;(doc.maintenance as { global: unknown }).global = { active: false, exempt_paths: ['/health'] }
    const before = await exported(app)

    const plan = await app.inject({ method: 'POST', url: `${API}/config/plan`, payload: doc })
    expect(plan.json()).toEqual({
      changes: [
        { op: 'create', kind: 'segment', key: 'beta' },
        { op: 'update', kind: 'flag', key: 'base', diff: { description: ['', 'the base flag'] } },
        {
          op: 'update',
          kind: 'global_maintenance',
          key: 'global',
          diff: {
            active: [true, false],
            reason: ['migration', null],
            include_force_active: [false, null],
          },
        },
      ],
    })
    const pruned = await app.inject({
      method: 'POST',
      url: `${API}/config/plan?prune=true`,
      payload: doc,
    })
    expect(pruned.json<{ changes: unknown[] }>().changes).toContainEqual({
      op: 'delete',
      kind: 'route_state',
      key: 'GET:/orders',
      service: 'default',
    })
    expect(pruned.json<{ changes: unknown[] }>().changes).toHaveLength(4)
    const dry = await app.inject({
      method: 'POST',
      url: `${API}/config/apply?dry_run=true`,
      payload: doc,
    })
    expect(dry.json()).toEqual({
      dry_run: true,
      changes: plan.json<{ changes: unknown }>().changes,
    })
    expect(await exported(app)).toEqual(before)
  })

  it('orders flags by prerequisites, keeps rule ids of a document without them, prunes dependents first', async () => {
    const { app, engine } = await buildAdmin({ clock: null })
    closeLater(app)
    const rule = {
      clauses: [{ attribute: 'country', operator: 'in', values: ['NL'] }],
      variation: 'on',
    }
    const doc = {
      apiVersion: 'switchyard/v1',
      kind: 'Config',
      // `top` requires `middle`, which requires `bottom`: listed the other way round.
      flags: [
        { ...booleanFlag('top'), prerequisites: [{ flag_key: 'middle', variation: 'on' }] },
        {
          ...booleanFlag('middle'),
          prerequisites: [{ flag_key: 'bottom', variation: 'on' }],
          rules: [rule],
        },
        booleanFlag('bottom'),
      ],
    }
    const apply = (payload: object, query = '') =>
      app.inject({ method: 'POST', url: `${API}/config/apply${query}`, payload })
    const first = await apply(doc)
    expect(first.statusCode, first.body).toBe(200)
    expect(first.json<{ changes: { key: string }[] }>().changes.map((c) => c.key)).toEqual([
      'bottom',
      'middle',
      'top',
    ])
    const ruleId = (await engine.getFlag('middle'))?.rules[0]?.id
    expect(ruleId).toEqual(expect.any(String))
    expect((await apply(doc)).json()).toEqual({ dry_run: false, changes: [] })
    expect((await engine.getFlag('middle'))?.rules[0]?.id).toBe(ruleId)

    const pruned = await apply({ ...doc, flags: [] }, '?prune=true')
    expect(pruned.statusCode, pruned.body).toBe(200)
    expect(pruned.json<{ changes: { op: string; key: string }[] }>().changes).toEqual([
      { op: 'delete', kind: 'flag', key: 'top' },
      { op: 'delete', kind: 'flag', key: 'middle' },
      { op: 'delete', kind: 'flag', key: 'bottom' },
    ])
    expect(await engine.listFlags()).toEqual([])
  })

  it('an invalid document is refused whole: 400 listing every problem by path, state and audit unchanged', async () => {
    const { app, engine } = await buildAdmin({ clock: null })
    closeLater(app)
    await populate(engine)
    const before = await exported(app)
    const auditBefore = (await engine.getAuditLog()).total
    const doc = {
      apiVersion: 'switchyard/v1',
      kind: 'Config',
      segments: [{ key: 'fresh', name: 'Fresh', included: [] }],
      flags: [
        booleanFlag('ok-flag'),
        { ...booleanFlag('bad'), off_variation: 'missing' },
        {
          ...booleanFlag('orphan'),
          prerequisites: [{ flag_key: 'nowhere', variation: 'on' }],
        },
      ],
      rateLimits: {
        global: { limit: 'lots' },
        routes: [{ route: 'GET:/nope', limit: '1/second' }],
      },
      routes: [
        { route: 'GET:/payments', status: 'disabled', until: '2001-01-01T00:00:00Z' },
        { route: 'GET:/health', status: 'disabled' },
      ],
      maintenance: { services: { billing: { active: true, exempt_paths: ['no-slash'] } } },
    }
    const response = await app.inject({ method: 'POST', url: `${API}/config/apply`, payload: doc })
    expect(response.statusCode).toBe(400)
    const error = response.json<{
      error: { code: string; details: { field: string; message: string }[] }
    }>().error
    expect(error.code).toBe('VALIDATION_ERROR')
    const fields = error.details.map((detail) => detail.field)
    expect(fields).toEqual(
      expect.arrayContaining([
        '/flags/1/off_variation',
        '/flags/2/prerequisites/0/flag_key',
        '/rateLimits/global/limit',
        '/rateLimits/routes/0/route',
        '/routes/0/until',
        '/routes/1/route',
        '/maintenance/services/billing/exempt_paths/0',
      ]),
    )
    expect(
      fields.some((field) => field.startsWith('/flags/0') || field.startsWith('/segments')),
    ).toBe(false)
    expect(await exported(app)).toEqual(before)
    expect((await engine.getAuditLog()).total).toBe(auditBefore)

    const shape = await app.inject({
      method: 'POST',
      url: `${API}/config/plan`,
      payload: { apiVersion: 'switchyard/v2', kind: 'Config', routes: [{ route: 'GET:/x' }] },
    })
    expect(shape.statusCode).toBe(400)
    expect(
      shape.json<{ error: { details: { field: string }[] } }>().error.details.map((d) => d.field),
    ).toEqual(expect.arrayContaining(['/apiVersion', '/routes/0']))
  })

  it('refuses each kind of bad document with 400 naming its path, and changes nothing', async () => {
    const { app, engine } = await buildAdmin({ clock: null })
    closeLater(app)
    await populate(engine)
    const before = await exported(app)
    const auditBefore = (await engine.getAuditLog()).total
    const base = { apiVersion: 'switchyard/v1', kind: 'Config' }
    const cases: { name: string; payload: object | string; fields: string[] }[] = [
      {
        name: 'a prerequisite cycle',
        payload: {
          ...base,
          flags: [
            { ...booleanFlag('ping'), prerequisites: [{ flag_key: 'pong', variation: 'on' }] },
            { ...booleanFlag('pong'), prerequisites: [{ flag_key: 'ping', variation: 'on' }] },
          ],
        },
        fields: ['/flags/0', '/flags/1'],
      },
      {
        name: 'a segment that does not exist',
        payload: {
          ...base,
          flags: [
            {
              ...booleanFlag('segmented'),
              rules: [
                {
                  clauses: [{ attribute: 'key', operator: 'in_segment', values: ['ghosts'] }],
                  variation: 'on',
                },
              ],
            },
          ],
        },
        fields: ['/flags/0/rules'],
      },
      {
        name: 'a route that is not registered',
        payload: { ...base, routes: [{ route: 'DELETE:/nowhere', status: 'disabled' }] },
        fields: ['/routes/0/route'],
      },
      {
        name: 'an unknown apiVersion',
        payload: { ...base, apiVersion: 'switchyard/v9' },
        fields: ['/apiVersion'],
      },
      {
        name: 'unknown fields, at the top and inside an item',
        payload: {
          ...base,
          colour: 'blue',
          flags: [{ ...booleanFlag('extra'), colour: 'red' }],
        },
        fields: ['/colour', '/flags/0/colour'],
      },
    ]
    for (const { name, payload, fields } of cases) {
      const response = await app.inject({ method: 'POST', url: `${API}/config/apply`, payload })
      expect(response.statusCode, name).toBe(400)
      const error = response.json<{
        error: { code: string; details: { field: string }[] }
      }>().error
      expect(error.code, name).toBe('VALIDATION_ERROR')
      const found = error.details.map((detail) => detail.field)
      expect(found, name).toEqual(expect.arrayContaining(fields))
    }
    const duplicate = await app.inject({
      method: 'POST',
      url: `${API}/config/apply`,
      headers: { 'content-type': 'application/yaml' },
      payload: 'apiVersion: switchyard/v1\nkind: Config\nkind: Config\n',
    })
    expect(duplicate.statusCode).toBe(400)
    expect(duplicate.json()).toMatchObject({ error: { code: 'VALIDATION_ERROR' } })
    expect(duplicate.body).toMatch(/unique|duplicate/i)
    expect(await exported(app)).toEqual(before)
    expect((await engine.getAuditLog()).total).toBe(auditBefore)
  })

  it('a second apply of the same document writes no audit entry', async () => {
    const { app, engine } = await buildAdmin({ clock: null })
    closeLater(app)
    await populate(engine)
    const doc = await exported(app)
    const target = await buildAdmin({ clock: null })
    closeLater(target.app)
    const first = await target.app.inject({
      method: 'POST',
      url: `${API}/config/apply`,
      payload: doc,
    })
    expect(first.statusCode, first.body).toBe(200)
    const afterFirst = (await target.engine.getAuditLog()).total
    expect(afterFirst).toBeGreaterThan(0)
    const second = await target.app.inject({
      method: 'POST',
      url: `${API}/config/apply`,
      payload: doc,
    })
    expect(second.json()).toEqual({ dry_run: false, changes: [] })
    expect((await target.engine.getAuditLog()).total).toBe(afterFirst)
  })

  it('prune deletes only with ?prune=true and only for an admin (operator: 403 FORBIDDEN naming admin)', async () => {
    const { engine, call } = await admins()
    await populate(engine)
    const doc = {
      apiVersion: 'switchyard/v1',
      kind: 'Config',
      flags: [booleanFlag('base')],
      segments: [],
      rateLimits: { routes: [], services: {}, global: null },
    }
    const before = await call('admin', 'GET', '/config')
    const refused = await call('operator', 'POST', '/config/apply?prune=true', doc)
    expect(refused.statusCode).toBe(403)
    expect(refused.json()).toMatchObject({ error: { code: 'FORBIDDEN', required_role: 'admin' } })
    const viewer = await call('viewer', 'POST', '/config/apply', doc)
    expect(viewer.statusCode).toBe(403)
    expect((await call('admin', 'GET', '/config')).json()).toEqual(before.json())

    // Without prune the operator applies: nothing the document leaves out is deleted.
    const kept = await call('operator', 'POST', '/config/apply', doc)
    expect(kept.statusCode, kept.body).toBe(200)
    expect(kept.json()).toEqual({ dry_run: false, changes: [] })
    expect(await engine.listFlags()).toHaveLength(2)

    const pruned = await call('admin', 'POST', '/config/apply?prune=true', doc)
    expect(pruned.statusCode, pruned.body).toBe(200)
    expect(
      pruned
        .json<{ changes: { op: string; kind: string; key: string }[] }>()
        .changes.map((change) => `${change.op} ${change.kind} ${change.key}`),
    ).toEqual([
      'delete flag checkout',
      'delete segment staff',
      'delete route_rate_limit POST:/payments',
      'delete service_rate_limit billing',
      'delete global_rate_limit global',
    ])
    expect((await engine.listFlags()).map((flag) => flag.key)).toEqual(['base'])
    // Sections the document does not hold are left alone.
    expect(engine.getState('GET:/payments')[0]?.status).toBe('disabled')
    expect(engine.getGlobalMaintenance().active).toBe(true)

    // The viewer may plan (a CI drift check) but not apply.
    const plan = await call('viewer', 'POST', '/config/plan', doc)
    expect(plan.json()).toEqual({ changes: [] })
  })

  it('audits every change of an apply as usual, with platform apply and the caller as actor', async () => {
    const { engine, call } = await admins()
    const doc = {
      apiVersion: 'switchyard/v1',
      kind: 'Config',
      flags: [booleanFlag('audited')],
      routes: [{ route: 'GET:/payments', status: 'maintenance', reason: 'config' }],
      maintenance: { services: { billing: { active: true, reason: 'config' } } },
    }
    const response = await call('operator', 'POST', '/config/apply', doc, {
      'x-ctl-platform': 'cli',
    })
    expect(response.statusCode, response.body).toBe(200)
    const entries = (await engine.getAuditLog()).items
    expect(entries.map((entry) => [entry.action, entry.platform, entry.actor])).toEqual([
      ['service_maintenance_on', 'apply', 'otto'],
      ['maintenance_on', 'apply', 'otto'],
      ['flag_created', 'apply', 'otto'],
    ])
  })

  it('takes YAML bodies; refuses YAML that does not parse', async () => {
    const { app, engine } = await buildAdmin({ clock: null })
    closeLater(app)
    const yaml = stringify({
      apiVersion: 'switchyard/v1',
      kind: 'Config',
      rateLimits: { services: { billing: { limit: '5/second' } } },
    })
    const response = await app.inject({
      method: 'POST',
      url: `${API}/config/apply`,
      headers: { 'content-type': 'application/yaml' },
      payload: yaml,
    })
    expect(response.statusCode, response.body).toBe(200)
    expect(engine.getServiceRateLimit('billing')?.limit).toBe('5/second')
    const broken = await app.inject({
      method: 'POST',
      url: `${API}/config/plan`,
      headers: { 'content-type': 'application/yaml' },
      payload: 'apiVersion: [unclosed',
    })
    expect(broken.statusCode).toBe(400)
    expect(broken.json()).toMatchObject({ error: { code: 'VALIDATION_ERROR' } })
    const bomb = await app.inject({
      method: 'POST',
      url: `${API}/config/plan`,
      headers: { 'content-type': 'application/yaml' },
      payload: yamlBomb(),
    })
    expect(bomb.statusCode).toBe(400)
  })

  it('a document of one service: export holds only its part; applying it touches only that service', async () => {
    const { app, engine } = await buildAdmin({ clock: null })
    closeLater(app)
    await populate(engine)
    const doc = await exported(app, '?service=billing')
    expect(doc).toEqual({
      apiVersion: 'switchyard/v1',
      kind: 'Config',
      service: 'billing',
      rateLimits: {
        routes: [],
        services: {
          billing: {
            limit: '100/minute',
            algorithm: 'fixed_window',
            key_strategy: 'ip',
            on_missing_key: null,
            burst: 5,
            exempt_routes: [],
            enabled: true,
          },
        },
      },
      routes: [],
      maintenance: { services: { billing: { active: false, exempt_paths: ['/invoices'] } } },
    })
    const empty = {
      apiVersion: 'switchyard/v1',
      kind: 'Config',
      service: 'billing',
      rateLimits: { services: {} },
      maintenance: { services: {} },
      routes: [],
    }
    const plan = await app.inject({
      method: 'POST',
      url: `${API}/config/plan?prune=true`,
      payload: empty,
    })
    expect(plan.json()).toEqual({
      changes: [
        { op: 'delete', kind: 'service_rate_limit', key: 'billing' },
        { op: 'delete', kind: 'service_maintenance', key: 'billing' },
      ],
    })
    const global = await app.inject({
      method: 'POST',
      url: `${API}/config/plan`,
      payload: {
        ...empty,
        flags: [],
        routes: [
          { route: 'GET:/payments', service: 'default', status: 'active' },
          // Without `service`, an entry is the document's service's.
          { route: 'GET:/payments', status: 'active' },
        ],
      },
    })
    expect(global.statusCode).toBe(400)
    expect(
      global.json<{ error: { details: { field: string }[] } }>().error.details.map((d) => d.field),
    ).toEqual(['/flags', '/routes/0/service', '/routes/1/route'])
  })
})

describe('configuration as code and service tokens', () => {
  it('a service token exports, plans and applies its own service’s document only', async () => {
    const { engine, call } = await admins()
    const created = await call('admin', 'POST', '/tokens', {
      name: 'billing-app',
      service: 'billing',
    })
    expect(created.statusCode, created.body).toBe(201)
    const token = created.json<{ token: string }>().token
    const as = (method: 'GET' | 'POST', url: string, payload?: object) =>
      call('admin', method, url, payload, { authorization: `Bearer ${token}` })
    const own = await as('GET', '/config?service=billing')
    expect(own.statusCode, own.body).toBe(200)
    expect(own.json()).toMatchObject({ service: 'billing' })
    expect((await as('GET', '/config')).statusCode).toBe(403)
    const doc = {
      apiVersion: 'switchyard/v1',
      kind: 'Config',
      service: 'billing',
      maintenance: { services: { billing: { active: true, reason: 'by token' } } },
    }
    const applied = await as('POST', '/config/apply', doc)
    expect(applied.statusCode, applied.body).toBe(200)
    expect(engine.getServiceMaintenance('billing')).toMatchObject({
      active: true,
      reason: 'by token',
    })
    const whole = await as('POST', '/config/apply', { ...doc, service: undefined })
    expect(whole.statusCode).toBe(403)
    const other = await as('POST', '/config/plan', { ...doc, service: 'default' })
    expect(other.statusCode).toBe(403)
  })

  it('a service key that is not a service name is a problem with its path', async () => {
    const { call } = await admins()
    const response = await call('operator', 'POST', '/config/plan', {
      apiVersion: 'switchyard/v1',
      kind: 'Config',
      rateLimits: { services: { Billing: { limit: '1/second' } } },
      maintenance: { services: { 'no space': { active: true } } },
    })
    expect(response.statusCode).toBe(400)
    const fields = response
      .json<{ error: { details: { field: string }[] } }>()
      .error.details.map((detail) => detail.field)
    expect(fields).toEqual(
      expect.arrayContaining(['/rateLimits/services/Billing', '/maintenance/services/no space']),
    )
  })
})

/** A YAML document whose aliases expand far beyond its size. */
function yamlBomb(): string {
  const lines = ['a: &a ["x","x","x","x","x","x","x","x","x"]']
  let previous = 'a'
  for (const name of ['b', 'c', 'd', 'e', 'f', 'g', 'h', 'i']) {
    lines.push(`${name}: &${name} [${Array(9).fill(`*${previous}`).join(',')}]`)
    previous = name
  }
  return lines.join('\n')
}
