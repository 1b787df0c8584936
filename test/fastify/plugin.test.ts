import Fastify from 'fastify'
import { describe, expect, it } from 'vitest'
import { createEngine } from '../../src/index.js'
import { disabled, envOnly, maintenance, rateLimit, switchyard } from '../../src/fastify/index.js'
import { buildApp } from '../helpers/app.js'

describe('responses of a protected app (docs/reference/protected-app.md)', () => {
  it('route in maintenance: 503 MAINTENANCE_MODE with Retry-After and retry_after', async () => {
    const { app, clock } = await buildApp()
    const res = await app.inject('/payments?x=1')
    expect(res.statusCode).toBe(503)
    expect(res.headers['retry-after']).toBe('91')
    expect(res.json()).toEqual({
      error: {
        code: 'MAINTENANCE_MODE',
        message: 'This route is temporarily unavailable for maintenance.',
        reason: 'DB migration',
        path: '/payments',
        retry_after: new Date(clock.time + 90_500).toISOString().replace('Z', '+00:00'),
      },
    })
    clock.advance(90_500)
    expect((await app.inject('/payments')).statusCode).toBe(200)
  })

  it('maintenance without an end has no Retry-After and no retry_after', async () => {
    const { app, engine } = await buildApp()
    await engine.setMaintenance('GET:/orders', { reason: 'reindex' })
    const res = await app.inject('/orders')
    expect(res.statusCode).toBe(503)
    expect(res.headers['retry-after']).toBeUndefined()
    expect(res.json().error).not.toHaveProperty('retry_after')
  })

  it('disabled route: 503 ROUTE_DISABLED; Retry-After only with until', async () => {
    const { app, engine, clock } = await buildApp()
    const res = await app.inject('/legacy')
    expect(res.statusCode).toBe(503)
    expect(res.headers['retry-after']).toBeUndefined()
    expect(res.json()).toEqual({
      error: {
        code: 'ROUTE_DISABLED',
        message: 'This route is disabled.',
        reason: 'Replaced by /v2',
        path: '/legacy',
      },
    })
    await engine.disable('GET:/orders', {
      reason: 'hotfix',
      until: new Date(clock.time + 7_200_000),
    })
    const timed = await app.inject('/orders')
    expect(timed.statusCode).toBe(503)
    expect(timed.headers['retry-after']).toBe('7200')
    clock.advance(7_200_000)
    expect((await app.inject('/orders')).statusCode).toBe(200)
  })

  it('env-gated route outside its envs answers exactly like an unknown route', async () => {
    const { app } = await buildApp({ env: 'prod' })
    const gated = await app.inject('/debug')
    const unknown = await app.inject('/debug-nope')
    expect(gated.statusCode).toBe(404)
    expect(gated.json()).toEqual({ ...unknown.json(), message: 'Route GET:/debug not found' })
    expect(gated.headers['content-type']).toBe(unknown.headers['content-type'])
  })

  it('env-gated route inside its envs is served', async () => {
    const { app } = await buildApp({ env: 'staging' })
    expect((await app.inject('/debug')).statusCode).toBe(200)
  })

  it('env-gated route uses the app’s custom not-found handler', async () => {
    const engine = createEngine({ store: 'memory', env: 'prod' })
    const app = Fastify()
    await app.register(switchyard, { engine })
    app.setNotFoundHandler((_request, reply) => reply.code(404).send({ custom: 'nothing here' }))
    app.get('/debug', { onRequest: envOnly('dev') }, () => ({ ok: true }))
    const res = await app.inject('/debug')
    expect(res.statusCode).toBe(404)
    expect(res.json()).toEqual({ custom: 'nothing here' })
  })

  it('deprecated route: 200 with Deprecation, Sunset and Link', async () => {
    const { app } = await buildApp()
    const res = await app.inject('/v1/users')
    expect(res.statusCode).toBe(200)
    expect(res.json()).toEqual({ ok: true })
    expect(res.headers.deprecation).toBe(`@${Date.parse('2026-01-01T00:00:00Z') / 1000}`)
    expect(res.headers.sunset).toBe('Sat, 01 Jan 2028 00:00:00 GMT')
    expect(res.headers.link).toBe('</v2/users>; rel="successor-version"')
    const bare = await app.inject('/v0/users')
    expect(bare.headers.deprecation).toBe('true')
    expect(bare.headers.sunset).toBeUndefined()
    expect(bare.headers.link).toBeUndefined()
  })

  it('force-active route is always served and refuses changes', async () => {
    const { app, engine } = await buildApp()
    await engine.enableGlobalMaintenance({ reason: 'all down' })
    expect((await app.inject('/health')).statusCode).toBe(200)
    await expect(engine.disable('GET:/health')).rejects.toMatchObject({ code: 'ROUTE_PROTECTED' })
  })

  it('HEAD follows the GET route’s state', async () => {
    const { app } = await buildApp()
    expect((await app.inject({ method: 'HEAD', url: '/legacy' })).statusCode).toBe(503)
    expect((await app.inject({ method: 'HEAD', url: '/orders' })).statusCode).toBe(200)
  })
})

