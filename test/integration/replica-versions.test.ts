/**
 * Versioned change events: a replica never rolls back to an older write, whatever order the
 * events arrive in, and replicas sharing Redis converge on the stored state under concurrent
 * writes from several instances.
 */
import { afterAll, describe, expect, it } from 'vitest'
import { createEngine } from '../../src/create-engine.js'
import { RouteRegistry } from '../../src/core/registry.js'
import { Replica } from '../../src/core/replica.js'
import { redisStore } from '../../src/stores/redis.js'
import { routeState } from '../stores/conformance.js'
import { until } from '../helpers/wait.js'
import { deleteKeys, redisTestsEnabled, TEST_REDIS_URL, testPrefix } from '../helpers/redis.js'

describe('replica versions', () => {
  function setup() {
    const registry = new RouteRegistry('dev')
    const replica = new Replica(registry)
    const slot = registry.register('svc', 'GET', '/a', null)
    const event = (reason: string, version?: number) => ({
      type: 'route_state' as const,
      service: 'svc',
      route: 'GET:/a',
      state: routeState('GET:/a', { status: 'disabled', reason }),
      ...(version === undefined ? {} : { version }),
    })
    return { replica, slot, event }
  }

  it('drops an event older than the one already applied to the same record', () => {
    const { replica, slot, event } = setup()
    expect(replica.apply(event('five', 5))).toBe(true)
    expect(replica.apply(event('three', 3))).toBe(false)
    expect(replica.apply(event('five again', 5))).toBe(false)
    expect(slot.state.reason).toBe('five')
    // Other records have their own versions.
    expect(
      replica.apply({
        type: 'global_maintenance',
        config: { active: true, reason: 'g', include_force_active: false, exempt_paths: [] },
        version: 4,
      }),
    ).toBe(true)
    // Unversioned (a local write applied by the operations) applies until the feed is live…
    expect(replica.apply(event('local'))).toBe(true)
    expect(slot.state.reason).toBe('local')
    // …and is ignored after, since the feed already delivered the same write with its version.
    replica.live = true
    expect(replica.apply(event('stale local copy'))).toBe(false)
    expect(slot.state.reason).toBe('local')
  })

  it('treats everything up to a snapshot version as already loaded', () => {
    const { replica, slot, event } = setup()
    replica.apply(event('old', 50))
    replica.load({ overrides: [], global: null, services: new Map(), version: 10 })
    expect(slot.state.status).toBe('active')
    expect(replica.apply(event('before snapshot', 9))).toBe(false)
    expect(replica.apply(event('after snapshot', 11))).toBe(true)
    expect(slot.state.reason).toBe('after snapshot')
  })
})

const enabled = await redisTestsEnabled('test/integration/replica-versions.test.ts')

describe.skipIf(!enabled)('replicas sharing Redis under concurrent writes', () => {
  const prefix = testPrefix('replica-versions')
  afterAll(() => deleteKeys(prefix))

  it('converge on the stored state', async () => {
    const stores = [1, 2, 3].map(() => redisStore({ url: TEST_REDIS_URL, prefix }))
    const engines = stores.map((store) => {
      const engine = createEngine({
        store,
        service: 'svc',
      })
      engine.registerRoute('GET', '/a')
      return engine
    })
    await Promise.all(engines.map((engine) => engine.start()))
    try {
      await Promise.all(
        engines.map(async (engine, n) => {
          for (let i = 0; i < 15; i++) {
            await (i % 2 === 0
              ? engine.disable('GET:/a', { reason: `e${n}-${i}` })
              : engine.setMaintenance('GET:/a', { reason: `e${n}-${i}` }))
          }
        }),
      )
      const stored = (await stores[0]!.routes.list())[0]!
      await until(() =>
        engines.every((engine) => engine.getState('GET:/a')[0]?.reason === stored.reason),
      )
      for (const engine of engines) {
        expect(engine.getState('GET:/a')[0]).toMatchObject({
          status: stored.status,
          reason: stored.reason,
        })
      }
    } finally {
      await Promise.all(engines.map((engine) => engine.close()))
    }
  })
})
