/**
 * The Redis store on a Redis Cluster and behind Sentinel: the whole store conformance suite
 * again (scripts, transactions and the change channel must work on both), plus what only these
 * setups have: the hash-tagged key layout and sharded pub/sub on a cluster, and the
 * environment forms.
 */
import { afterAll, describe, expect, it } from 'vitest'
import { keySlot } from '../../src/common/redis-target.js'
import { ConfigError } from '../../src/core/errors.js'
import { createStore } from '../../src/stores/index.js'
import { redisStore } from '../../src/stores/redis.js'
import { routeState, runStoreConformance } from './conformance.js'
import { testPrefix } from '../helpers/redis.js'
import {
  clusterTestsEnabled,
  deleteClusterKeys,
  deleteSentinelKeys,
  sentinelTestsEnabled,
  TEST_CLUSTER_NODES,
  TEST_SENTINEL_NAME,
  TEST_SENTINELS,
  testCluster,
} from '../helpers/redis-topologies.js'
import { until } from '../helpers/wait.js'

const clusterEnabled = await clusterTestsEnabled('test/stores/redis-topologies.test.ts (cluster)')
const sentinelEnabled = await sentinelTestsEnabled(
  'test/stores/redis-topologies.test.ts (sentinel)',
)
const clusterPrefixes: string[] = []
const sentinelPrefixes: string[] = []
afterAll(async () => {
  if (clusterEnabled)
    for (const prefix of clusterPrefixes) await deleteClusterKeys(`{${prefix.slice(0, -1)}}:*`)
  if (sentinelEnabled) for (const prefix of sentinelPrefixes) await deleteSentinelKeys(`${prefix}*`)
})

if (clusterEnabled) {
  let last = ''
  runStoreConformance('redis cluster', {
    create({ now }) {
      last = testPrefix('cluster')
      clusterPrefixes.push(last)
      return redisStore({ cluster: TEST_CLUSTER_NODES, prefix: last, now })
    },
    reopen: () => redisStore({ cluster: TEST_CLUSTER_NODES, prefix: last }),
    shared: true,
  })
}

if (sentinelEnabled) {
  let last = ''
  runStoreConformance('redis sentinel', {
    create({ now }) {
      last = testPrefix('sentinel')
      sentinelPrefixes.push(last)
      return redisStore({ sentinels: TEST_SENTINELS, name: TEST_SENTINEL_NAME, prefix: last, now })
    },
    reopen: () => redisStore({ sentinels: TEST_SENTINELS, name: TEST_SENTINEL_NAME, prefix: last }),
    shared: true,
  })
}

describe('redis connection forms', () => {
  it('reads the cluster and sentinel forms from the environment, refusing bad ones', () => {
    expect(createStore('redis', { CTL_REDIS_CLUSTER_NODES: '127.0.0.1:7000' }).kind).toBe('redis')
    expect(
      createStore('redis', { CTL_REDIS_SENTINELS: '127.0.0.1:26379', CTL_REDIS_SENTINEL_NAME: 'x' })
        .kind,
    ).toBe('redis')
    expect(() => createStore('redis', { CTL_REDIS_SENTINELS: '127.0.0.1:26379' })).toThrow(
      /CTL_REDIS_SENTINEL_NAME/,
    )
    expect(() => createStore('redis', { CTL_REDIS_CLUSTER_NODES: '127.0.0.1' })).toThrow(
      /CTL_REDIS_CLUSTER_NODES: "127.0.0.1" is not host:port/,
    )
    expect(() => createStore('redis', { CTL_REDIS_CLUSTER_NODES: 'a:99999' })).toThrow(ConfigError)
    expect(() =>
      createStore('redis', { CTL_REDIS_CLUSTER_NODES: 'a:1', CTL_REDIS_SENTINELS: 'b:2' }),
    ).toThrow(/not both/)
    expect(() => redisStore({ url: 'redis://x:1', cluster: ['a:1'] })).toThrow(
      /one Redis connection form/,
    )
    expect(() => redisStore({ sentinels: ['a:1'] })).toThrow(/name/)
  })

  it('computes cluster slots as Redis does (hash tags included)', () => {
    // Reference values from CLUSTER KEYSLOT.
    expect(keySlot('foo')).toBe(12182)
    expect(keySlot('{user1000}.following')).toBe(keySlot('{user1000}.followers'))
    expect(keySlot('{switchyard}:routes')).toBe(keySlot('switchyard'))
    expect(keySlot('a{}b')).toBe(keySlot('a{}b')) // an empty tag hashes the whole key
    expect(keySlot('{}x')).not.toBe(keySlot('x'))
  })
})

describe.skipIf(!clusterEnabled)('redis store on a cluster', () => {
  it('keeps every key of a store in one slot, and delivers changes over sharded pub/sub', async () => {
    const prefix = testPrefix('cluster-layout')
    clusterPrefixes.push(prefix)
    const a = redisStore({ cluster: TEST_CLUSTER_NODES, prefix, onFault: () => undefined })
    const b = redisStore({ cluster: TEST_CLUSTER_NODES, prefix, onFault: () => undefined })
    const cluster = testCluster()
    try {
      await a.connect()
      await b.connect()
      const seen: string[] = []
      b.changes.subscribe((event) => {
        if (event.type === 'route_state') seen.push(event.route)
      })
      await a.routes.put(routeState('GET:/x'))
      await a.maintenance.putService('svc', {
        active: true,
        reason: 'drill',
        include_force_active: false,
        exempt_paths: [],
      })
      await until(() => seen.length === 1)
      const tag = `{${prefix.slice(0, -1)}}:`
      expect(a.backend.kind === 'redis' && a.backend.redis.prefix).toBe(tag)
      const slot = keySlot(tag)
      // Every key of the store is in the tag's slot.
      const keys: string[] = []
      for (const node of cluster.nodes('master')) {
        const [, found] = await node.scan('0', 'MATCH', `${tag}*`, 'COUNT', 10_000)
        keys.push(...found)
      }
      expect(keys.length).toBeGreaterThanOrEqual(3)
      for (const key of keys) expect(keySlot(key)).toBe(slot)
      expect(await cluster.call('CLUSTER', 'KEYSLOT', keys[0] ?? '')).toBe(slot)
      // The change channel is a shard channel (no plain subscriber on any node).
      const plain = await Promise.all(
        cluster.nodes('master').map((node) => node.call('PUBSUB', 'NUMSUB', `${tag}changes`)),
      )
      for (const reply of plain) expect((reply as [string, number])[1]).toBe(0)
      const sharded = await Promise.all(
        cluster.nodes('master').map((node) => node.call('PUBSUB', 'SHARDNUMSUB', `${tag}changes`)),
      )
      expect(sharded.map((reply) => (reply as [string, number])[1]).reduce((x, y) => x + y)).toBe(2)
    } finally {
      cluster.disconnect()
      await a.close()
      await b.close()
    }
  })
})
