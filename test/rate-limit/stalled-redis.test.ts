/**
 * Redis counters on the request path when Redis stalls (a private `redis-server` frozen with
 * SIGSTOP, so connections stay open and nothing answers): every request still answers — the
 * call's deadline passes and the limit fails open — the circuit breaker then stops calling
 * Redis, and once Redis answers again the breaker closes and the limit applies again.
 */
import Fastify, { type FastifyInstance } from 'fastify'
import { afterEach, describe, expect, it } from 'vitest'
import { createEngine, type Engine } from '../../src/index.js'
import { rateLimit, switchyard } from '../../src/fastify/index.js'
import { redisStore } from '../../src/stores/redis.js'
import { redisTestsEnabled } from '../helpers/redis.js'
import { freePort, PrivateRedis } from '../stores/fixtures/redis-server.js'
import { pushMessage } from '../helpers/logger.js'

const enabled = await redisTestsEnabled('test/rate-limit/stalled-redis.test.ts')
const cleanups: (() => Promise<void>)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

/** Far above the deadline, far below a hang: a request that takes longer did not fail open. */
const HANG_MS = 3000

/** The status of a request, or `hung` when it has not answered within {@link HANG_MS}. */
async function statusOf(app: FastifyInstance): Promise<number | 'hung'> {
  let timer: NodeJS.Timeout | undefined
  const hung = new Promise<'hung'>((resolve) => {
    timer = setTimeout(() => resolve('hung'), HANG_MS)
  })
  try {
    return await Promise.race([app.inject('/x').then((res) => res.statusCode), hung])
  } finally {
    clearTimeout(timer)
  }
}

describe.skipIf(!enabled)('Redis counters with a stalled Redis', () => {
  it('answer within the deadline, fail open, stop calling, and recover', async () => {
    const redis = new PrivateRedis(await freePort())
    await redis.start()
    cleanups.push(async () => {
      redis.resume()
      await redis.stop()
    })
    const errors: string[] = []
    const warnings: string[] = []
    const engine: Engine = createEngine({
      store: redisStore({ url: redis.url, prefix: 'stalled:', onFault: () => undefined }),
      env: 'prod',
      logger: {
        warn: pushMessage(warnings),
        error: pushMessage(errors),
      },
      rateLimit: { redisCommandTimeout: 0.05 },
    })
    const app = Fastify()
    cleanups.push(async () => {
      await app.close()
      await engine.close()
    })
    await app.register(switchyard, { engine })
    app.get('/x', { onRequest: rateLimit({ limit: '1/minute' }) }, () => 'ok')
    await app.ready()
    // The limit works while Redis answers (polled: on a loaded machine a call may miss its
    // deadline now and then, and that request passes uncounted).
    await expect.poll(() => statusOf(app), { timeout: 10_000, interval: 50 }).toBe(429)

    redis.pause()
    const before = errors.length
    const opened = () =>
      errors.slice(before).filter((m) => m.includes('Redis counters keep failing')).length
    // Each request answers (the limit is exhausted, so a 200 means it failed open) …
    for (let i = 0; i < 8; i++) expect(await statusOf(app)).toBe(200)
    // … and after repeated failures the counters stop calling Redis, said once.
    expect(opened()).toBe(1)
    for (let i = 0; i < 20; i++) expect(await statusOf(app)).toBe(200)
    expect(opened()).toBe(1)

    const recovered = warnings.length
    redis.resume()
    // A trial call after the cool-down finds Redis again: the limit applies once more.
    await expect.poll(() => statusOf(app), { timeout: 10_000, interval: 200 }).toBe(429)
    expect(warnings.slice(recovered)).toContain('rate limits: Redis counters answer again')
  })
})
