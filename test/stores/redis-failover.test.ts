/**
 * The Redis store through a primary failover.
 *
 * By default, on a private Sentinel setup the test starts itself (a primary, a replica and three
 * sentinels as `redis-server` children on free loopback ports, torn down afterwards): the
 * failover drill in short form kills the primary under paced load on two instances, and the
 * answers, the acknowledged admin writes and the rate limits are checked; then a second setup
 * fails over by `SENTINEL FAILOVER` while another instance's subscription follows the new
 * primary, reloads its replica once, and keeps receiving changes.
 *
 * With `SY_TEST_REDIS_FAILOVER=1`, also on the shared local cluster (`CLUSTER FAILOVER` on the
 * replica of the store's shard): that failover moves primaries the other cluster test files use
 * at the same time (vitest runs files in parallel), so it is not part of the default suite; the
 * `redis-outage --cluster` drill covers the same path under load.
 */
import { execFileSync } from 'node:child_process'
import { Redis } from 'ioredis'
import { afterEach, describe, expect, it } from 'vitest'
import { privateSentinelSetup, redisFailover } from '../../drill/drills/redis-failover.js'
import { PrivateSentinel } from '../../drill/lib/private-sentinel.js'
import { keySlot } from '../../src/common/redis-target.js'
import { redisStore, type RedisStoreOptions } from '../../src/stores/redis.js'
import type { Store } from '../../src/stores/types.js'
import { routeState } from './conformance.js'
import { testPrefix } from '../helpers/redis.js'
import { deleteClusterKeys, TEST_CLUSTER_NODES } from '../helpers/redis-topologies.js'
import { until } from '../helpers/wait.js'

const sharedEnabled = process.env.SY_TEST_REDIS_FAILOVER === '1'

const hasRedisServer = (() => {
  try {
    execFileSync('redis-server', ['--version'], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
})()

const hostPort = (text: string) => {
  const [host = '', port = ''] = text.split(':')
  return { host, port: Number(port) }
}

/** Two stores on one prefix; `b` records the routes it hears of and its reloads. */
async function pair(options: RedisStoreOptions) {
  const faults: string[] = []
  const a = redisStore({ ...options, onFault: (message) => faults.push(message) })
  const b = redisStore({ ...options, onFault: (message) => faults.push(message) })
  await a.connect()
  await b.connect()
  const heard: string[] = []
  let reloads = 0
  b.changes.subscribe((event) => {
    if (event.type === 'route_state') heard.push(event.route)
  })
  b.changes.onResync(() => reloads++)
  return { a, b, heard, reloads: () => reloads, faults }
}

/** Writes until a write is acknowledged (the failover may refuse a few). */
async function writeWhenAble(store: Store, route: string): Promise<void> {
  await until(async () => {
    try {
      await store.routes.put(routeState(route))
      return true
    } catch {
      return false
    }
  }, 15_000)
}

describe.skipIf(!hasRedisServer && process.env.CI === undefined)(
  'redis store through a failover of a private Sentinel setup',
  () => {
    const started: PrivateSentinel[] = []
    afterEach(async () => {
      await Promise.all(started.splice(0).map((setup) => setup.stop()))
    })

    it('primary killed under load: answers go on, no acknowledged write lost, limits enforced again', async () => {
      const setup = new PrivateSentinel()
      started.push(setup)
      await setup.start()
      const before = await setup.primary()
      const figures = await redisFailover('short', privateSentinelSetup(setup))
      const value = (prefix: string) =>
        figures.find((figure) => figure.name.startsWith(prefix))?.value
      expect(Number(value('requests sent'))).toBeGreaterThan(100)
      expect(value('answers 5xx')).toBe(0)
      expect(value('requests hung')).toBe(0)
      expect(value('acknowledged admin writes lost')).toBe(0)
      expect(value('ms from the primary shut down')).not.toBe('never')
      expect(value('ms from the failover to a limit')).not.toBe('never')
      expect(Number(String(value('admin writes acknowledged')).split(' / ')[0])).toBeGreaterThan(5)
      // The replica was promoted: the sentinels name another server.
      const after = await setup.primary()
      expect(after).not.toBeNull()
      expect(after).not.toBe(before)
    }, 60_000)

    it('sentinel: the subscription follows the new primary', async () => {
      const setup = new PrivateSentinel()
      started.push(setup)
      await setup.start()
      const prefix = testPrefix('failover-sentinel')
      const { a, b, heard, reloads } = await pair({
        sentinels: setup.sentinels,
        name: setup.name,
        prefix,
      })
      try {
        await a.routes.put(routeState('GET:/before'))
        await until(() => heard.length === 1)
        const before = await setup.primary()
        const sentinel = new Redis(hostPort(setup.sentinels[0] ?? ''))
        await sentinel.call('SENTINEL', 'FAILOVER', setup.name)
        sentinel.disconnect()
        await until(() => reloads() > 0, 20_000)
        await writeWhenAble(a, 'GET:/after')
        await until(() => heard.length === 2, 10_000)
        expect(heard).toEqual(['GET:/before', 'GET:/after'].map((route) => routeState(route).route))
        expect(await setup.primary()).not.toBe(before)
      } finally {
        await a.close()
        await b.close()
      }
    }, 60_000)
  },
)

describe.skipIf(!sharedEnabled)('redis store through a failover of the shared cluster', () => {
  it('cluster: the sharded subscription follows the slot to the promoted replica', async () => {
    const prefix = testPrefix('failover-cluster')
    const { a, b, heard, reloads } = await pair({ cluster: TEST_CLUSTER_NODES, prefix })
    try {
      await a.routes.put(routeState('GET:/before'))
      await until(() => heard.length === 1)
      const slot = keySlot(`{${prefix.slice(0, -1)}}`)
      const seed = new Redis(hostPort(TEST_CLUSTER_NODES[0] ?? ''))
      const ranges = (await seed.call('CLUSTER', 'SLOTS')) as [
        number,
        number,
        [string, number],
        [string, number],
      ][]
      seed.disconnect()
      const range = ranges.find(([from, to]) => slot >= from && slot <= to)
      expect(range).toBeDefined()
      const replica = new Redis({ host: range?.[3][0] ?? '', port: range?.[3][1] ?? 0 })
      await replica.call('CLUSTER', 'FAILOVER')
      replica.disconnect()
      await until(() => reloads() > 0, 15_000)
      await writeWhenAble(a, 'GET:/after')
      await until(() => heard.length === 2, 10_000)
      expect(heard).toEqual(['GET:/before', 'GET:/after'].map((route) => routeState(route).route))
    } finally {
      await a.close()
      await b.close()
      await deleteClusterKeys(`{${prefix.slice(0, -1)}}:*`)
    }
  }, 60_000)
})
