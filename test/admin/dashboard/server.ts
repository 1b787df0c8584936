/**
 * A real app for the dashboard tests: Fastify with the switchyard plugin and its admin app,
 * listening on 127.0.0.1 port 0, with routes of two services, a rate-limited route, a flag
 * and a segment. `HOSTILE` strings land in every place the pages show user text.
 */
import Fastify, { type FastifyInstance } from 'fastify'
import { createEngine, type Engine } from '../../../src/index.js'
import type { AdminAuthOption } from '../../../src/admin/index.js'
import { disabled, rateLimit, switchyard } from '../../../src/fastify/index.js'
import { booleanFlag } from '../../flags/helpers.js'

/** Credentials of the test admin. */
export const ADMIN = { username: 'admin', password: 's3cret' }

/** Text that would run script or break attributes if a page did not escape it. */
export const HOSTILE = `"><script>window.__xss=1</script><img src=x onerror="window.__xss=2">`

/** A running dashboard app. */
export interface DashboardServer {
  app: FastifyInstance
  engine: Engine
  /** `http://127.0.0.1:<port>` */
  origin: string
  /** The dashboard's URL: origin + mount. */
  base: string
  close(): Promise<void>
}

/** Options of {@link startDashboard}. */
export interface DashboardServerOptions {
  /** Admin credentials (any `auth` shape); null runs the admin app open (no login). */
  auth?: AdminAuthOption | null
  /** Extra routes per service, to make the table long (`bulk` routes of service `bulk`). */
  bulk?: number
}

/** Starts the app; close it in `afterAll`. */
export async function startDashboard(
  options: DashboardServerOptions = {},
): Promise<DashboardServer> {
  const engine = createEngine({
    store: 'memory',
    service: 'shop',
    env: 'prod',
    logger: { warn: () => undefined, error: () => undefined },
  })
  const app = Fastify({ logger: false })
  const auth = options.auth === undefined ? ADMIN : options.auth
  await app.register(switchyard, {
    engine,
    admin: { path: '/switchyard', ...(auth === null ? {} : { auth }), keepaliveInterval: 5 },
  })
  const ok = () => ({ ok: true })
  app.get('/orders', ok)
  app.post('/orders', ok)
  app.get('/orders/:id', ok)
  app.get('/payments', ok)
  app.get(`/legacy/"quoted'path`, { onRequest: disabled({ reason: HOSTILE }) }, ok)
  app.get('/search', { onRequest: rateLimit({ limit: '2/minute', key: 'ip' }) }, ok)
  for (let i = 0; i < (options.bulk ?? 0); i++) app.get(`/bulk/item-${i}`, ok)
  engine.registerRoute('GET', '/invoices', null, { service: 'billing' })
  engine.registerRoute('GET', '/refunds', null, { service: 'billing' })
  await engine.saveFlag(
    booleanFlag('new-checkout', {
      name: 'New checkout',
      fallthrough: 'off',
      targets: { on: ['ada'] },
    }),
    { audit: false },
  )
  await engine.saveSegment(
    { key: 'beta', name: 'Beta users', included: ['ada', 'grace'] },
    { audit: false },
  )
  await app.listen({ host: '127.0.0.1', port: 0 })
  const address = app.server.address()
  const port = typeof address === 'object' && address !== null ? address.port : 0
  const origin = `http://127.0.0.1:${port}`
  return {
    app,
    engine,
    origin,
    base: `${origin}/switchyard`,
    close: async () => {
      await app.close()
      await engine.close()
    },
  }
}