describe('runtime changes', () => {
  it('apply on the very next request, per method', async () => {
    const { app, engine } = await buildApp()
    expect((await app.inject('/orders')).statusCode).toBe(200)
    await engine.disable('POST:/orders', { reason: 'read-only' })
    expect((await app.inject('/orders')).statusCode).toBe(200)
    expect((await app.inject({ method: 'POST', url: '/orders' })).statusCode).toBe(503)
    await engine.enable('/orders')
    expect((await app.inject({ method: 'POST', url: '/orders' })).statusCode).toBe(200)
  })

  it('a parameterised route in maintenance answers for concrete URLs', async () => {
    const { app, engine } = await buildApp()
    await engine.setMaintenance('GET:/items/:id', { reason: 'reindex' })
    const res = await app.inject('/items/42')
    expect(res.statusCode).toBe(503)
    expect(res.json().error).toMatchObject({ reason: 'reindex', path: '/items/42' })
  })

  it('routes of encapsulated plugins are registered with their prefix', async () => {
    const { app, engine } = await buildApp()
    expect(engine.getState('GET:/api/status')[0]!.status).toBe('active')
    expect((await app.inject('/api/secret')).json().error.reason).toBe('prefixed')
    await engine.disable('GET:/api/status')
    expect((await app.inject('/api/status')).statusCode).toBe(503)
  })

  it('enabling a declared maintenance route serves it', async () => {
    const { app, engine } = await buildApp()
    await engine.enable('GET:/payments')
    expect((await app.inject('/payments')).statusCode).toBe(200)
  })
})

describe('global maintenance', () => {
  it('blocks every non-exempt route and restores individual states afterwards', async () => {
    const { app, engine } = await buildApp()
    await engine.enableGlobalMaintenance({
      reason: 'Upgrade',
      exemptPaths: ['/orders', 'GET:/items/:id'],
    })
    const blocked = await app.inject('/v1/users')
    expect(blocked.statusCode).toBe(503)
    expect(blocked.json()).toEqual({
      error: {
        code: 'MAINTENANCE_MODE',
        message: 'The service is down for maintenance.',
        reason: 'Upgrade',
        path: '/v1/users',
        scope: 'global',
      },
    })
    expect(blocked.headers['retry-after']).toBeUndefined()
    expect((await app.inject('/orders')).statusCode).toBe(200)
    expect((await app.inject({ method: 'POST', url: '/orders' })).statusCode).toBe(200)
    expect((await app.inject('/items/7')).statusCode).toBe(200)
    // an exempt route still obeys its own state
    await engine.disable('GET:/items/:id')
    expect((await app.inject('/items/7')).json().error.code).toBe('ROUTE_DISABLED')
    await engine.disableGlobalMaintenance()
    expect((await app.inject('/v1/users')).statusCode).toBe(200)
    expect((await app.inject('/legacy')).json().error.code).toBe('ROUTE_DISABLED')
  })

  it('exempt paths are matched against the route pattern, with METHOD entries', async () => {
    const { app, engine } = await buildApp()
    await engine.enableGlobalMaintenance({ exemptPaths: ['POST:/orders'] })
    expect((await app.inject('/orders')).statusCode).toBe(503)
    expect((await app.inject({ method: 'POST', url: '/orders' })).statusCode).toBe(200)
    await engine.addGlobalExemption('/items/:id')
    expect((await app.inject('/items/1')).statusCode).toBe(200)
    await engine.removeGlobalExemption('/items/:id')
    expect((await app.inject('/items/1')).statusCode).toBe(503)
  })

  it('include_force_active blocks force-active routes too', async () => {
    const { app, engine } = await buildApp()
    await engine.enableGlobalMaintenance({ reason: 'hard stop', includeForceActive: true })
    expect((await app.inject('/health')).statusCode).toBe(503)
    await engine.enableGlobalMaintenance({ reason: 'soft stop' })
    expect((await app.inject('/health')).statusCode).toBe(200)
  })
})

