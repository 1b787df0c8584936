/**
 * Fastify + the switchyard plugin on the PostgreSQL store (route states only, no rate limits)
 * with the 50 benchmark routes. The per-request check reads the in-process replica and never
 * waits on PostgreSQL.
 *
 * Environment: PORT (default 0), CTL_POSTGRES_URL (default
 * postgres://postgres@127.0.0.1:5432/test), CTL_POSTGRES_TABLE_PREFIX (default
 * `switchyard_bench_`). Prints `READY <port>` once listening.
 *
 * A runtime override is stored on `/r49` (maintenance) so that the replica holds shared state
 * loaded from PostgreSQL, as in a real deployment; measure any other route.
 */
import Fastify from 'fastify'
import { createEngine } from '../../src/index.js'
import { switchyard } from '../../src/fastify/index.js'
import { addRoutes, listen, ROUTE_COUNT } from './routes.js'

process.env.CTL_POSTGRES_URL ??= 'postgres://postgres@127.0.0.1:5432/test'
process.env.CTL_POSTGRES_TABLE_PREFIX ??= 'switchyard_bench_'
const engine = createEngine({ store: 'postgres', service: 'bench' })
const app = Fastify({ logger: false })
await app.register(switchyard, { engine })
addRoutes(app)
await engine.setMaintenance(`GET:/r${ROUTE_COUNT - 1}`, { reason: 'bench override' })
await listen(app)
