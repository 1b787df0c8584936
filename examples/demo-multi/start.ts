/**
 * The demo in multi-service form: `npm run demo:multi`. One process runs the central server
 * (as `switchyard serve` would) and two SDK apps, `payments` and `search`, connected to it over
 * HTTP. Change either app from the server — `ctl`, the dashboard or the REST API — and watch it
 * apply at once. Ports: SERVER_PORT (9000), PAYMENTS_PORT (8001), SEARCH_PORT (8002).
 */
import Fastify, { type FastifyInstance } from 'fastify'
import { startServer } from '../../src/cli/serve.js'
import { deprecated, maintenance, rateLimit, switchyardSdk } from '../../src/sdk/index.js'

const credentials = { username: 'admin', password: 'switchyard' }
const host = '127.0.0.1'
const port = (name: string, fallback: number) => Number(process.env[name] ?? fallback)

const server = await startServer({
  host,
  port: port('SERVER_PORT', 9000),
  path: '/switchyard',
  env: {
    ...process.env,
    CTL_ADMIN_USER: process.env.CTL_ADMIN_USER ?? credentials.username,
    CTL_ADMIN_PASSWORD: process.env.CTL_ADMIN_PASSWORD ?? credentials.password,
  },
})

async function sdkApp(appId: string, routes: (app: FastifyInstance) => void, listenOn: number) {
  const app = Fastify({ logger: { level: 'warn' } })
  await app.register(switchyardSdk, { server: server.url, appId, ...credentials })
  routes(app)
  return { app, url: await app.listen({ host, port: listenOn }) }
}

const payments = await sdkApp(
  'payments',
  (app) => {
    app.get('/payments', () => ({ service: 'payments', ok: true }))
    app.post('/payments/refund', { onRequest: rateLimit({ limit: '5/minute' }) }, () => ({
      refunded: true,
    }))
    app.get('/health', () => ({ ok: true }))
  },
  port('PAYMENTS_PORT', 8001),
)
const search = await sdkApp(
  'search',
  (app) => {
    app.get('/search', () => ({ service: 'search', hits: [] }))
    app.get('/v1/search', { onRequest: deprecated({ useInstead: '/search' }) }, () => ({
      hits: [],
    }))
    app.get('/reindex', { onRequest: maintenance({ reason: 'nightly reindex' }) }, () => ({}))
  },
  port('SEARCH_PORT', 8002),
)

console.log(`switchyard multi-service demo

  central server   ${server.url}   (dashboard; login ${credentials.username} / ${credentials.password})
  payments app     ${payments.url}/payments
  search app       ${search.url}/search

Try:
  export CTL_SERVER_URL=${server.url}
  npx ctl login ${credentials.username}          # password: ${credentials.password}
  npx ctl services                # payments, search
  npx ctl disable GET:/payments --service payments --reason incident
  curl -i ${payments.url}/payments    # 503 ROUTE_DISABLED, pushed at once
  npx ctl sm enable search --reason migration   # search only; payments unaffected
  npx ctl global enable --reason upgrade        # both apps
`)

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    void Promise.all([payments.app.close(), search.app.close()])
      .then(() => server.app.close())
      .then(() => process.exit(0))
  })
}
