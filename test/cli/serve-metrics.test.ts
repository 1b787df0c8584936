/**
 * `switchyard serve --metrics`: the central server serves its Prometheus metrics inside the admin
 * app, to its users only, and counts the SDK apps connected per service; without the option
 * there is no metrics route.
 */
import Fastify, { type FastifyInstance } from 'fastify'
import { afterEach, describe, expect, it } from 'vitest'
import { startServer, type RunningServer } from '../../src/cli/serve.js'
import { switchyardSdk } from '../../src/sdk/index.js'
import { until } from '../helpers/wait.js'

const closing: (() => Promise<unknown>)[] = []
afterEach(async () => {
  for (const close of closing.splice(0).reverse()) await close()
})

const CREDENTIALS = { CTL_ADMIN_USER: 'ops', CTL_ADMIN_PASSWORD: 'serve-metrics-secret' }

async function server(metrics: boolean): Promise<RunningServer> {
  const central = await startServer({
    host: '127.0.0.1',
    port: 0,
    path: '/switchyard',
    metrics,
    env: { LOG_LEVEL: 'silent', ...CREDENTIALS },
  })
  closing.push(() => central.app.close())
  return central
}

async function bearer(central: RunningServer): Promise<string> {
  const login = await fetch(`${central.url}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'ops', password: CREDENTIALS.CTL_ADMIN_PASSWORD }),
  })
  expect(login.status).toBe(200)
  return `Bearer ${((await login.json()) as { token: string }).token}`
}

describe('switchyard serve --metrics', () => {
  it('serves the metrics to the admin users and counts the connected SDK apps', async () => {
    const central = await server(true)
    expect((await fetch(`${central.url}/metrics`)).status).toBe(401)
    const authorization = await bearer(central)
    const scrape = async () =>
      (await fetch(`${central.url}/metrics`, { headers: { authorization } })).text()
    expect(await scrape()).toMatch(/^switchyard_backend_up 1$/m)

    const created = await fetch(`${central.url}/api/tokens`, {
      method: 'POST',
      headers: { authorization, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'shop-app', service: 'shop' }),
    })
    expect(created.status).toBe(201)
    const app: FastifyInstance = Fastify({ logger: false })
    closing.push(() => app.close())
    await app.register(switchyardSdk, {
      server: central.url,
      appId: 'shop',
      token: ((await created.json()) as { token: string }).token,
      requireServer: true,
    })
    app.get('/pay', () => 'ok')
    await app.ready()
    await until(async () =>
      /^switchyard_sdk_apps_connected\{service="shop"\} 1$/m.test(await scrape()),
    )
  })

  it('has no metrics route without the option', async () => {
    const central = await server(false)
    const authorization = await bearer(central)
    expect((await fetch(`${central.url}/metrics`, { headers: { authorization } })).status).toBe(404)
  })
})
