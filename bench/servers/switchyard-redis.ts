/**
 * Fastify + the switchyard plugin on the Redis store (route states only, no rate limits) with
 * the 50 benchmark routes. Several copies may run at once sharing one Redis: the per-request
 * check reads the in-process replica and never waits on Redis.
 *
 * Environment: PORT (default 0), CTL_REDIS_URL (default redis://127.0.0.1:6379),
 * CTL_REDIS_PREFIX (default `switchyard-bench:`). Prints `READY <port>` once listening.
 *
 * A runtime override is stored on `/r49` (maintenance) so that the replica holds shared state
 * loaded from Redis, as in a real deployment; measure any other route.
 */
import Fastify from 'fastify'
import { createEngine } from '../../src/index.js'
import { switchyard } from '../../src/fastify/index.js'
import { addRoutes, listen, ROUTE_COUNT } from './routes.js'

process.env.CTL_REDIS_PREFIX ??= 'switchyard-bench:'
const engine = createEngine({ store: 'redis', service: 'bench' })
const app = Fastify({ logger: false })
await app.register(switchyard, { engine })
addRoutes(app)
await engine.setMaintenance(`GET:/r${ROUTE_COUNT - 1}`, { reason: 'bench override' })
await listen(app)