describe('service maintenance', () => {
  it('blocks only the routes of its service', async () => {
    const billing = await buildApp({ service: 'billing' })
    const shop = await buildApp({ service: 'shop' })
    await billing.engine.enableServiceMaintenance('billing', {
      reason: 'ledger',
      exemptPaths: ['/orders'],
    })
    const res = await billing.app.inject('/v1/users')
    expect(res.statusCode).toBe(503)
    expect(res.json().error).toMatchObject({
      code: 'MAINTENANCE_MODE',
      scope: 'service',
      reason: 'ledger',
    })
    expect((await billing.app.inject('/orders')).statusCode).toBe(200)
    expect((await billing.app.inject('/health')).statusCode).toBe(200)
    await billing.engine.enableServiceMaintenance('shop', { reason: 'other' })
    expect((await shop.app.inject('/v1/users')).statusCode).toBe(200)
    await billing.engine.disableServiceMaintenance('billing')
    expect((await billing.app.inject('/v1/users')).statusCode).toBe(200)
  })
})

describe('plugin behaviour', () => {
  it('registers undecorated routes and exposes the engine and request.state', async () => {
    const engine = createEngine({ store: 'memory' })
    const app = Fastify()
    await app.register(switchyard, { engine })
    app.addHook('onRequest', (request, _reply, done) => {
      request.state.userId = 'u1'
      done()
    })
    app.get('/me', (request) => ({ user: request.state.userId, same: app.switchyard === engine }))
    expect((await app.inject('/me')).json()).toEqual({ user: 'u1', same: true })
    expect(engine.getState('GET:/me')[0]!.status).toBe('active')
  })

  it('removes decorator hooks from routes, keeping the app’s own hooks in order', async () => {
    const calls: string[] = []
    const engine = createEngine({ store: 'memory' })
    const app = Fastify()
    await app.register(switchyard, { engine })
    app.get(
      '/x',
      {
        onRequest: [
          (_request, _reply, done) => {
            calls.push('first')
            done()
          },
          disabled({ reason: 'r' }),
          (_request, _reply, done) => {
            calls.push('second')
            done()
          },
        ],
      },
      () => 'ok',
    )
    expect((await app.inject('/x')).statusCode).toBe(503)
    expect(calls).toEqual([])
    await engine.enable('GET:/x')
    expect((await app.inject('/x')).statusCode).toBe(200)
    expect(calls).toEqual(['first', 'second'])
  })

  it('rejects two lifecycle decorators on one route at startup', async () => {
    const app = Fastify()
    await app.register(switchyard, { engine: createEngine({ store: 'memory' }) })
    expect(() => app.get('/x', { onRequest: [disabled(), maintenance()] }, () => 'ok')).toThrow(
      /2 lifecycle decorators; a route takes at most one/,
    )
  })

  it('handles routes with several methods', async () => {
    const engine = createEngine({ store: 'memory' })
    const app = Fastify()
    await app.register(switchyard, { engine })
    app.route({ method: ['GET', 'PUT'], url: '/multi', handler: () => 'ok' })
    await engine.disable('PUT:/multi')
    expect((await app.inject('/multi')).statusCode).toBe(200)
    expect((await app.inject({ method: 'PUT', url: '/multi' })).statusCode).toBe(503)
  })

  it('fails open when enforcement throws', async () => {
    const engine = createEngine({ store: 'memory' })
    const logged: unknown[] = []
    const app = Fastify({
      logger: {
        level: 'error',
        stream: { write: (line: string) => logged.push(JSON.parse(line)) },
      },
    })
    await app.register(switchyard, { engine })
    // A key function that throws makes the rate-limit step (and so enforcement) throw.
    const key = () => {
      throw new Error('key service down')
    }
    app.get('/x', { onRequest: rateLimit({ limit: '5/minute', key }) }, () => 'ok')
    const res = await app.inject('/x')
    expect(res.statusCode).toBe(200)
    expect(JSON.stringify(logged)).toContain('fail-open')
  })

  it('fails open when an asynchronous step rejects', async () => {
    const engine = createEngine({ store: 'memory' })
    const app = Fastify({ logger: false })
    await app.register(switchyard, { engine })
    const key = () => Promise.reject(new Error('key service timeout'))
    app.get('/x', { onRequest: rateLimit({ limit: '5/minute', key }) }, () => 'ok')
    expect((await app.inject('/x')).statusCode).toBe(200)
  })

  it('mounts the admin app, whose routes stay reachable during global maintenance', async () => {
    const engine = createEngine({ store: 'memory' })
    const app = Fastify()
    await app.register(switchyard, {
      engine,
      admin: { path: '/switchyard', auth: { username: 'admin', password: 's3cret' } },
    })
    app.get('/x', () => 'ok')
    await app.ready()
    expect(engine.listRoutes({ perPage: 500 }).items.map((s) => s.route)).toEqual(['GET:/x'])
    const login = await app.inject({
      method: 'POST',
      url: '/switchyard/api/auth/login',
      payload: { username: 'admin', password: 's3cret' },
    })
    const token = login.json<{ token: string }>().token
    const auth = { authorization: `Bearer ${token}` }
    await app.inject({
      method: 'POST',
      url: '/switchyard/api/global-maintenance/enable',
      headers: auth,
      payload: { reason: 'upgrade' },
    })
    expect((await app.inject('/x')).statusCode).toBe(503)
    const off = await app.inject({
      method: 'POST',
      url: '/switchyard/api/global-maintenance/disable',
      headers: auth,
      payload: {},
    })
    expect(off.statusCode).toBe(200)
    expect((await app.inject('/x')).statusCode).toBe(200)
    await app.close()
  })

  it('closes an engine it created with the app', async () => {
    const app = Fastify()
    await app.register(switchyard)
    let closed = false
    const close = app.switchyard.close.bind(app.switchyard)
    app.switchyard.close = async () => {
      closed = true
      await close()
    }
    await app.close()
    expect(closed).toBe(true)
  })
})

