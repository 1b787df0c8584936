/**
 * The demo in multi-service form: `npm run demo:multi`. One process runs the central server
 * (as `switchyard serve` would) and two SDK apps, `payments` and `search`, connected to it over
 * HTTP. Change either app from the server — `ctl`, the dashboard or the REST API — and watch it
 * apply at once. Ports: SERVER_PORT (9000), PAYMENTS_PORT (8001), SEARCH_PORT (8002).
 *
 * Each app runs on a service token of its own service, created at startup through the server's
 * API (as `ctl tokens create payments-app --service payments` would): an app never holds a
 * password, and can change nothing outside its service.
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

/** Logs in as the demo's admin and creates a service token of `service` through the API. */
async function serviceToken(service: string): Promise<string> {
  const call = async (path: string, body: unknown, token?: string) => {
    const response = await fetch(`${server.url}${path}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
      },
      body: JSON.stringify(body),
    })
    if (!response.ok)
      throw new Error(`${path} answered ${response.status}: ${await response.text()}`)
    return (await response.json()) as { token: string }
  }
  const login = await call('/api/auth/login', {
    username: process.env.CTL_ADMIN_USER ?? credentials.username,
    password: process.env.CTL_ADMIN_PASSWORD ?? credentials.password,
  })
  // Unique per start: a file or Redis store may keep the tokens of an earlier run.
  const name = `${service}-demo-${Date.now().toString(36)}`
  return (await call('/api/tokens', { name, service }, login.token)).token
}

async function sdkApp(appId: string, routes: (app: FastifyInstance) => void, listenOn: number) {
  const app = Fastify({ logger: { level: 'warn' } })
  const token = await serviceToken(appId)
  await app.register(switchyardSdk, { server: server.url, appId, token })
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
  npx ctl tokens list             # the apps' service tokens
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
