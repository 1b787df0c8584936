import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RateLimitChangeEvent } from '../../../src/rate-limit/events.js'
import { buildRoutePolicy } from '../../../src/rate-limit/policy.js'
import { rateLimitSubscriberName, redisPolicyStore } from '../../../src/rate-limit/stores/redis.js'
import { redisStore } from '../../../src/stores/redis.js'
import type { RedisHandle, Store } from '../../../src/stores/types.js'
import { engineOn, statuses, type LimitedEngine } from './engine.js'
import { deleteKeys, redisTestsEnabled, TEST_REDIS_URL } from '../../helpers/redis.js'
import { until } from '../../helpers/wait.js'

const available = await redisTestsEnabled('Redis shared rate-limit policy tests')
const basePrefix = `test:rl-stores-shared:${process.pid}:`
let serial = 0

const limitOf = (node: LimitedEngine) => node.limits.listRateLimitPolicies()[0]?.limit

describe.skipIf(!available)('two engines sharing Redis', () => {
  let a: LimitedEngine
  let b: LimitedEngine
  let admin: Redis
  const prefix = `${basePrefix}${++serial}:`
  beforeAll(async () => {
    a = await engineOn(redisStore({ url: TEST_REDIS_URL, prefix }))
    b = await engineOn(redisStore({ url: TEST_REDIS_URL, prefix }))
    admin = new Redis(TEST_REDIS_URL)
  })
  afterAll(async () => {
    await a.close()
    await b.close()
    await admin.quit()
    await deleteKeys(prefix)
  })

  it('enforces on one engine a route policy set on the other, and its deletion', async () => {
    await a.limits.setRateLimitPolicy({ path: '/x', method: 'GET', limit: '1/minute' })
    const latency = await until(() => limitOf(b) === '1/minute')
    console.log(`rl_policy applied on the other engine after ${latency.toFixed(1)} ms`)
    await b.limits.resetRateLimit('/x')
    expect(await statuses(b.app, 2)).toEqual([200, 429])
    // The counters are shared too: the other engine sees the same exhausted quota.
    expect(await statuses(a.app, 1)).toEqual([429])

    await b.limits.deleteRateLimitPolicy('GET:/x')
    await until(() => limitOf(a) === '5/minute')
    expect(limitOf(b)).toBe('5/minute')
  })

  it('propagates global and service policies (set, pause, delete)', async () => {
    await a.limits.global.set({ limit: '100/minute' })
    await until(() => b.limits.global.get()?.limit === '100/minute')
    await a.limits.global.disable()
    await until(() => b.limits.global.get()?.enabled === false)
    await b.limits.service('default').set({ limit: '7/minute' })
    await until(() => a.limits.service('default').get()?.limit === '7/minute')
    await a.limits.global.delete()
    await b.limits.service('default').delete()
    await until(() => b.limits.global.get() === null && a.limits.service('default').get() === null)
  })

  it('reloads in full after its pub/sub connection comes back', async () => {
    // A change no message announced (written behind the feed's back) …
    const policy = buildRoutePolicy('default', 'GET', '/x', { limit: '3/hour' })
    await admin.hset(`${prefix}rl:routes`, `default\u0000GET:/x`, JSON.stringify(policy))
    // An announced change written after it reaches b; the unannounced one did not.
    await a.limits.service('marker').set({ limit: '1/second' })
    await until(() => b.limits.service('marker').get() !== null)
    expect(limitOf(b)).toBe('5/minute')
    // … is picked up once the subscribers reconnect. Only this file's connections are
    // dropped (by name): other test files share the Redis.
    const name = rateLimitSubscriberName(prefix)
    const clients = String(await admin.call('CLIENT', 'LIST')).split('\n')
    const ids = clients
      .filter((line) => line.includes(` name=${name} `))
      .map((line) => /^id=(\d+)/.exec(line)?.[1])
    expect(ids).toHaveLength(2)
    for (const id of ids) await admin.call('CLIENT', 'KILL', 'ID', String(id))
    const latency = await until(() => limitOf(a) === '3/hour' && limitOf(b) === '3/hour')
    console.log(`full reload after pub/sub reconnect took ${latency.toFixed(1)} ms`)
  })
})

describe.skipIf(!available)('Redis policy store feed', () => {
  let store: Store
  let writer: Redis
  let handle: RedisHandle
  const prefix = `${basePrefix}${++serial}:`
  beforeAll(async () => {
    store = redisStore({ url: TEST_REDIS_URL, prefix })
    await store.connect()
    if (store.backend.kind !== 'redis') throw new Error('expected a redis store')
    handle = store.backend.redis
    writer = new Redis(TEST_REDIS_URL)
  })
  afterAll(async () => {
    await writer.quit()
    await store.close()
    await deleteKeys(prefix)
  })

  it('delivers only other instances’ changes, drops stale versions and survives bad messages', async () => {
    const errors: string[] = []
    const mine = redisPolicyStore(handle, { onError: (_error, what) => errors.push(what) })
    const other = redisPolicyStore(handle)
    const received: RateLimitChangeEvent[] = []
    mine.subscribe((event) => received.push(event))
    await mine.connect()
    await mine.connect() // idempotent

    await mine.putGlobal(null) // nothing existed: no write, no message
    const policy = buildRoutePolicy('default', 'GET', '/x', { limit: '2/minute' })
    await mine.putRoutePolicy(policy) // own write: not delivered back
    await other.putRoutePolicy({ ...policy, limit: '4/minute' })
    await until(() => received.length === 1)
    expect(received[0]).toEqual({
      type: 'rl_policy',
      service: 'default',
      route: 'GET:/x',
      policy: { ...policy, limit: '4/minute' },
    })

    const channel = `${prefix}rl:changes`
    const stale: RateLimitChangeEvent = {
      type: 'rl_policy',
      service: 'default',
      route: 'GET:/x',
      policy: null,
    }
    await writer.publish(channel, `1|someone|${JSON.stringify(stale)}`) // older than what was seen
    await writer.publish(channel, '999999|someone|{not json')
    await other.putService('billing', null) // nothing to delete: no message
    await other.deleteRoutePolicy('default', 'GET:/x')
    await until(() => received.length === 2)
    expect(received[1]).toEqual(stale) // the real deletion, not the stale copy
    expect(errors).toEqual(['rate-limit change message'])
    expect(await mine.listRoutePolicies()).toEqual([])
    await mine.close()
    await mine.close()
  })
})
