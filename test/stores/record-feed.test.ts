/**
 * The shared Redis record feed (flags and rate-limit policies): versions per record, own
 * messages ignored, and versions forgotten after a reconnect, when Redis may have restarted
 * empty and its counter started over.
 */
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { feedSubscriberName, redisRecordFeed } from '../../src/stores/record-feed.js'
import { redisStore } from '../../src/stores/redis.js'
import type { RedisHandle, Store } from '../../src/stores/types.js'
import { deleteKeys, redisTestsEnabled, TEST_REDIS_URL } from '../helpers/redis.js'
import { until } from '../helpers/wait.js'

const available = await redisTestsEnabled('Redis record feed tests')
const prefix = `test:record-feed:${process.pid}:`

interface Change {
  id: string
  n: number
}

describe.skipIf(!available)('Redis record feed', () => {
  let store: Store
  let handle: RedisHandle
  let admin: Redis
  beforeAll(async () => {
    store = redisStore({ url: TEST_REDIS_URL, prefix })
    await store.connect()
    if (store.backend.kind !== 'redis') throw new Error('expected a redis store')
    handle = store.backend.redis
    admin = new Redis(TEST_REDIS_URL)
  })
  afterAll(async () => {
    await admin.quit()
    await store.close()
    await deleteKeys(prefix)
  })

  const feedOn = (namespace: string) =>
    redisRecordFeed<Change>(handle, {
      namespace,
      label: 'test',
      recordOf: (change) => change.id,
      containers: ['records'],
      storedAs: (change) => ({ container: 'records', field: change.id, value: String(change.n) }),
    })

  it('writes, versions and announces; the writer does not hear itself', async () => {
    const mine = feedOn('a')
    const other = feedOn('a')
    const heard: [Change, number][] = []
    mine.subscribe((change, version) => heard.push([change, version]))
    await mine.connect()
    const first = await mine.write('records', 'hset', 'x', '1', { id: 'x', n: 1 })
    expect(first).toEqual({ version: 1, fresh: true })
    expect(await admin.hget(mine.key('records'), 'x')).toBe('1')
    const second = await other.write('records', 'hset', 'x', '2', { id: 'x', n: 2 })
    expect(second.version).toBe(2)
    await until(() => heard.length === 1)
    expect(heard).toEqual([[{ id: 'x', n: 2 }, 2]])
    // a delete of a missing field changes nothing and announces nothing
    expect(await other.write('records', 'hdel', 'nope', '', { id: 'nope', n: 0 })).toEqual({
      version: 0,
      fresh: false,
    })
    await mine.close()
  })

  it("a writer whose change is overtaken by another instance's later one is told it is stale", async () => {
    const mine = feedOn('b')
    await mine.connect()
    const channel = mine.key('changes')
    // another instance's change to x at version 10 arrives first …
    await admin.set(mine.versionKey, '9')
    await admin.publish(channel, `10|someone|${JSON.stringify({ id: 'x', n: 10 })}`)
    const heard: number[] = []
    mine.subscribe((_change, version) => heard.push(version))
    await admin.publish(channel, `11|someone|${JSON.stringify({ id: 'y', n: 11 })}`)
    await until(() => heard.includes(11))
    // … so the feed knows x at 10; a write that Redis numbers 10 or lower would not be fresh
    await admin.set(mine.versionKey, '0')
    expect(await mine.write('records', 'hset', 'x', '1', { id: 'x', n: 1 })).toEqual({
      version: 1,
      fresh: false,
    })
    await mine.close()
  })

  it('drops stale messages until the connection comes back, then forgets old versions', async () => {
    const mine = feedOn('c')
    const heard: number[] = []
    const resyncs: number[] = []
    mine.subscribe((change) => heard.push(change.n))
    mine.onResync(() => resyncs.push(heard.length))
    await mine.connect()
    const channel = mine.key('changes')
    await admin.publish(channel, `5|someone|${JSON.stringify({ id: 'x', n: 5 })}`)
    await until(() => heard.length === 1)
    // as if Redis had restarted empty: its counter starts over at 1 — stale for now
    await admin.publish(channel, `1|someone|${JSON.stringify({ id: 'x', n: 1 })}`)
    await admin.publish(channel, `6|someone|${JSON.stringify({ id: 'y', n: 6 })}`)
    await until(() => heard.length === 2)
    expect(heard).toEqual([5, 6])
    // the subscriber is dropped (found by its name) and comes back: resync, versions forgotten
    const name = feedSubscriberName(prefix, 'c')
    const line = String(await admin.call('CLIENT', 'LIST'))
      .split('\n')
      .find((entry) => entry.includes(` name=${name} `))
    const id = /^id=(\d+)/.exec(line ?? '')?.[1]
    expect(id).toBeDefined()
    await admin.call('CLIENT', 'KILL', 'ID', String(id))
    await until(() => resyncs.length === 1)
    await admin.publish(channel, `1|someone|${JSON.stringify({ id: 'x', n: 1 })}`)
    await until(() => heard.length === 3)
    expect(heard).toEqual([5, 6, 1])
    await mine.close()
  })

  it('ignores malformed messages, reports them and asks for a reload', async () => {
    const errors: string[] = []
    const feed = redisRecordFeed<Change>(handle, {
      namespace: 'd',
      label: 'test',
      recordOf: (change) => change.id,
      containers: ['records'],
      storedAs: (change) => ({ container: 'records', field: change.id, value: String(change.n) }),
      onError: (_error, what) => errors.push(what),
    })
    const heard: number[] = []
    let resyncs = 0
    feed.subscribe((change) => heard.push(change.n))
    feed.onResync(() => resyncs++)
    await feed.connect()
    await admin.publish(feed.key('changes'), '3|someone|{not json')
    await admin.publish(feed.key('changes'), 'no separators')
    await admin.publish(feed.key('changes'), `4|someone|${JSON.stringify({ id: 'z', n: 4 })}`)
    await until(() => heard.length === 1)
    expect(errors).toEqual(['test change message']) // logged once, counted each
    expect(feed.ignoredMessages()).toEqual({ malformed: 2, unknown_type: 0, unknown_field: 0 })
    // A malformed message may have stood for a change: the feed's users reload in full.
    expect(resyncs).toBe(2)
    await feed.close()
    await feed.close()
  })
})
