/**
 * The Redis store through a primary failover behind Sentinel, on a private setup the test starts
 * itself (a primary, a replica and three sentinels as `redis-server` children on free loopback
 * ports, torn down afterwards; the shared setups are never touched):
 * - the failover drill in short form kills the primary under paced load on two instances:
 *   every request is answered (no 5xx), no acknowledged admin write is lost, rate limits are
 *   enforced again after the promotion;
 * - `SENTINEL FAILOVER`: another instance's subscription follows the new primary, reloads its
 *   replica, and keeps receiving changes.
 * The cluster's failover is in redis-cluster-failover.test.ts.
 */
import { Redis } from 'ioredis'
import { afterEach, describe, expect, it } from 'vitest'
import { privateSentinelSetup, redisFailover } from '../../drill/drills/redis-failover.js'
import { PrivateSentinel } from '../../drill/lib/private-topologies.js'
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
  'redis store through a failover of a private Sentinel setup',
  () => {
    const started: PrivateSentinel[] = []
    afterEach(async () => {
      await Promise.all(started.splice(0).map((setup) => setup.stop()))
    })
    async function sentinelSetup(): Promise<PrivateSentinel> {
      const setup = new PrivateSentinel()
      started.push(setup)
      await setup.start()
      return setup
    }

    it('primary shut down under load: answers go on, no acknowledged write lost, limits enforced again', async () => {
      const setup = await sentinelSetup()
      const before = await setup.primary()
      const figures = await redisFailover('short', {
        ...privateSentinelSetup(setup),
        // The machine may be loaded: a slow counter call must not keep the limit open.
        commandTimeout: 0.5,
      })
      expectFailoverMet(figures)
      // The replica was promoted: the sentinels name another server.
      const after = await setup.primary()
      expect(after).not.toBeNull()
      expect(after).not.toBe(before)
    }, 60_000)

    it('SENTINEL FAILOVER: the subscription follows the new primary', async () => {
      const setup = await sentinelSetup()
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
