/**
 * The Redis store through a primary failover on a Redis Cluster, on a private cluster the test
 * starts itself (six `redis-server` children on free loopback ports, three primaries with a
 * replica each, torn down afterwards; the shared cluster on 7000-7005 is never touched):
 * - the failover drill in short form shuts down the primary serving the store's slot under
 *   paced load on two instances: every request is answered (no 5xx), no acknowledged admin
 *   write is lost, rate limits are enforced again after the replica took over;
 * - `CLUSTER FAILOVER` on the slot's replica: another instance's sharded subscription follows
 *   the slot to the promoted replica, reloads its replica, and keeps receiving changes.
 */
import { Redis } from 'ioredis'
import { afterEach, describe, expect, it } from 'vitest'
import { privateClusterSetup, redisFailover } from '../../drill/drills/redis-failover.js'
import { PrivateCluster } from '../../drill/lib/private-topologies.js'
import { keySlot } from '../../src/common/redis-target.js'
import { routeState } from './conformance.js'
import {
  expectFailoverMet,
  hasRedisServer,
  hostPort,
  pair,
  writeWhenAble,
} from '../helpers/failover.js'
import { testPrefix } from '../helpers/redis.js'
import { until } from '../helpers/wait.js'

describe.skipIf(!hasRedisServer && process.env.CI === undefined)(
  'redis store through a failover of a private cluster',
  () => {
    const started: PrivateCluster[] = []
    afterEach(async () => {
      await Promise.all(started.splice(0).map((cluster) => cluster.stop()))
    })
    async function clusterSetup(): Promise<PrivateCluster> {
      const cluster = new PrivateCluster()
      started.push(cluster)
      await cluster.start()
      return cluster
    }

    it('primary shut down under load: answers go on, no acknowledged write lost, limits enforced again', async () => {
      const cluster = await clusterSetup()
      const figures = await redisFailover('short', {
        ...privateClusterSetup(cluster),
        // The machine may be loaded: a slow counter call must not keep the limit open.
        commandTimeout: 0.5,
      })
      expectFailoverMet(figures)
    }, 60_000)

    it('CLUSTER FAILOVER: the sharded subscription follows the slot to the promoted replica', async () => {
      const cluster = await clusterSetup()
      const prefix = testPrefix('failover-cluster')
      const { a, b, heard, reloads } = await pair({ cluster: cluster.nodes.slice(0, 3), prefix })
      try {
        await a.routes.put(routeState('GET:/before'))
        await until(() => heard.length === 1)
        const slot = keySlot(`{${prefix.slice(0, -1)}}`)
        const seed = new Redis(hostPort(cluster.nodes[0] ?? ''))
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
      }
    }, 60_000)
  },
)
