/**
 * Garbage of every shape published on every Redis channel switchyard subscribes to: the app
 * keeps answering, counts what it ignored, and keeps applying valid changes published after.
 */
import Fastify from 'fastify'
import { Redis } from 'ioredis'
import { afterAll, describe, expect, it } from 'vitest'
import { createEngine, type Engine } from '../../src/create-engine.js'
import { switchyard } from '../../src/fastify/index.js'
import { redisStore } from '../../src/stores/redis.js'
import type { Store } from '../../src/stores/types.js'
import { booleanFlag } from '../flags/helpers.js'
import { deleteKeys, redisTestsEnabled, TEST_REDIS_URL, testPrefix } from '../helpers/redis.js'
import { pushMessage } from '../helpers/logger.js'

const available = await redisTestsEnabled('malformed pub/sub messages')
const prefix = testPrefix('garbage')
afterAll(() => deleteKeys(prefix))

/** Every shape of bad message: not JSON, wrong shapes, unknown types, missing fields, huge. */
const GARBAGE = [
  'not json at all',
  '',
  '|||',
  '1|other|{',
  '1|other|"a string"',
  '1|other|[]',
  '1|other|null',
  '1|other|{}',
  '123|other|{"type":"nope"}',
  '123|other|{"type":"__proto__"}',
  '123|other|{"type":"toString"}',
  'x|other|{"type":"route_state"}',
  '9007199254740993|other|{"type":"route_state"}',
  '124|other|{"type":"route_state"}',
  '125|other|{"type":"route_state","service":"default","route":"GET:/x","state":"on"}',
  '126|other|{"type":"global_maintenance","config":null}',
  '127|other|{"type":"service_maintenance","config":{}}',
  '128|other|{"type":"audit"}',
  '129|other|{"type":"rl_policy"}',
  '130|other|{"type":"rl_policy","service":"default","route":"GET:/x"}',
  '131|other|{"type":"global_rl_policy","policy":5}',
  '132|other|{"type":"service_rl_policy","policy":null}',
  '133|other|{"type":"flag"}',
  '134|other|{"type":"flag","key":"k","flag":"yes"}',
  '135|other|{"type":"segment","key":7,"segment":null}',
  '136|other|{"service":"x"}',
  '137|other|{"service":"x","routes":"all"}',
  '138|other|{"__proto__":{"polluted":true},"type":"flag"}',
  `139|other|{"type":"${'x'.repeat(200_000)}"}`,
  `140|other|${JSON.stringify({ type: 'route_state', pad: 'y'.repeat(1_000_000) })}`,
]

const CHANNELS = ['changes', 'flags:changes', 'rl:changes', 'sdk:changes']

describe.skipIf(!available)('malformed messages on the Redis channels', () => {
  it('are ignored: the app keeps serving and applying valid changes', async () => {
    const log: string[] = []
    const engines: Engine[] = []
    const make = (store: Store) => {
      const engine = createEngine({
        store,
        service: 'default',
        logger: { warn: pushMessage(log), error: pushMessage(log) },
      })
      engines.push(engine)
      return engine
    }
    const servingStore = redisStore({
      url: TEST_REDIS_URL,
      prefix,
      onFault: (m) => log.push(m),
    })
    const serving = make(servingStore)
    const app = Fastify()
    await app.register(switchyard, { engine: serving })
    app.get('/x', () => ({ ok: true }))
    await app.ready()
    const writer = make(redisStore({ url: TEST_REDIS_URL, prefix, onFault: () => undefined }))
    writer.registerRoute('GET', '/x')
    await writer.start()
    const raw = new Redis(TEST_REDIS_URL)
    try {
      for (const channel of CHANNELS) {
        for (const message of GARBAGE) {
          await raw.publish(`${prefix}${channel}`, message)
          expect((await app.inject('/x')).statusCode).toBe(200)
        }
      }
      // every bad route-channel message was counted, and logged at most once per kind and type
      await expect
        .poll(() => {
          const counts = servingStore.ignoredMessages?.()
          return (counts?.malformed ?? 0) + (counts?.unknown_type ?? 0)
        })
        .toBe(GARBAGE.length)
      // Logged once per reader, kind and type (both engines read the flag and policy channels),
      // as warnings: fewer lines than messages.
      const ignoredLines = log.filter((line) => line.includes('ignored'))
      const times = new Map<string, number>()
      for (const line of ignoredLines) times.set(line, (times.get(line) ?? 0) + 1)
      expect(Math.max(...times.values())).toBeLessThanOrEqual(2)
      expect(ignoredLines.length).toBeLessThan(CHANNELS.length * GARBAGE.length)
      expect(({} as Record<string, unknown>).polluted).toBeUndefined()

      // valid changes published afterwards still apply, on every channel
      await writer.flags.saveFlag(booleanFlag('after-garbage', { enabled: true }))
      await expect.poll(() => serving.flags.snapshot.flags.has('after-garbage')).toBe(true)
      await writer.rateLimits.setRateLimitPolicy({ path: '/x', method: 'GET', limit: '1/minute' })
      await expect
        .poll(async () => (await app.inject('/x')).statusCode, { timeout: 5000 })
        .toBe(429)
      await writer.disable('GET:/x')
      await expect.poll(async () => (await app.inject('/x')).statusCode).not.toBe(429)
      expect((await app.inject('/x')).statusCode).toBeGreaterThanOrEqual(400)
    } finally {
      raw.disconnect()
      await app.close()
      await Promise.all(engines.map((engine) => engine.close()))
    }
  })
})
