/**
 * Rate limiting as a feature of the engine: created with the engine, its backend chosen from
 * the options of `createEngine({ rateLimit })` and the plugin when the engine starts, its
 * stored policies loaded with the engine.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Fastify, { type FastifyInstance } from 'fastify'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { ConfigError, createEngine, type Engine } from '../../src/index.js'
import { adminApp, rateLimit, switchyard } from '../../src/fastify/index.js'
import { MemoryPolicyStore } from '../../src/rate-limit/stores/memory.js'
import { filePolicyStore } from '../../src/rate-limit/stores/file.js'
import { fileStore } from '../../src/stores/file.js'
import { redisStore } from '../../src/stores/redis.js'
import { buildRoutePolicy } from '../../src/rate-limit/policy.js'
import { pushMessage } from '../helpers/logger.js'

const dir = mkdtempSync(join(tmpdir(), 'switchyard-rl-feature-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
const apps: FastifyInstance[] = []
const engines: Engine[] = []
afterEach(async () => {
  await Promise.all(apps.splice(0).map((app) => app.close()))
  await Promise.all(engines.splice(0).map((engine) => engine.close()))
})

/** A logger that keeps what it is told. */
function recordingLogger() {
  const errors: string[] = []
  return {
    errors,
    logger: { warn: () => undefined, error: pushMessage(errors) },
  }
}

describe('rate limiting on the engine store', () => {
  it('loads the stored policies of the engine’s backend when the engine starts', async () => {
    const path = join(dir, 'stored.json')
    const seed = fileStore({ path })
    await seed.connect()
    if (seed.backend.kind !== 'file') throw new Error('expected a file store')
    await filePolicyStore(seed.backend.sections).putRoutePolicy(
      buildRoutePolicy('default', 'GET', '/x', { limit: '2/minute' }),
    )
    await seed.close()

    const engine = createEngine({
      store: fileStore({ path }),
      env: 'prod',
      rateLimit: { counterSnapshotPath: join(dir, 'stored.counters.json') },
    })
    engines.push(engine)
    await engine.start()
    expect(engine.listRateLimitPolicies().map((p) => p.limit)).toEqual(['2/minute'])
  })

  it('uses the stores the options name instead of the backend’s', async () => {
    const policies = new MemoryPolicyStore()
    await policies.putRoutePolicy(buildRoutePolicy('default', 'GET', '/y', { limit: '1/second' }))
    const engine = createEngine({
      store: fileStore({ path: join(dir, 'own-stores.json') }),
      env: 'prod',
      rateLimit: { policies, counterSnapshotPath: join(dir, 'own-stores.counters.json') },
    })
    engines.push(engine)
    await engine.start()
    expect(engine.listRateLimitPolicies().map((p) => p.limit)).toEqual(['1/second'])
  })

  it('keeps the declared policies while the store is unreachable, with one retry loop', async () => {
    const { errors, logger } = recordingLogger()
    const engine = createEngine({
      store: redisStore({
        url: 'redis://127.0.0.1:1',
        prefix: 'test:rl-feature:',
        onFault: () => undefined,
      }),
      env: 'prod',
      logger,
    })
    engines.push(engine)
    const slot = engine.registerRoute('GET', '/z')
    engine.rateLimits.declare(slot, { limit: '1/minute' })
    await engine.start()
    // The store's loader reports the outage; the features load only once it is reachable,
    // instead of each retrying against a backend that is known to be down.
    expect(errors).toEqual([
      expect.stringContaining('store "redis" unavailable at startup') as unknown,
    ])
    expect(engine.listRateLimitPolicies().map((p) => p.limit)).toEqual(['1/minute'])
  })
})

