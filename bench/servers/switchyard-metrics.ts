/**
 * Fastify + the switchyard plugin with Prometheus metrics on (public endpoint, memory store)
 * and the 50 benchmark routes.
 */
import Fastify from 'fastify'
import { createEngine } from '../../src/index.js'
import { switchyard } from '../../src/fastify/index.js'
import { addRoutes, listen } from './routes.js'

const app = Fastify({ logger: false })
await app.register(switchyard, {
  engine: createEngine({ store: 'memory', service: 'bench' }),
  metrics: { public: true },
})
addRoutes(app)
await listen(app)
