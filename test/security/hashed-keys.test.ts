/**
 * API keys and user ids never appear raw in the blocked-request log, `rl_hit` events, Redis key
 * names or the counter snapshot file: buckets carry a hash (and the last 4 characters of a long
 * key, for display), the same key always lands in the same bucket, and the snapshot file is
 * readable by its owner only.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Redis } from 'ioredis'
import { afterAll, describe, expect, it } from 'vitest'
import { rateLimit } from '../../src/fastify/index.js'
import { redisCounters } from '../../src/rate-limit/counters/redis.js'
import { snapshotCounters } from '../../src/rate-limit/counters/file.js'
import type { RateLimitStreamEvent } from '../../src/rate-limit/service.js'
import { limitedApp } from '../rate-limit/helpers.js'
import { redisTestsEnabled, TEST_REDIS_URL as redisUrl } from '../helpers/redis.js'

const API_KEY = 'sk_live_0123456789abcdefWXYZ'
const USER = 'alice@example.com'

async function appWith(key: 'api_key' | 'user', extra = {}) {
  const built = await limitedApp([{ path: '/x', hooks: [rateLimit({ limit: '1/minute', key })] }], {
    ...extra,
    auth: (request, _reply, done) => {
      const user = request.headers['x-user']
      if (typeof user === 'string') request.state.userId = user
      done()
    },
  })
  const events: RateLimitStreamEvent[] = []
  built.limits.onEvent((event) => events.push(event))
  return { ...built, events }
}

describe('hashed buckets', () => {
  it('an API key: same key same bucket, raw key nowhere, last 4 characters shown', async () => {
    const { app, limits, events } = await appWith('api_key')
    const call = (apiKey: string) => app.inject({ url: '/x', headers: { 'x-api-key': apiKey } })
    expect((await call(API_KEY)).statusCode).toBe(200)
    expect((await call(API_KEY)).statusCode).toBe(429)
    expect((await call(`${API_KEY}2`)).statusCode).toBe(200)
    const [hit] = await limits.getRateLimitHits()
    expect(hit?.key).toMatch(/^rl:route:default:GET:\/x:api_key:…WXYZ:[0-9a-f]{16}$/)
    const seen = JSON.stringify({ hit, events })
    expect(seen).not.toContain(API_KEY)
    expect(seen).toContain('rl_hit')
    await app.close()
  })

  it('a user id: hashed, short ids show no characters at all', async () => {
    const { app, limits, events } = await appWith('user')
    const call = (user: string) => app.inject({ url: '/x', headers: { 'x-user': user } })
    expect((await call(USER)).statusCode).toBe(200)
    expect((await call(USER)).statusCode).toBe(429)
    expect((await call('bob')).statusCode).toBe(200)
    expect((await call('bob')).statusCode).toBe(429)
    const hits = await limits.getRateLimitHits()
    expect(hits.map((h) => h.key)).toEqual([
      expect.stringMatching(/:user:[0-9a-f]{16}$/),
      expect.stringMatching(/:user:….com:[0-9a-f]{16}$/),
    ])
    expect(JSON.stringify({ hits, events })).not.toMatch(/alice|bob/)
    await app.close()
  })

  it('the counter snapshot file is mode 0600 and holds no raw key', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'switchyard-hash-'))
    const path = join(dir, 'counters.json')
    // the time of limitedApp's fake clock, so the counter is live when the snapshot is written
    const now = () => Date.parse('2026-11-21T12:00:00Z')
    const counters = snapshotCounters({ path, interval: 0, sweepInterval: 0, now })
    const { app } = await appWith('api_key', { rateLimit: { counters } })
    await app.inject({ url: '/x', headers: { 'x-api-key': API_KEY } })
    await counters.snapshot()
    expect(statSync(path).mode & 0o777).toBe(0o600)
    await app.close()
    await counters.close()
    expect(statSync(path).mode & 0o777).toBe(0o600)
    const { readFileSync } = await import('node:fs')
    const text = readFileSync(path, 'utf8')
    expect(text).toContain('api_key:')
    expect(text).not.toContain(API_KEY)
    rmSync(dir, { recursive: true, force: true })
  })
})

describe.runIf(await redisTestsEnabled('test/security/hashed-keys.test.ts'))(
  'hashed buckets on Redis',
  () => {
    const client = new Redis(redisUrl)
    const prefix = `test:hashed:${process.pid}:`
    afterAll(async () => {
      const keys = await client.keys(`${prefix}*`)
      if (keys.length > 0) await client.unlink(...keys)
      client.disconnect()
    })

    it('Redis key names hold the hash, not the key', async () => {
      const counters = redisCounters({ client, prefix })
      const { app } = await appWith('api_key', { rateLimit: { counters } })
      await app.inject({ url: '/x', headers: { 'x-api-key': API_KEY } })
      const keys = await client.keys(`${prefix}*`)
      expect(keys).toHaveLength(1)
      expect(keys[0]).toContain('api_key:…WXYZ:')
      expect(keys.join()).not.toContain(API_KEY)
      await app.close()
    })
  },
)
