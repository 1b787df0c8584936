/**
 * Redis rate-limit counters on a Redis Cluster and behind Sentinel: the same outcomes as the
 * memory counters, request for request. On a cluster the counter keys spread over the shards:
 * requests are grouped by slot, and a request whose limits live in several slots is counted
 * limit by limit (first blocking limit stops it, as the script does).
 */
import { afterAll, describe, expect, it } from 'vitest'
import {
  ALGORITHMS,
  type CounterOutcome,
  type CounterRule,
} from '../../src/rate-limit/algorithms.js'
import { memoryCounters } from '../../src/rate-limit/counters/memory.js'
import { redisCounters } from '../../src/rate-limit/counters/redis.js'
import type { CounterCheck } from '../../src/rate-limit/counters/types.js'
import { keySlot } from '../../src/common/redis-target.js'
import {
  clusterTestsEnabled,
  deleteClusterKeys,
  deleteSentinelKeys,
  sentinelTestsEnabled,
  TEST_CLUSTER_NODES,
  TEST_SENTINEL_NAME,
  TEST_SENTINELS,
} from '../helpers/redis-topologies.js'

const prefix = `test:rl-topology:${process.pid}:`
const clusterEnabled = await clusterTestsEnabled(
  'test/rate-limit/redis-topologies.test.ts (cluster)',
)
const sentinelEnabled = await sentinelTestsEnabled(
  'test/rate-limit/redis-topologies.test.ts (sentinel)',
)

afterAll(async () => {
  if (clusterEnabled) await deleteClusterKeys(`${prefix}*`)
  if (sentinelEnabled) await deleteSentinelKeys(`${prefix}*`)
})

const verdicts = (outcomes: readonly CounterOutcome[]): CounterOutcome[] =>
  outcomes.map(({ allowed, effective, remaining, resetAt, retryAfterMs }) => ({
    allowed,
    effective,
    remaining,
    resetAt,
    retryAfterMs,
  }))

const forms = [
  { name: 'cluster', enabled: clusterEnabled, options: { cluster: TEST_CLUSTER_NODES } },
  {
    name: 'sentinel',
    enabled: sentinelEnabled,
    options: { sentinels: TEST_SENTINELS, name: TEST_SENTINEL_NAME },
  },
] as const

for (const form of forms) {
  describe.skipIf(!form.enabled)(`Redis counters (${form.name})`, () => {
    it('match the memory counters outcome for outcome, for every algorithm, in one turn or apart', async () => {
      const t0 = 1_800_000_000_000
      const offsets = [0, 1, 2, 3, 4, 5, 6, 7, 2500, 9999, 10_000, 10_001, 15_000, 21_000, 40_000]
      const counters = redisCounters({
        ...form.options,
        commandTimeout: 10,
        prefix: `${prefix}${form.name}:`,
      })
      try {
        for (const algorithm of ALGORITHMS) {
          const memory = memoryCounters({ sweepInterval: 0 })
          const rule: CounterRule = { algorithm, count: 5, periodMs: 10_000, burst: 2 }
          // The global and route counters of one request (one slot on a cluster: the bucket is
          // the tag), a limit with another bucket (another slot: counted limit by limit), and
          // requests of several clients in one turn (grouped by slot).
          const checksOf = (ip: string): CounterCheck[] => [
            {
              scope: 'global',
              bucket: `ip:${ip}:${algorithm}`,
              rule: { ...rule, count: 8, burst: 0 },
            },
            { scope: 'route:default:GET:/p', bucket: `ip:${ip}:${algorithm}`, rule },
            {
              scope: 'route:default:GET:/p',
              bucket: `key:${ip}:${algorithm}`,
              rule: { ...rule, count: 6 },
            },
          ]
          for (const offset of offsets) {
            const now = t0 + offset
            const ips = ['a', 'b', 'c']
            const expected = ips.map((ip) => verdicts(memory.consume(checksOf(ip), now)))
            const got = await Promise.all(ips.map((ip) => counters.consume(checksOf(ip), now)))
            expect({ algorithm, offset, got }).toEqual({ algorithm, offset, got: expected })
            const peeked = await counters.peek(checksOf('a'), now)
            expect(peeked).toEqual(verdicts(memory.peek(checksOf('a'), now)))
          }
        }
      } finally {
        await counters.close()
      }
    })

    it('a blocked limit stops evaluation, and reset clears one scope on every shard', async () => {
      const counters = redisCounters({
        ...form.options,
        commandTimeout: 10,
        prefix: `${prefix}${form.name}:order:`,
      })
      try {
        const rule = (count: number): CounterRule => ({
          algorithm: 'fixed_window',
          count,
          periodMs: 60_000,
          burst: 0,
        })
        const checks = [
          { scope: 'global', bucket: 'ip:a', rule: rule(1) },
          { scope: 'route:default:GET:/o', bucket: 'ip:a', rule: rule(5) },
        ]
        const now = 1_800_000_000_000
        expect((await counters.consume(checks, now)).map((o) => o.allowed)).toEqual([true, true])
        expect((await counters.consume(checks, now)).map((o) => o.allowed)).toEqual([false])
        expect((await counters.consume(checks.slice(1), now))[0]?.remaining).toBe(3)
        // Buckets of one scope spread over several slots; a reset clears them all.
        const buckets = Array.from({ length: 12 }, (_, i) => `ip:r${i}`)
        if (form.name === 'cluster')
          expect(
            new Set(buckets.map((b) => keySlot(counters.keyOf('global', b)))).size,
          ).toBeGreaterThan(1)
        for (const bucket of buckets)
          await counters.consume([{ scope: 'global', bucket, rule: rule(1) }], now)
        for (const bucket of buckets)
          expect(
            (await counters.peek([{ scope: 'global', bucket, rule: rule(1) }], now))[0]?.allowed,
          ).toBe(false)
        await counters.reset('global')
        for (const bucket of buckets)
          expect(
            (await counters.peek([{ scope: 'global', bucket, rule: rule(1) }], now))[0]?.allowed,
          ).toBe(true)
        // the other scope kept its two requests (a peek tells what one more would leave)
        expect((await counters.peek(checks.slice(1), now))[0]?.remaining).toBe(2)
      } finally {
        await counters.close()
      }
    })
  })
}
