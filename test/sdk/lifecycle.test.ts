/**
 * An SDK app's connection lifecycle against a real `switchyard serve` on the file backend:
 * clear startup errors (wrong URL, wrong path, refused credentials), fail-open start, keeping
 * the last known state while the server is down, reconnection and resync after a restart.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Fastify from 'fastify'
import { afterAll, describe, expect, it } from 'vitest'
import { switchyardSdk } from '../../src/sdk/index.js'
import { freePort } from '../../support/servers.js'
import { until } from '../helpers/wait.js'
import {
  ADMIN,
  api,
  defaultRoutes,
  login,
  sdkApp,
  serviceToken,
  startServe,
  type ServeProcess,
} from './helpers.js'

const dir = mkdtempSync(join(tmpdir(), 'sy-multi-'))
const env = {
  CTL_BACKEND: 'file',
  CTL_FILE_PATH: join(dir, 'state.json'),
  CTL_ADMIN_USER: ADMIN.username,
  CTL_ADMIN_PASSWORD: ADMIN.password,
}
const servers: ServeProcess[] = []
afterAll(async () => {
  for (const server of servers) await server.stop('SIGKILL')
  rmSync(dir, { recursive: true, force: true })
})

async function serve(port = 0): Promise<ServeProcess> {
  const server = await startServe(env, ['--port', String(port)])
  servers.push(server)
  return server
}

/** An SDK app that is not started yet. */
async function unstarted(options: Parameters<typeof switchyardSdk>[1]) {
  const app = Fastify()
  await app.register(switchyardSdk, { timeout: 2, ...options })
  defaultRoutes(app)
  return app
}

