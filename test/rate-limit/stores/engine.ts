/**
 * An engine on a given store with one rate-limited route, `GET /x` (decorator `5/minute`),
 * served by a Fastify app with the plugin.
 */
import Fastify, { type FastifyInstance } from 'fastify'
import { createEngine, type Engine } from '../../../src/index.js'
import { rateLimit, switchyard } from '../../../src/fastify/index.js'
import type { RateLimitingOptions } from '../../../src/rate-limit/options.js'
import type { RateLimitService } from '../../../src/rate-limit/service.js'
import type { Store } from '../../../src/stores/types.js'
import { FakeClock } from '../../helpers/clock.js'

/** A running app on `store`. */
export interface LimitedEngine {
  app: FastifyInstance
  engine: Engine
  limits: RateLimitService
  clock: FakeClock
  close(): Promise<void>
}

/** Starts an engine and app on `store`; the app is ready (stored policies loaded) on return. */
export async function engineOn(
  store: Store,
  rateLimitOptions: RateLimitingOptions = {},
): Promise<LimitedEngine> {
  const clock = new FakeClock(Date.parse('2026-11-21T12:00:00Z'))
  const engine = createEngine({ store, env: 'prod', clock })
  const app = Fastify()
  // Counts must be exact on a loaded test machine: a deadline far above any round trip.
  await app.register(switchyard, {
    engine,
    rateLimit: { redisCommandTimeout: 10, ...rateLimitOptions },
  })
  app.get('/x', { onRequest: [rateLimit({ limit: '5/minute' })] }, () => ({ ok: true }))
  await app.ready()
  return {
    app,
    engine,
    clock,
    limits: engine.rateLimits,
    async close() {
      await app.close()
      await engine.close()
    },
  }
}

/** Status codes of `count` requests to `/x`. */
export async function statuses(app: FastifyInstance, count: number): Promise<number[]> {
  const codes: number[] = []
  for (let i = 0; i < count; i++) codes.push((await app.inject('/x')).statusCode)
  return codes
}
