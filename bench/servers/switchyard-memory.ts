/** Fastify + the switchyard plugin (route states only, memory store) with the 50 benchmark routes. */
import Fastify from 'fastify'
import { createEngine } from '../../src/index.js'
import { switchyard } from '../../src/fastify/index.js'
import { addRoutes, listen } from './routes.js'

const app = Fastify({ logger: false })
await app.register(switchyard, { engine: createEngine({ store: 'memory', service: 'bench' }) })
addRoutes(app)
await listen(app)
