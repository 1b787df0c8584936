/**
 * The demo application that `npm start` (and `switchyard demo`) runs: a Fastify app with every
 * switchyard feature on the embedded defaults, so a newcomer can try everything with curl.
 */
import Fastify, { type FastifyInstance } from 'fastify'
import { createEngine, type Engine } from '../core/engine.js'
import { SwitchyardError } from '../core/errors.js'
import {
  deprecated,
  disabled,
  envOnly,
  forceActive,
  maintenance,
  switchyard,
} from '../fastify/index.js'

/** Options of {@link buildDemoApp}. */
export interface DemoOptions {
  engine?: Engine
  logger?: boolean
}

/** Builds the demo app (not listening). */
export async function buildDemoApp(options: DemoOptions = {}): Promise<FastifyInstance> {
  const engine = options.engine ?? createEngine({ store: 'memory', service: 'demo' })
  const app = Fastify({ logger: options.logger ?? false })
  await app.register(switchyard, { engine })

  const hello = (name: string) => () => ({ route: name, at: new Date().toISOString() })
  const inAnHour = new Date(Date.now() + 3_600_000)
  app.get(
    '/payments',
    { onRequest: maintenance({ reason: 'Database migration', end: inAnHour }) },
    hello('payments'),
  )
  app.get('/legacy', { onRequest: disabled({ reason: 'Replaced by /orders' }) }, hello('legacy'))
  app.get('/debug', { onRequest: envOnly('dev', 'staging') }, hello('debug'))
  app.get(
    '/v1/users',
    {
      onRequest: deprecated({
        sunset: 'Sat, 01 Jan 2028 00:00:00 GMT',
        useInstead: '/v2/users',
        since: '2026-01-01T00:00:00Z',
      }),
    },
    hello('v1 users'),
  )
  app.get('/v2/users', hello('v2 users'))
  app.get('/health', { onRequest: forceActive() }, () => ({ status: 'ok' }))
  app.get('/orders', hello('orders'))
  app.get('/orders/:id', hello('one order'))

  registerDemoControls(app, engine)
  return app
}

/**
 * Demo-only shortcuts that drive the engine over HTTP (`POST /_demo/<operation>?route=...`),
 * so runtime changes can be tried with curl. They are part of the demo, not of the library;
 * applications use the engine API.
 */
function registerDemoControls(app: FastifyInstance, engine: Engine): void {
  type Query = { route?: string; reason?: string; minutes?: string }
  const run = async (operation: () => Promise<unknown>) => {
    try {
      return { status: 200, body: await operation() }
    } catch (error) {
      if (error instanceof SwitchyardError)
        return { status: error.statusCode, body: error.toJSON() }
      throw error
    }
  }
  const route = (query: Query) => query.route ?? ''
  const controls: Record<string, (query: Query) => Promise<unknown>> = {
    enable: (q) => engine.enable(route(q), { reason: q.reason, platform: 'demo' }),
    disable: (q) => engine.disable(route(q), { reason: q.reason, platform: 'demo' }),
    maintenance: (q) =>
      engine.setMaintenance(route(q), {
        reason: q.reason,
        end: q.minutes ? new Date(Date.now() + Number(q.minutes) * 60_000) : undefined,
        platform: 'demo',
      }),
    'global-on': (q) =>
      engine.enableGlobalMaintenance({ reason: q.reason, exemptPaths: ['/_demo/global-off'] }),
    'global-off': () => engine.disableGlobalMaintenance(),
  }
  app.get('/_demo/routes', () => engine.listRoutes({ perPage: 500 }))
  for (const [name, operation] of Object.entries(controls)) {
    app.post<{ Querystring: Query }>(`/_demo/${name}`, async (request, reply) => {
      const result = await run(() => operation(request.query))
      return reply.code(result.status).send(result.body)
    })
  }
}

/** The curl lines the demo prints at startup. */
export function demoInstructions(base: string): string {
  return [
    `switchyard demo listening on ${base}  (CTL_ENV=${process.env.CTL_ENV ?? 'dev'})`,
    '',
    'Try the decorators:',
    `  curl -i ${base}/payments        # 503 MAINTENANCE_MODE with Retry-After`,
    `  curl -i ${base}/legacy          # 503 ROUTE_DISABLED`,
    `  curl -i ${base}/debug           # 200 in dev/staging; 404 with CTL_ENV=prod`,
    `  curl -i ${base}/v1/users        # 200 with Deprecation, Sunset and Link headers`,
    `  curl -i ${base}/health          # force-active: always 200`,
    `  curl -i ${base}/orders/42       # undecorated route`,
    '',
    'Change states at runtime (demo shortcuts over the engine API):',
    `  curl -s ${base}/_demo/routes`,
    `  curl -X POST '${base}/_demo/disable?route=GET:/orders&reason=hotfix'`,
    `  curl -X POST '${base}/_demo/maintenance?route=/orders/:id&minutes=5'`,
    `  curl -X POST '${base}/_demo/enable?route=GET:/payments'`,
    `  curl -X POST '${base}/_demo/global-on?reason=upgrade'   # everything but /health answers 503`,
    `  curl -X POST '${base}/_demo/global-off'`,
  ].join('\n')
}
