/**
 * An API token never reaches a log line: not the admin app's (request logs at trace level, a
 * refusal, a revocation ending a stream), nor an SDK app's when the server refuses its token.
 */
import { Writable } from 'node:stream'
import Fastify from 'fastify'
import { afterEach, describe, expect, it } from 'vitest'
import { adminApp } from '../../src/admin/index.js'
import { hashToken } from '../../src/admin/auth/sessions.js'
import { createEngine } from '../../src/index.js'
import { switchyardSdk } from '../../src/sdk/index.js'
import { recordingLogger } from '../helpers/logger.js'
import { until } from '../helpers/wait.js'
import { ADMIN, registerRoutes } from './helpers.js'

const closers: (() => Promise<unknown>)[] = []
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close()
})

describe('API token redaction', () => {
  it('keeps tokens out of every log line', async () => {
    let logged = ''
    const stream = new Writable({
      write(chunk: Buffer, _encoding, callback) {
        logged += chunk.toString()
        callback()
      },
    })
    const engine = createEngine({ store: 'memory' })
    registerRoutes(engine)
    const app = Fastify({ logger: { level: 'trace', stream } })
    await app.register(adminApp, { engine, path: '/switchyard', auth: ADMIN })
    closers.push(
      () => engine.close(),
      () => app.close(),
    )
    const url = `${await app.listen({ host: '127.0.0.1', port: 0 })}/switchyard`
    const call = async (method: string, path: string, token: string, body?: unknown) => {
      const response = await fetch(`${url}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      })
      return { status: response.status, body: await response.text() }
    }
    const login = await fetch(`${url}/api/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(ADMIN),
    })
    const admin = ((await login.json()) as { token: string }).token
    const created = JSON.parse(
      (await call('POST', '/api/tokens', admin, { name: 'shop-app', service: 'shop' })).body,
    ) as { id: string; token: string }
    const token = created.token

    expect((await call('GET', '/api/auth/me', token)).status).toBe(200)
    expect((await call('GET', '/api/routes', token)).status).toBe(403)
    expect(
      (await call('POST', '/api/sdk/register', token, { app_id: 'shop', routes: [] })).status,
    ).toBe(200)

    // An SDK app on the token, then revoked: the app logs the refusal.
    const sdkLog = recordingLogger()
    const sdk = Fastify()
    await sdk.register(switchyardSdk, {
      server: url,
      appId: 'shop',
      token,
      logger: sdkLog,
      retryInterval: 0.05,
      maxRetryInterval: 0.1,
    })
    sdk.get('/pay', () => ({ ok: true }))
    closers.push(() => sdk.close())
    await sdk.ready()
    expect(sdk.switchyardSdk.status).toBe('live')
    expect((await call('DELETE', `/api/tokens/${created.id}`, admin)).status).toBe(204)
    await until(() => sdkLog.lines.some((line) => /refused the token/.test(line.msg ?? '')))
    expect((await call('GET', '/api/auth/me', token)).status).toBe(401)

    const sdkText = JSON.stringify(sdkLog.lines)
    expect(logged).toContain('/api/auth/me')
    for (const secret of [token, hashToken(token), token.slice(4)]) {
      expect(logged).not.toContain(secret)
      expect(sdkText).not.toContain(secret)
    }
  })
})