describe('startup', { timeout: 60_000 }, () => {
  it('fails with a clear message for a wrong URL, a wrong path and refused credentials', async () => {
    const server = await serve()
    const port = await freePort()
    const token = await serviceToken(server.url, 'shop')
    const other = await serviceToken(server.url, 'cart')
    const cases: [Parameters<typeof switchyardSdk>[1], RegExp][] = [
      [
        { server: `http://127.0.0.1:${port}/switchyard`, appId: 'shop', token },
        /cannot reach the switchyard server at http:\/\/127\.0\.0\.1:\d+\/switchyard/,
      ],
      [
        { server: `${server.url}-typo`, appId: 'shop', token },
        /no switchyard server answers at .*switchyard-typo.* \(404\)/,
      ],
      [
        { server: server.url, appId: 'shop', token: 'not-a-token' },
        /refused the token \(401.*ctl tokens create NAME --service shop/,
      ],
      [
        { server: server.url, appId: 'shop', token: `syt_${'A'.repeat(43)}` },
        /refused the token \(401/,
      ],
      [
        // Another app's service token.
        { server: server.url, appId: 'shop', token: other },
        /refused the token for app shop \(403 FORBIDDEN\)/,
      ],
    ]
    for (const [options, message] of cases) {
      const app = await unstarted({ ...options, requireServer: true })
      await expect(app.ready()).rejects.toThrow(message)
      await app.close()
    }
    // `failOpen: false`, the former spelling, refuses too.
    const refusing = await unstarted({ ...cases[0]![0], failOpen: false })
    await expect(refusing.ready()).rejects.toThrow(/cannot reach the switchyard server/)
    await refusing.close()
    // A contradicting pair is refused at registration.
    await expect(
      unstarted({ server: server.url, appId: 'shop', requireServer: true, failOpen: true }),
    ).rejects.toThrow(/requireServer: true and failOpen: true contradict/)
    await expect(
      unstarted({ server: server.url, appId: 'shop', requireServer: 'yes' as unknown as boolean }),
    ).rejects.toThrow(/requireServer must be true or false/)
    // Options checked at registration.
    await expect(unstarted({ server: 'not a url', appId: 'shop' })).rejects.toThrow(
      /invalid server URL/,
    )
    await expect(unstarted({ server: server.url, appId: 'Shop' })).rejects.toThrow(/invalid appId/)
    // Earlier versions logged in with a password: refused, saying what to do instead.
    const legacies: Record<string, string>[] = [
      { username: 'admin', password: 's3cret' },
      { token, username: 'admin', password: 's3cret' },
      { username: 'admin' },
    ]
    for (const legacy of legacies)
      await expect(unstarted({ server: server.url, appId: 'shop', ...legacy })).rejects.toThrow(
        /service token.*ctl tokens create shop-app --service shop/,
      )
    expect(
      (await api(server.url, await login(server.url), 'GET', '/api/services')).body,
    ).not.toContain('shop')
    // The next test starts its own servers on the same file.
    expect(await server.stop('SIGTERM')).toBe(0)
  })

  it('starts on declared states by default and connects once the server is up', async () => {
    // The token is created on the file-backed server, which is then stopped: it keeps it.
    const first = await serve()
    const port = Number(new URL(first.url).port)
    const sdkToken = await serviceToken(first.url, 'late')
    expect(await first.stop('SIGTERM')).toBe(0)
    const app = await unstarted({
      server: `http://127.0.0.1:${port}/switchyard`,
      appId: 'late',
      token: sdkToken,
      retryInterval: 0.05,
      maxRetryInterval: 0.2,
      health: true,
      metrics: { public: true },
    })
    const url = await app.listen({ host: '127.0.0.1', port: 0 })
    expect(app.switchyardSdk.status).toBe('disconnected')
    expect((await fetch(`${url}/pay`)).status).toBe(200)
    expect((await fetch(`${url}/legacy`)).status).toBe(503)
    // Ready (the server is not required), the sdk check says why it is failing.
    const before = await fetch(`${url}/switchyard/health/ready`)
    expect(before.status).toBe(200)
    const beforeBody = (await before.json()) as {
      status: string
      checks: Record<string, { status: string; detail?: string }>
    }
    expect(beforeBody.status).toBe('ok')
    expect(beforeBody.checks.replica).toEqual({ status: 'ok' })
    expect(beforeBody.checks.sdk?.status).toBe('failing')
    expect(beforeBody.checks.sdk?.detail).toMatch(
      /^serving declared states; central server not reached since \d{4}-\d\d-\d\dT/,
    )
    expect(await (await fetch(`${url}/metrics`)).text()).toMatch(/^switchyard_sdk_connected 0$/m)
    const server = await serve(port)
    await until(() => app.switchyardSdk.status === 'live')
    const after = await fetch(`${url}/switchyard/health/ready`)
    expect(after.status).toBe(200)
    expect(((await after.json()) as { checks: unknown }).checks).toMatchObject({
      sdk: { status: 'ok' },
    })
    expect(await (await fetch(`${url}/metrics`)).text()).toMatch(/^switchyard_sdk_connected 1$/m)
    const token = await login(server.url)
    await api(server.url, token, 'POST', '/api/routes/disable', {
      route: 'GET:/pay',
      service: 'late',
    })
    await until(async () => (await fetch(`${url}/pay`)).status === 503)
    await app.close()
  })
})

describe('server restart', { timeout: 90_000 }, () => {
  it('keeps enforcing the last known state while the server is down, then reconnects and resyncs', async () => {
    let server = await serve()
    const port = Number(new URL(server.url).port)
    let token = await login(server.url)
    const { app, url } = await sdkApp({
      server: server.url,
      appId: 'restart',
      token: await serviceToken(server.url, 'restart'),
      requireServer: true,
      health: { path: '/ops' },
    })
    const ready = async () => {
      const response = await fetch(`${url}/ops/health/ready`)
      return {
        status: response.status,
        body: (await response.json()) as {
          status: string
          checks: Record<string, { status: string; detail?: string }>
        },
      }
    }
    expect(await ready()).toMatchObject({
      status: 200,
      body: { checks: { sdk: { status: 'ok' } } },
    })
    await api(server.url, token, 'POST', '/api/routes/disable', {
      route: 'GET:/pay',
      service: 'restart',
      reason: 'before',
    })
    await until(async () => (await fetch(`${url}/pay`)).status === 503)

    expect(await server.stop('SIGTERM')).toBe(0)
    await until(() => app.switchyardSdk.status === 'disconnected')
    // Last known state, not the declared one.
    expect((await fetch(`${url}/pay`)).status).toBe(503)
    expect((await fetch(`${url}/health`)).status).toBe(200)
    // With requireServer the app leaves rotation while its server is gone; liveness holds.
    const down = await ready()
    expect(down.status).toBe(503)
    expect(down.body.status).toBe('unavailable')
    expect(down.body.checks.sdk?.detail).toMatch(
      /^serving last known states; central server not reached since /,
    )
    expect((await fetch(`${url}/ops/health/live`)).status).toBe(200)

    server = await serve(port)
    await until(() => app.switchyardSdk.status === 'live')
    token = await login(server.url)
    // The file-backed server kept the registration and the state.
    const states = await api(server.url, token, 'GET', '/api/routes?service=restart')
    expect(states.body.items.map((s: { route: string }) => s.route)).toContain('GET:/pay')
    await api(server.url, token, 'POST', '/api/routes/enable', {
      route: 'GET:/pay',
      service: 'restart',
    })
    await until(async () => (await fetch(`${url}/pay`)).status === 200)
    expect((await ready()).status).toBe(200)
    await app.close()
  })
})
