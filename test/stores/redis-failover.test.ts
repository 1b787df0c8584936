/**
 * The Redis store through a primary failover, on the local cluster (`CLUSTER FAILOVER` on the
 * replica of the store's shard) and Sentinel (`SENTINEL FAILOVER`): another instance's
 * subscription follows the new primary, reloads its replica once, and keeps receiving changes.
 *
 * Runs only with `SY_TEST_REDIS_FAILOVER=1`: a failover moves the primaries that the other
 * cluster and sentinel test files use at the same time (vitest runs files in parallel), so it
 * is not part of the default suite; the `redis-outage --cluster / --sentinel` drill covers the
 * same path under load.
 */
import { Redis } from 'ioredis'
import { describe, expect, it } from 'vitest'
import { keySlot } from '../../src/common/redis-target.js'
import { redisStore, type RedisStoreOptions } from '../../src/stores/redis.js'
import type { Store } from '../../src/stores/types.js'
import { routeState } from './conformance.js'
import { testPrefix } from '../helpers/redis.js'
import {
  deleteClusterKeys,
  deleteSentinelKeys,
  TEST_CLUSTER_NODES,
  TEST_SENTINEL_NAME,
  TEST_SENTINELS,
} from '../helpers/redis-topologies.js'
import { until } from '../helpers/wait.js'

const enabled = process.env.SY_TEST_REDIS_FAILOVER === '1'

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

describe.skipIf(!enabled)('redis store through a failover', () => {
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

  it('sentinel: the subscription follows the new primary', async () => {
    const prefix = testPrefix('failover-sentinel')
    const { a, b, heard, reloads } = await pair({
      sentinels: TEST_SENTINELS,
      name: TEST_SENTINEL_NAME,
      prefix,
    })
    try {
      await a.routes.put(routeState('GET:/before'))
      await until(() => heard.length === 1)
      const sentinel = new Redis(hostPort(TEST_SENTINELS[0] ?? ''))
      await sentinel.call('SENTINEL', 'FAILOVER', TEST_SENTINEL_NAME)
      sentinel.disconnect()
      await until(() => reloads() > 0, 20_000)
      await writeWhenAble(a, 'GET:/after')
      await until(() => heard.length === 2, 10_000)
      expect(heard).toEqual(['GET:/before', 'GET:/after'].map((route) => routeState(route).route))
    } finally {
      await a.close()
      await b.close()
      await deleteSentinelKeys(`${prefix}*`)
    }
  }, 60_000)
})
