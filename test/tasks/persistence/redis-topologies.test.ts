/**
 * The Redis task store on a Redis Cluster and behind Sentinel: the whole task-store
 * conformance suite again. On the cluster the store's prefix becomes a hash tag, so every
 * script (whose keys are derived from the prefix) stays in one slot.
 */
import { describe, expect, it } from 'vitest'
import { redisStore } from '../../../src/tasks/stores/index.js'
import { keySlot } from '../../../src/common/redis-target.js'
import {
  clusterTestsEnabled,
  deleteClusterKeys,
  deleteSentinelKeys,
  sentinelTestsEnabled,
  TEST_CLUSTER_NODES,
  TEST_SENTINEL_NAME,
  TEST_SENTINELS,
  testCluster,
} from '../../helpers/redis-topologies.js'
import { storeConformance } from './conformance/index.js'
import { makeTask, uniquePrefix } from './helpers.js'

const clusterPrefix = `sy-test:${uniquePrefix('redis-cluster')}`
const sentinelPrefix = `sy-test:${uniquePrefix('redis-sentinel')}`
const clusterTag = `{${clusterPrefix.replace(/:$/, '')}}`

storeConformance({
  name: 'Redis Cluster',
  enabled: () => clusterTestsEnabled('redis-topologies.test.ts (cluster)'),
  open: () => redisStore({ cluster: TEST_CLUSTER_NODES, prefix: clusterPrefix }),
  cleanup: () => deleteClusterKeys(`${clusterTag}*`),
})

storeConformance({
  name: 'Redis Sentinel',
  enabled: () => sentinelTestsEnabled('redis-topologies.test.ts (sentinel)'),
  open: () =>
    redisStore({ sentinels: TEST_SENTINELS, name: TEST_SENTINEL_NAME, prefix: sentinelPrefix }),
  cleanup: () => deleteSentinelKeys(`${sentinelPrefix}*`),
})

const clusterEnabled = await clusterTestsEnabled('redis-topologies.test.ts (cluster layout)')

describe.skipIf(!clusterEnabled)('Redis task store on a cluster', () => {
  it('keeps every key in the prefix tag slot', async () => {
    const prefix = `sy-test:${uniquePrefix('redis-cluster-layout')}:`
    const store = redisStore({ cluster: TEST_CLUSTER_NODES, prefix })
    const cluster = testCluster()
    const tag = `{${prefix.slice(0, -1)}}:`
    try {
      await store.init()
      await store.records.save([makeTask({ func_name: 'layout' })])
      const keys: string[] = []
      for (const node of cluster.nodes('master')) {
        const [, found] = await node.scan('0', 'MATCH', `${tag}*`, 'COUNT', 10_000)
        keys.push(...found)
      }
      expect(keys.length).toBeGreaterThan(1)
      for (const key of keys) expect(keySlot(key)).toBe(keySlot(tag))
    } finally {
      cluster.disconnect()
      await store.close()
      await deleteClusterKeys(`${tag}*`)
    }
  })
})