describe('rate-limit options', () => {
  /** An app with a rate-limited route `/x` (5/minute) and the admin app. */
  async function app(order: 'admin first' | 'plugin first') {
    const engine = createEngine({ store: 'memory', env: 'prod' })
    engines.push(engine)
    const server = Fastify()
    apps.push(server)
    const plugin = () =>
      server.register(switchyard, { engine, rateLimit: { headers: 'blocked' as const } })
    if (order === 'admin first') {
      await server.register(adminApp, { engine, path: '/switchyard' })
      await plugin()
    } else {
      await plugin()
      await server.register(adminApp, { engine, path: '/switchyard' })
    }
    server.get('/x', { onRequest: rateLimit({ limit: '5/minute' }) }, () => 'ok')
    await server.ready()
    return server
  }

  for (const order of ['admin first', 'plugin first'] as const) {
    it(`apply when the admin app is mounted on its own (${order})`, async () => {
      const server = await app(order)
      const allowed = await server.inject('/x')
      expect(allowed.statusCode).toBe(200)
      // `headers: 'blocked'` took effect: no rate-limit headers on an allowed response.
      expect(allowed.headers['x-ratelimit-limit']).toBeUndefined()
      for (let i = 0; i < 4; i++) await server.inject('/x')
      const blocked = await server.inject('/x')
      expect(blocked.statusCode).toBe(429)
      expect(blocked.headers['x-ratelimit-limit']).toBe('5')
      // The admin app sees the same service.
      const policies = await server.inject('/switchyard/api/rate-limits')
      expect(policies.json<{ items: { limit: string }[] }>().items[0]?.limit).toBe('5/minute')
    })
  }

  it('given to createEngine and to the plugin, merge option by option', async () => {
    const engine = createEngine({
      store: 'memory',
      env: 'prod',
      rateLimit: { headers: 'blocked', trustedProxies: ['203.0.113.0/24'] },
    })
    engines.push(engine)
    const server = Fastify()
    apps.push(server)
    await server.register(switchyard, { engine, rateLimit: { headers: 'all' } })
    server.get('/x', { onRequest: rateLimit({ limit: '1/minute' }) }, () => 'ok')
    const forwarded = { 'x-forwarded-for': '198.51.100.7' }
    // The proxy is trusted (the engine's option kept), so the forwarded client is counted …
    const first = await server.inject({
      url: '/x',
      remoteAddress: '203.0.113.9',
      headers: forwarded,
    })
    // … and the headers are on every counted response (the plugin's option won).
    expect(first.headers['x-ratelimit-remaining']).toBe('0')
    const other = await server.inject({
      url: '/x',
      remoteAddress: '203.0.113.10',
      headers: forwarded,
    })
    expect(other.statusCode).toBe(429)
  })

  it('are refused once the engine has started, naming where to give them', async () => {
    const engine = createEngine({ store: 'memory' })
    engines.push(engine)
    // Reading engine.rateLimits has no effect: options are still accepted afterwards.
    expect(engine.rateLimits.listRateLimitPolicies()).toEqual([])
    engine.rateLimits.configure({ headers: 'blocked' })
    await engine.start()
    expect(() => engine.rateLimits.configure({ headers: 'all' })).toThrow(ConfigError)
    const server = Fastify()
    apps.push(server)
    await expect(
      server.register(switchyard, { engine, rateLimit: { headers: 'all' } }),
    ).rejects.toThrow(/before the engine starts: pass them to createEngine\(\{ rateLimit \}\)/)
  })

  it('are checked when given, not at the first request', () => {
    expect(() =>
      createEngine({ store: 'memory', rateLimit: { headers: 'some' as never } }),
    ).toThrow(ConfigError)
    expect(() =>
      createEngine({ store: 'memory', rateLimit: { trustedProxies: ['not an address'] } }),
    ).toThrow(/trustedProxies/)
    expect(() => createEngine({ store: 'memory', rateLimit: { redisCommandTimeout: 0 } })).toThrow(
      /redisCommandTimeout/,
    )
  })
})

describe('engine integration', () => {
  it('audits rate-limit changes through the engine, under the flat names and the handles', async () => {
    const engine = createEngine({ store: 'memory' })
    engines.push(engine)
    engine.registerRoute('GET', '/search')
    await engine.start()
    await engine.setRateLimitPolicy({ path: '/search', method: 'GET', limit: '5/minute' })
    await engine.rateLimits.global.set({ limit: '100/minute' })
    await engine.setServiceRateLimit('default', { limit: '50/minute' })
    expect(engine.getGlobalRateLimit()?.limit).toBe('100/minute')
    expect(engine.rateLimits.service('default').get()?.limit).toBe('50/minute')
    const page = await engine.getAuditLog()
    expect(page.items.map((entry) => entry.action)).toEqual([
      'svc_rl_set',
      'global_rl_set',
      'rl_policy_set',
    ])
    expect(page.items[1]!.route).toBe('[Global Rate Limit]')
  })
})