describe('closeEngine: what closing the app does to the engine', () => {
  /** An engine whose close() calls are counted. */
  function countedEngine() {
    const engine = createEngine({ store: 'memory' })
    const calls = { close: 0, start: 0 }
    const close = engine.close.bind(engine)
    const start = engine.start.bind(engine)
    engine.close = () => {
      calls.close++
      return close()
    }
    engine.start = () => {
      calls.start++
      return start()
    }
    return { engine, calls }
  }

  it('closes an engine passed in by default, and closing it again is harmless', async () => {
    const { engine, calls } = countedEngine()
    const app = Fastify()
    await app.register(switchyard, { engine })
    await app.ready()
    await app.close()
    expect(calls.close).toBe(1)
    // The owner closing it too gets the same, settled close.
    await expect(engine.close()).resolves.toBeUndefined()
  })

  it('leaves an engine passed in running with closeEngine: false', async () => {
    const { engine, calls } = countedEngine()
    const app = Fastify()
    await app.register(switchyard, { engine, closeEngine: false })
    app.get('/x', () => 'ok')
    await app.ready()
    await app.close()
    expect(calls.close).toBe(0)
    // Still usable by its owner: operations work and change its replica.
    await engine.disable('GET:/x', { reason: 'after close' })
    expect(engine.getState('GET:/x').map((state) => state.status)).toEqual(['disabled'])
    await engine.close()
  })

  it('closes an engine it created even with closeEngine: false', async () => {
    const app = Fastify()
    await app.register(switchyard, { closeEngine: false })
    let closed = false
    const close = app.switchyard.close.bind(app.switchyard)
    app.switchyard.close = async () => {
      closed = true
      await close()
    }
    await app.close()
    expect(closed).toBe(true)
  })

  it('refuses a closeEngine that is not a boolean, before touching the engine', async () => {
    const { engine, calls } = countedEngine()
    const app = Fastify()
    await expect(
      app.register(switchyard, { engine, closeEngine: 'yes' as unknown as boolean }),
    ).rejects.toThrow(/closeEngine must be true or false/)
    expect(calls).toEqual({ close: 0, start: 0 })
    await app.close().catch(() => undefined)
    expect(calls.close).toBe(0)
    await engine.close()
  })
})
