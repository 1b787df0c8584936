/**
 * The `api_key` strategy with and without `apiKeyValidator`: invented keys, a failing or slow
 * validator, the remembered answers and their bounds.
 */
import { readFileSync } from 'node:fs'
import Fastify from 'fastify'
import { afterEach, describe, expect, it } from 'vitest'
import { createEngine } from '../../src/index.js'
import { rateLimit, switchyard } from '../../src/fastify/index.js'
import {
  ACCEPTED_TTL_MS,
  ApiKeyValidation,
  MAX_REMEMBERED,
  REFUSED_TTL_MS,
  type ApiKeyValidator,
} from '../../src/rate-limit/api-key-validator.js'
import type { RateLimitingOptions } from '../../src/rate-limit/options.js'
import { FakeClock } from '../helpers/clock.js'
import { recordingLogger } from '../helpers/logger.js'

const apps: { close(): Promise<unknown> }[] = []
afterEach(async () => {
  for (const app of apps.splice(0)) await app.close()
})

/** An app whose `GET /x` allows 1 request a minute per API key. */
async function keyedApp(rateLimitOptions: RateLimitingOptions = {}) {
  const clock = new FakeClock(Date.parse('2026-11-21T12:00:00Z'))
  const logger = recordingLogger()
  const engine = createEngine({
    store: 'memory',
    env: 'prod',
    clock,
    logger,
    rateLimit: rateLimitOptions,
  })
  const app = Fastify()
  apps.push(app)
  await app.register(switchyard, { engine })
  app.get('/x', { onRequest: [rateLimit({ limit: '1/minute', key: 'api_key' })] }, () => ({
    ok: true,
  }))
  await app.ready()
  const send = async (key: string) =>
    (await app.inject({ url: '/x', headers: { 'x-api-key': key } })).statusCode
  return { app, clock, logger, send }
}

const VALID = new Set(['sk_live_alice_0123456789', 'sk_live_bob_0123456789'])

describe('api_key strategy', () => {
  it('without a validator gives every invented key a bucket of its own (documented)', async () => {
    const { send } = await keyedApp()
    const codes = []
    for (let n = 0; n < 5; n++) codes.push(await send(`invented-${n}`))
    expect(codes).toEqual([200, 200, 200, 200, 200])
    const docs = readFileSync(new URL('../../docs/rate-limiting.md', import.meta.url), 'utf8')
    expect(docs).toMatch(/only as good as (the )?key validation/)
    expect(docs).toContain('apiKeyValidator')
  })

  it('with a validator puts invented keys in the client address bucket', async () => {
    const asked: string[] = []
    const validator: ApiKeyValidator = (key) => {
      asked.push(key)
      return VALID.has(key)
    }
    const { send } = await keyedApp({ apiKeyValidator: validator })
    const codes = []
    for (let n = 0; n < 5; n++) codes.push(await send(`invented-${n}`))
    expect(codes).toEqual([200, 429, 429, 429, 429])
    // Real keys keep buckets of their own.
    expect(await send('sk_live_alice_0123456789')).toBe(200)
    expect(await send('sk_live_alice_0123456789')).toBe(429)
    expect(await send('sk_live_bob_0123456789')).toBe(200)
    expect(asked).toContain('invented-0')
  })

  it('accepts an async validator', async () => {
    const { send } = await keyedApp({
      apiKeyValidator: async (key) => {
        await Promise.resolve()
        return VALID.has(key)
      },
    })
    expect([await send('nope-1'), await send('nope-2')]).toEqual([200, 429])
    expect(await send('sk_live_alice_0123456789')).toBe(200)
  })

  it('falls back to the address when the validator throws, and logs it once', async () => {
    const { send, logger } = await keyedApp({
      apiKeyValidator: () => {
        throw new Error('key table unavailable')
      },
    })
    expect([await send('sk_live_alice_0123456789'), await send('sk_live_bob_0123456789')]).toEqual([
      200, 429,
    ])
    await send('another')
    const lines = logger.messages('warn').filter((line) => line.includes('apiKeyValidator'))
    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatch(/threw Error/)
    expect(JSON.stringify(logger.lines)).not.toContain('sk_live_alice')
  })

  it('falls back to the address when the validator misses its deadline', async () => {
    const { send, logger } = await keyedApp({
      apiKeyValidator: () => new Promise<boolean>(() => undefined),
      apiKeyValidatorTimeout: 0.02,
    })
    const started = performance.now()
    expect([await send('sk_live_alice_0123456789'), await send('sk_live_bob_0123456789')]).toEqual([
      200, 429,
    ])
    // Two requests each bounded by the deadline, not left waiting for the validator.
    expect(performance.now() - started).toBeLessThan(5_000)
    expect(logger.messages('warn').filter((line) => line.includes('timeout'))).toHaveLength(1)
  })

  it('treats an answer that is not a boolean as not valid', async () => {
    const { send } = await keyedApp({
      apiKeyValidator: (() => 'yes') as unknown as ApiKeyValidator,
    })
    expect([await send('k-1-aaaaaaaaaaaa'), await send('k-2-aaaaaaaaaaaa')]).toEqual([200, 429])
  })

  it('rejects a bad validator or deadline at configuration', () => {
    expect(() =>
      createEngine({
        store: 'memory',
        rateLimit: { apiKeyValidator: 'yes' as unknown as ApiKeyValidator },
      }),
    ).toThrow(/apiKeyValidator must be a function/)
    for (const bad of [0, -1, 11, '0.05']) {
      expect(() =>
        createEngine({
          store: 'memory',
          rateLimit: { apiKeyValidatorTimeout: bad as number },
        }),
      ).toThrow(/apiKeyValidatorTimeout/)
    }
  })
})

