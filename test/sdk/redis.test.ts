/**
 * Several `switchyard serve` processes on one Redis act as one: an app registered with one
 * server is addressed through another (REST and `ctl --service` / `CTL_SERVICE`), and a change
 * made while an app was disconnected reaches it through the snapshot when it reconnects.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ctl } from '../cli/helpers.js'
import { deleteKeys, redisTestsEnabled, testPrefix, TEST_REDIS_URL } from '../helpers/redis.js'
import { until } from '../helpers/wait.js'
import {
  ADMIN,
  api,
  login,
  sdkApp,
  serviceToken,
  startServe,
  type ServeProcess,
} from './helpers.js'

const enabled = await redisTestsEnabled('test/sdk/redis.test.ts')
const prefix = testPrefix('multi')
const env = {
  CTL_BACKEND: 'redis',
  CTL_REDIS_URL: TEST_REDIS_URL,
  CTL_REDIS_PREFIX: prefix,
  CTL_ADMIN_USER: ADMIN.username,
  CTL_ADMIN_PASSWORD: ADMIN.password,
}
const servers: ServeProcess[] = []
const home = mkdtempSync(join(tmpdir(), 'sy-multi-ctl-'))

beforeAll(async () => {
  if (!enabled) return
  servers.push(await startServe(env), await startServe(env))
})
afterAll(async () => {
  for (const server of servers) await server.stop('SIGKILL')
  rmSync(home, { recursive: true, force: true })
  if (enabled) await deleteKeys(prefix)
})

describe.skipIf(!enabled)('two servers on one Redis', { timeout: 60_000 }, () => {
  it('serve an app registered with either, through the API and ctl --service', async () => {
    const [a, b] = servers as [ServeProcess, ServeProcess]
    const { app, url } = await sdkApp({
      server: a.url,
      appId: 'catalog',
      token: await serviceToken(a.url, 'catalog'),
    })
    const tokenB = await login(b.url)
    // B knows the routes A registered (no ROUTE_NOT_FOUND).
    await until(async () => {
      const listed = await api(b.url, tokenB, 'GET', '/api/routes?service=catalog')
      return listed.body.total === 4
    })
    const changed = await api(b.url, tokenB, 'POST', '/api/routes/disable', {
      route: 'GET:/pay',
      service: 'catalog',
    })
    expect(changed.status).toBe(200)
    await until(async () => (await fetch(`${url}/pay`)).status === 503)

    // A forwarded write of its own service, on its service token: stored for both servers.
    await app.switchyard.rateLimits.service('catalog').set({ limit: '1000/minute' })
    const policy = await api(b.url, tokenB, 'GET', '/api/services/catalog/rate-limit')
    expect(policy.body.policy).toMatchObject({ limit: '1000/minute' })
    // Audited with the token as actor (written by server A, read through B).
    await until(async () => {
      const audit = await api(b.url, tokenB, 'GET', '/api/audit?service=catalog&per_page=50')
      return (audit.body.items as { actor: string }[]).some((entry) =>
        entry.actor.startsWith('token:catalog-app-'),
      )
    })

    // ctl against B, with --service and with CTL_SERVICE.
    const ctlEnv = { HOME: home, CTL_SERVER_URL: b.url }
    const loggedIn = await ctl(['login', ADMIN.username, '--password', ADMIN.password], {
      env: ctlEnv,
    })
    expect(loggedIn.code, loggedIn.stderr).toBe(0)
    const enabledRoute = await ctl(['enable', 'GET:/pay', '--service', 'catalog'], { env: ctlEnv })
    expect(enabledRoute.code, enabledRoute.stderr).toBe(0)
    await until(async () => (await fetch(`${url}/pay`)).status === 200)
    const fromEnv = await ctl(['maintenance', 'GET:/search', '--reason', 'reindex'], {
      env: { ...ctlEnv, CTL_SERVICE: 'catalog' },
    })
    expect(fromEnv.code, fromEnv.stderr).toBe(0)
    await until(async () => (await fetch(`${url}/search`)).status === 503)
    const status = await ctl(['status', '--service', 'catalog'], { env: ctlEnv })
    expect(status.stdout).toMatch(/GET \/search\s+MAINTENANCE/)
    const wrong = await ctl(['enable', 'GET:/pay', '--service', 'Not Valid'], { env: ctlEnv })
    expect(wrong.code).not.toBe(0)
    const services = await ctl(['services', '--json'], { env: ctlEnv })
    expect(JSON.parse(services.stdout)).toContain('catalog')
    await app.close()
  })

  it('resyncs an app from a fresh snapshot: a change made while it was away is applied', async () => {
    const [a, b] = servers as [ServeProcess, ServeProcess]
    const port = Number(new URL(a.url).port)
    const { app, url } = await sdkApp({
      server: a.url,
      appId: 'inventory',
      token: await serviceToken(b.url, 'inventory'),
    })
    expect(await a.stop('SIGTERM')).toBe(0)
    await until(() => app.switchyardSdk.status === 'disconnected')
    const tokenB = await login(b.url)
    await api(b.url, tokenB, 'POST', '/api/routes/disable', {
      route: 'GET:/pay',
      service: 'inventory',
    })
    await api(b.url, tokenB, 'PUT', '/api/services/inventory/rate-limit', {
      limit: '1/minute',
      key_strategy: 'global',
    })
    // Still the old state: the app is disconnected.
    expect((await fetch(`${url}/pay`)).status).toBe(200)
    servers[0] = await startServe(env, ['--port', String(port)])
    await until(() => app.switchyardSdk.status === 'live')
    expect(app.switchyard.getState('GET:/pay')[0]?.status).toBe('disabled')
    // The service policy counts before the route state is checked: one request, then 429.
    expect((await fetch(`${url}/health`)).status).toBe(200)
    expect((await fetch(`${url}/health`)).status).toBe(429)
    await app.close()
  })
})
