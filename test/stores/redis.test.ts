import { Redis } from 'ioredis'
import { afterAll, describe, expect, it } from 'vitest'
import { ConfigError } from '../../src/core/errors.js'
import { createStore } from '../../src/stores/index.js'
import { redisStore } from '../../src/stores/redis.js'
import { runStoreConformance } from './conformance.js'
import { deleteKeys, redisTestsEnabled, TEST_REDIS_URL, testPrefix } from '../helpers/redis.js'

const enabled = await redisTestsEnabled('test/stores/redis-store.test.ts')
const prefixes: string[] = []
let lastPrefix = ''
afterAll(async () => {
  if (enabled) await Promise.all(prefixes.map((prefix) => deleteKeys(prefix)))
})

if (enabled) {
  runStoreConformance('redis', {
    create({ now }) {
      lastPrefix = testPrefix('conformance')
      prefixes.push(lastPrefix)
      return redisStore({ url: TEST_REDIS_URL, prefix: lastPrefix, now })
    },
    reopen: () => redisStore({ url: TEST_REDIS_URL, prefix: lastPrefix }),
    shared: true,
  })
}

describe('redis store configuration', () => {
  it('rejects a URL that is not redis:// at creation', () => {
    expect(() => redisStore({ url: 'http://127.0.0.1:6379' })).toThrow(ConfigError)
    // A URL given in code is not blamed on the environment variable.
    expect(() => redisStore({ url: 'http://127.0.0.1:6379' })).not.toThrow(/CTL_REDIS_URL/)
    expect(() => createStore('redis', { CTL_REDIS_URL: 'localhost' })).toThrow(
      /"localhost" \(from CTL_REDIS_URL\)/,
    )
  })

  it('selects backends by name and refuses unknown ones', () => {
    expect(createStore('memory', {}).kind).toBe('memory')
    expect(createStore('file', { CTL_FILE_PATH: '/tmp/x.json' }).kind).toBe('file')
    expect(createStore('redis', {}).kind).toBe('redis')
    expect(() => createStore('mongo', {})).toThrow(/Unknown backend "mongo".*memory, file, redis/)
  })

  it('fails to connect to a closed port with a retryable error naming the URL', async () => {
    const store = redisStore({ url: 'redis://127.0.0.1:1', onFault: () => undefined })
    const error = await store.connect().then(
      () => null,
      (e: unknown) => e,
    )
    expect(error).toBeInstanceOf(Error)
    expect(error).not.toBeInstanceOf(ConfigError)
    expect((error as Error).message).toMatch(/redis:\/\/127\.0\.0\.1:1.*unreachable/)
    await store.close()
  })

  it('redacts the password from messages', async () => {
    const store = redisStore({ url: 'redis://user:hunter2@127.0.0.1:1', onFault: () => undefined })
    const error = (await store.connect().catch((e: unknown) => e)) as Error
    expect(error.message).not.toContain('hunter2')
    await store.close()
  })
})

describe.skipIf(!enabled)('redis store change messages', () => {
  it('survives a malformed message on its channel: logs it, reloads, and keeps applying changes', async () => {
    const prefix = testPrefix('malformed')
    prefixes.push(prefix)
    const faults: string[] = []
    const store = redisStore({ url: TEST_REDIS_URL, prefix, onFault: (m) => faults.push(m) })
    const writer = redisStore({ url: TEST_REDIS_URL, prefix, onFault: () => undefined })
    const raw = new Redis(TEST_REDIS_URL)
    try {
      await store.connect()
      await writer.connect()
      let resyncs = 0
      store.changes.onResync(() => resyncs++)
      const seen: string[] = []
      store.changes.subscribe((event) => seen.push(event.type))
      // Each of these used to throw inside the pub/sub listener and take the process down.
      for (const message of [
        '1|x|{',
        'no separators',
        '2|x|"a string"',
        'x|y|{"type":"route_state"}',
      ])
        await raw.publish(`${prefix}changes`, message)
      await expect.poll(() => resyncs).toBe(4)
      // counted each, logged once
      expect(faults).toEqual([
        expect.stringMatching(
          /^route change message malformed ignored \(.*reloading the replica\)/,
        ),
      ])
      expect(store.ignoredMessages?.()).toEqual({ malformed: 4, unknown_type: 0, unknown_field: 0 })
      await writer.maintenance.putGlobal({
        active: true,
        reason: 'after',
        include_force_active: false,
        exempt_paths: [],
      })
      await expect.poll(() => seen).toContain('global_maintenance')
    } finally {
      raw.disconnect()
      await writer.close()
      await store.close()
    }
  })
})