describe('ApiKeyValidation', () => {
  const request = { method: 'GET', url: '/x', headers: {}, ip: '127.0.0.1' }
  const counting = () => {
    const calls = new Map<string, number>()
    const validator: ApiKeyValidator = (key) => {
      calls.set(key, (calls.get(key) ?? 0) + 1)
      return VALID.has(key)
    }
    return { calls, validator }
  }

  it('remembers accepted and refused keys for their TTL', () => {
    const clock = new FakeClock(0)
    const { calls, validator } = counting()
    const validation = new ApiKeyValidation(validator, 0.05, clock, () => undefined)
    const alice = 'sk_live_alice_0123456789'
    for (let n = 0; n < 3; n++) {
      expect(validation.check(alice, request)).toBe(true)
      expect(validation.check('made-up', request)).toBe(false)
    }
    expect(calls.get(alice)).toBe(1)
    expect(calls.get('made-up')).toBe(1)
    clock.advance(REFUSED_TTL_MS)
    void validation.check(alice, request)
    void validation.check('made-up', request)
    expect(calls.get(alice)).toBe(1)
    expect(calls.get('made-up')).toBe(2)
    clock.advance(ACCEPTED_TTL_MS)
    void validation.check(alice, request)
    expect(calls.get(alice)).toBe(2)
  })

  it('keeps accepted keys while a flood of invented keys passes through', () => {
    const clock = new FakeClock(0)
    const { calls, validator } = counting()
    const validation = new ApiKeyValidation(validator, 0.05, clock, () => undefined)
    const alice = 'sk_live_alice_0123456789'
    void validation.check(alice, request)
    for (let n = 0; n <= MAX_REMEMBERED; n++) {
      expect(validation.check(`invented-${n}`, request)).toBe(false)
    }
    expect(validation.check(alice, request)).toBe(true)
    expect(calls.get(alice)).toBe(1)
    // The refused table stayed bounded: its oldest entry was evicted and is asked again.
    void validation.check('invented-0', request)
    expect(calls.get('invented-0')).toBe(2)
  })

  it('does not remember a failure', () => {
    const clock = new FakeClock(0)
    let fail = true
    const validation = new ApiKeyValidation(
      (key) => {
        if (fail) throw new Error('down')
        return VALID.has(key)
      },
      0.05,
      clock,
      () => undefined,
    )
    const alice = 'sk_live_alice_0123456789'
    expect(validation.check(alice, request)).toBe(false)
    fail = false
    expect(validation.check(alice, request)).toBe(true)
  })
})
