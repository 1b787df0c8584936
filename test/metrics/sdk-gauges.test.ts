/**
 * The SDK connection gauges: `switchyard_sdk_apps_connected{service}` on a central server (an
 * app with the admin app and metrics on) following SDK apps as they connect and leave, and
 * `switchyard_sdk_connected` in the SDK app.
 */
import Fastify, { type FastifyInstance } from 'fastify'
import { afterEach, describe, expect, it } from 'vitest'
import { createEngine } from '../../src/create-engine.js'
import { switchyard } from '../../src/fastify/plugin.js'
import { switchyardSdk } from '../../src/sdk/index.js'
import { memoryStore } from '../../src/stores/memory.js'
import { until } from '../helpers/wait.js'

const quiet = { level: 'silent' } as const
const apps: FastifyInstance[] = []
afterEach(async () => {
  for (const app of apps.splice(0).reverse()) await app.close()
})

async function centralServer(): Promise<{ url: string; scrape: () => Promise<string> }> {
  const app = Fastify({ logger: quiet })
  apps.push(app)
  await app.register(switchyard, {
    engine: createEngine({ store: memoryStore() }),
    admin: { path: '/switchyard' },
    metrics: true,
  })
  const url = await app.listen({ host: '127.0.0.1', port: 0 })
  return {
    url: `${url}/switchyard`,
    scrape: async () => (await app.inject({ url: '/switchyard/metrics' })).body,
  }
}

async function sdkApp(server: string, appId: string): Promise<FastifyInstance> {
  const app = Fastify({ logger: quiet })
  await app.register(switchyardSdk, {
    server,
    appId,
    requireServer: true,
    retryInterval: 0.05,
    metrics: { public: true },
  })
  app.get('/pay', () => 'ok')
  await app.ready()
  return app
}

function gauge(text: string, service: string): number | null {
  const line = text
    .split('\n')
    .find((entry) => entry.startsWith(`switchyard_sdk_apps_connected{service="${service}"} `))
  return line === undefined ? null : Number(line.split(' ')[1])
}

describe('SDK connection gauges', () => {
  it('count the open SDK streams per service on the server, and say connected in the app', async () => {
    const central = await centralServer()
    expect(await central.scrape()).toContain('# TYPE switchyard_sdk_apps_connected gauge')
    const first = await sdkApp(central.url, 'shop')
    const second = await sdkApp(central.url, 'shop')
    const third = await sdkApp(central.url, 'cart')
    await until(async () => gauge(await central.scrape(), 'shop') === 2)
    expect(gauge(await central.scrape(), 'cart')).toBe(1)
    const own = await first.inject({ url: '/metrics' })
    expect(own.body).toMatch(/^switchyard_sdk_connected 1$/m)

    await second.close()
    await third.close()
    await until(async () => gauge(await central.scrape(), 'shop') === 1)
    // A service whose apps all left stays at 0 (its routes are still registered).
    expect(gauge(await central.scrape(), 'cart')).toBe(0)
    await first.close()
    await until(async () => gauge(await central.scrape(), 'shop') === 0)
  })

  it('are absent without the metrics option', async () => {
    const app = Fastify({ logger: quiet })
    apps.push(app)
    await app.register(switchyard, {
      engine: createEngine({ store: memoryStore() }),
      admin: { path: '/switchyard' },
    })
    expect(app.switchyardMetrics).toBeNull()
    expect((await app.inject({ url: '/switchyard/metrics' })).statusCode).toBe(404)
  })
})
