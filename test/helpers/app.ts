import Fastify, { type FastifyInstance } from 'fastify'
import { createEngine, type Engine } from '../../src/index.js'
import {
  deprecated,
  disabled,
  envOnly,
  forceActive,
  maintenance,
  switchyard,
} from '../../src/fastify/index.js'
import { FakeClock } from './clock.js'

/**
 * One route per lifecycle decorator — /payments (maintenance window ending 90.5 s after the
 * clock's time), /legacy, /debug (dev and staging only), /v1/users (deprecated), /health — with
 * or without the plugin registered on `app`.
 */
export function addDecoratedRoutes(app: FastifyInstance, clock: FakeClock): void {
  const ok = () => ({ ok: true })
  app.get(
    '/payments',
    { onRequest: maintenance({ reason: 'DB migration', end: new Date(clock.time + 90_500) }) },
    ok,
  )
  app.get('/legacy', { onRequest: disabled({ reason: 'Replaced by /v2' }) }, ok)
  app.get('/debug', { onRequest: envOnly('dev', 'staging') }, ok)
  app.get(
    '/v1/users',
    {
      onRequest: deprecated({
        sunset: 'Sat, 01 Jan 2028 00:00:00 GMT',
        useInstead: '/v2/users',
        since: '2026-01-01T00:00:00Z',
      }),
    },
    ok,
  )
  app.get('/health', { onRequest: forceActive() }, ok)
}

/** An app with one route per decorator, an undecorated route and a parameterised route. */
export async function buildApp(
  options: { env?: string; service?: string; clock?: FakeClock } = {},
): Promise<{ app: FastifyInstance; engine: Engine; clock: FakeClock }> {
  const clock = options.clock ?? new FakeClock()
  const engine = createEngine({
    store: 'memory',
    env: options.env ?? 'prod',
    service: options.service,
    clock,
  })
  const app = Fastify()
  await app.register(switchyard, { engine })
  const ok = () => ({ ok: true })
  addDecoratedRoutes(app, clock)
  app.get('/v0/users', { onRequest: deprecated() }, ok)
  app.get('/orders', ok)
  app.post('/orders', ok)
  app.get('/items/:id', ok)
  await app.register(
    (child, _options, done) => {
      child.get('/status', ok)
      child.get('/secret', { onRequest: disabled({ reason: 'prefixed' }) }, ok)
      done()
    },
    { prefix: '/api' },
  )
  await app.ready()
  return { app, engine, clock }
}
