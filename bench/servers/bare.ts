/** Baseline: bare Fastify with the 50 benchmark routes. */
import Fastify from 'fastify'
import { addRoutes, listen } from './routes.js'

const app = Fastify({ logger: false })
addRoutes(app)
await listen(app)
