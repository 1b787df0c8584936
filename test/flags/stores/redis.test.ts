import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { Redis } from 'ioredis'
import { FlagService, type FlagChangeEvent } from '../../../src/flags/index.js'
import {
  redisFlagStore,
  subscriberName,
  type RedisFlagStore,
} from '../../../src/flags/stores/redis.js'
import { flagStoreFor } from '../../../src/flags/stores/index.js'
import { redisStore } from '../../../src/stores/redis.js'
import type { Store } from '../../../src/stores/types.js'
import { until } from '../../helpers/wait.js'
import { deleteKeys, redisTestsEnabled, TEST_REDIS_URL, testPrefix } from '../../helpers/redis.js'
import { storedFlag, storedSegment } from '../helpers.js'
import { runFlagStoreConformance } from './conformance.js'

const enabled = await redisTestsEnabled('test/flags/redis-store.test.ts')
const filePrefix = testPrefix('flag-store')
let counter = 0
const opened: { store: Store; flags: RedisFlagStore }[] = []

afterEach(async () => {
  for (const { store, flags } of opened.splice(0)) {
    await flags.close()
    await store.close()
  }
})
afterAll(async () => {
  if (enabled) await deleteKeys(filePrefix)
})

/** A route store plus its flag store on `prefix` (a fresh one by default). */
async function openPair(prefix = `${filePrefix}${++counter}:`) {
  const store = redisStore({ url: TEST_REDIS_URL, prefix, onFault: () => undefined })
  await store.connect()
  if (store.backend.kind !== 'redis') throw new Error('expected the redis backend')
  const flags = redisFlagStore(store.backend.redis)
  await flags.connect()
  const pair = { store, flags, prefix }
  opened.push(pair)
  return pair
}

describe.skipIf(!enabled)('Redis flag store', () => {
  runFlagStoreConformance('redis', async () => {
    const { flags, prefix } = await openPair()
    // The pairs opened here are closed after each test.
    return { store: flags, reopen: async () => (await openPair(prefix)).flags }
  })

  it('is what flagStoreFor picks for the redis backend', async () => {
    const { store, flags } = await openPair()
    const picked = flagStoreFor(store)
    await picked.connect()
    await picked.putFlag(storedFlag('picked'))
    expect((await flags.listFlags()).map((flag) => flag.key)).toEqual(['picked'])
    await picked.close()
  })

  it('survives a reopen on the same prefix', async () => {
    const first = await openPair()
    await first.flags.putSegment(storedSegment('beta', { included: ['u1'] }))
    await first.flags.putFlag(storedFlag('a'))
    await first.flags.close()
    await first.store.close()
    opened.splice(0)
    const second = await openPair(first.prefix)
    expect(await second.flags.listFlags()).toEqual([storedFlag('a')])
    expect(await second.flags.listSegments()).toEqual([storedSegment('beta', { included: ['u1'] })])
  })

  it('delivers a write to every instance sharing the prefix, once each', async () => {
    const a = await openPair()
    const b = await openPair(a.prefix)
    const seenA: FlagChangeEvent[] = []
    const seenB: FlagChangeEvent[] = []
    a.flags.subscribe((event) => seenA.push(event))
    b.flags.subscribe((event) => seenB.push(event))
    await a.flags.putFlag(storedFlag('x'))
    await b.flags.deleteFlag('x')
    await until(() => seenA.length === 2 && seenB.length === 2)
    const expected = [
      { type: 'flag', key: 'x', flag: storedFlag('x') },
      { type: 'flag', key: 'x', flag: null },
    ]
    expect(seenA).toEqual(expected)
    expect(seenB).toEqual(expected)
  })

  it('drops a message older than what it already delivered for the record', async () => {
    const a = await openPair()
    const seen: FlagChangeEvent[] = []
    a.flags.subscribe((event) => seen.push(event))
    await a.flags.putFlag(storedFlag('x', { description: 'new' }))
    // A late message of an older write (version 0 is below every real version).
    const raw = new Redis(TEST_REDIS_URL)
    const stale: FlagChangeEvent = { type: 'flag', key: 'x', flag: storedFlag('x') }
    await raw.publish(`${a.prefix}flags:changes`, `0|someone-else|${JSON.stringify(stale)}`)
    await raw.publish(`${a.prefix}flags:changes`, 'not a message')
    await raw.publish(`${a.prefix}flags:changes`, '99|someone-else|{broken json')
    // A marker message after them: once it arrives, the others were handled.
    const marker: FlagChangeEvent = { type: 'segment', key: 'marker', segment: null }
    await raw.publish(`${a.prefix}flags:changes`, `1000000|someone-else|${JSON.stringify(marker)}`)
    raw.disconnect()
    await until(() => seen.length === 2)
    expect(seen.map((event) => event.key)).toEqual(['x', 'marker'])
    expect(seen[0]).toEqual({
      type: 'flag',
      key: 'x',
      flag: storedFlag('x', { description: 'new' }),
    })
  })

  it('asks for a reload after its pub/sub connection dropped and came back', async () => {
    const a = await openPair()
    const b = await openPair(a.prefix)
    let resyncs = 0
    a.flags.onResync(() => (resyncs += 1))
    const raw = new Redis(TEST_REDIS_URL)
    const clients = (await raw.client('LIST')) as string
    const named = clients
      .split('\n')
      .filter((entry) => entry.includes(` name=${subscriberName(a.prefix)} `))
    expect(named).toHaveLength(2)
    // Both instances' subscribers carry the name; drop them all, then both must recover.
    for (const entry of named) {
      const clientId = /\bid=(\d+)/.exec(entry)?.[1]
      if (clientId !== undefined) await raw.client('KILL', 'ID', clientId)
    }
    raw.disconnect()
    await until(() => resyncs === 1, 5000)
    const seen: FlagChangeEvent[] = []
    a.flags.subscribe((event) => seen.push(event))
    // The resubscription is active before the resync signal: a write now must arrive.
    await b.flags.putFlag(storedFlag('after-resync'))
    await until(() => seen.length > 0)
    expect(seen[0]?.type).toBe('flag')
  })

  it('delivers again, after a reload, a change newer than the snapshot it read', async () => {
    // The race being covered: a write lands after a reload read its snapshot but its message
    // arrives before the reload is applied. Simulated with a message whose version is above
    // the counter and whose record is not in the hash (as if written after the read).
    const { flags, prefix } = await openPair()
    const service = new FlagService({ store: flags })
    await service.start()
    const raw = new Redis(TEST_REDIS_URL)
    const late: FlagChangeEvent = { type: 'flag', key: 'late', flag: storedFlag('late') }
    await raw.publish(`${prefix}flags:changes`, `1000000|someone-else|${JSON.stringify(late)}`)
    raw.disconnect()
    await until(() => service.snapshot.flags.has('late'))
    await service.start() // the snapshot does not have it: the load removes it …
    expect(service.snapshot.flags.has('late')).toBe(false)
    // … and the replay, on the next turn of the event loop, restores it.
    await until(() => service.snapshot.flags.has('late'))
    service.close()
  })
})
