/**
 * The OpenAPI document served by @fastify/swagger-ui (`/docs/json`, `/docs/yaml`) for the 50
 * benchmark routes. OPENAPI_CASE picks the variant: `swagger` (@fastify/swagger alone),
 * `switchyard-active` (the switchyard plugin, every route active: the same document, so the
 * difference is the wrapper's freshness check), `switchyard` (5 routes disabled and 5 in
 * maintenance: a filtered document).
 */
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import Fastify from 'fastify'
import { createEngine } from '../../src/index.js'
import { switchyard } from '../../src/fastify/index.js'
import { addRoutes, listen } from './routes.js'

const variant = process.env.OPENAPI_CASE ?? 'swagger'
const app = Fastify({ logger: false })
await app.register(swagger, { openapi: { info: { title: 'bench', version: '1.0.0' } } })
await app.register(swaggerUi, { routePrefix: '/docs' })
const engine = createEngine({ store: 'memory', service: 'bench' })
if (variant !== 'swagger') await app.register(switchyard, { engine })
addRoutes(app)
await app.ready()
if (variant === 'switchyard') {
  for (let i = 1; i <= 5; i++) await engine.disable(`GET:/r${i}`)
  for (let i = 6; i <= 10; i++) await engine.setMaintenance(`GET:/r${i}`, { reason: 'bench' })
}
await listen(app)
