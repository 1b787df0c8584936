/**
 * The local Redis Cluster and Sentinel setups the topology tests use (started by
 * `scripts/redis-topologies.sh`): a 6-node cluster on 127.0.0.1:7000-7005 and a primary named
 * `switchyard` behind sentinels on 127.0.0.1:26379-26381. Override with
 * `SY_TEST_REDIS_CLUSTER_NODES` and `SY_TEST_REDIS_SENTINELS`. As with the single server, the
 * tests skip only when `CI` is unset and the setup is unreachable; in CI they run and fail.
 */
import { Cluster, Redis } from 'ioredis'
import { serverEnabled } from './servers.js'

/** Seed nodes of the test cluster. */
export const TEST_CLUSTER_NODES = (
  process.env.SY_TEST_REDIS_CLUSTER_NODES ?? '127.0.0.1:7000,127.0.0.1:7001,127.0.0.1:7002'
).split(',')

/** Sentinels of the test primary. */
export const TEST_SENTINELS = (
  process.env.SY_TEST_REDIS_SENTINELS ?? '127.0.0.1:26379,127.0.0.1:26380,127.0.0.1:26381'
).split(',')

/** The primary's name the sentinels watch. */
export const TEST_SENTINEL_NAME = process.env.SY_TEST_REDIS_SENTINEL_NAME ?? 'switchyard'

const node = (text: string) => {
  const [host = '', port = ''] = text.split(':')
  return { host, port: Number(port) }
}

/** Whether the cluster tests of `file` run (warns when skipped outside CI). */
export function clusterTestsEnabled(file: string): Promise<boolean> {
  return serverEnabled(`redis://${TEST_CLUSTER_NODES[0] ?? ''}`, file)
}

/** Whether the sentinel tests of `file` run (warns when skipped outside CI). */
export function sentinelTestsEnabled(file: string): Promise<boolean> {
  return serverEnabled(`redis://${TEST_SENTINELS[0] ?? ''}`, file)
}

/** A cluster client for checks and cleanup (the caller disconnects it). */
export function testCluster(): Cluster {
  return new Cluster(TEST_CLUSTER_NODES.map(node), { scaleReads: 'master' })
}

/** A client of the current sentinel primary (the caller disconnects it). */
export function testSentinelPrimary(): Redis {
  return new Redis({ sentinels: TEST_SENTINELS.map(node), name: TEST_SENTINEL_NAME })
}

/** Deletes every key matching `pattern` on every cluster primary, one key per command. */
export async function deleteClusterKeys(pattern: string): Promise<void> {
  const cluster = testCluster()
  try {
    await new Promise<void>((resolve, reject) => {
      cluster.once('ready', resolve)
      cluster.once('error', reject)
    })
    for (const primary of cluster.nodes('master')) {
      let cursor = '0'
      do {
        const [next, keys] = await primary.scan(cursor, 'MATCH', pattern, 'COUNT', 1000)
        cursor = next
        await Promise.all(keys.map((key) => primary.unlink(key)))
      } while (cursor !== '0')
    }
  } finally {
    cluster.disconnect()
  }
}

/** Deletes every key matching `pattern` on the sentinel primary. */
export async function deleteSentinelKeys(pattern: string): Promise<void> {
  const client = testSentinelPrimary()
  try {
    let cursor = '0'
    do {
      const [next, keys] = await client.scan(cursor, 'MATCH', pattern, 'COUNT', 1000)
      cursor = next
      if (keys.length > 0) await client.unlink(...keys)
    } while (cursor !== '0')
  } finally {
    client.disconnect()
  }
}
