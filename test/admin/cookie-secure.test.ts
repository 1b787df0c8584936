/**
 * The session cookie's `Secure` flag behind a TLS-terminating proxy follows the trusted-proxy
 * rule: `X-Forwarded-Proto: https` from a trusted proxy makes it Secure, the same header from
 * anyone else does not; with Fastify's `trustProxy`, `request.protocol` decides.
 */
import Fastify, { type FastifyInstance } from 'fastify'
import { afterEach, describe, expect, it } from 'vitest'
import { adminApp } from '../../src/admin/index.js'
import { createEngine } from '../../src/index.js'
import { ADMIN, API, buildAdmin, closeAdmins, closeLater } from './helpers.js'

afterEach(closeAdmins)

const cookieOf = (headers: Record<string, unknown>) => String(headers['set-cookie'])

/** Logs in from `peer`, as a proxy saying the client came over https. */
const loginVia = (app: FastifyInstance) => (peer: string) =>
  app.inject({
    method: 'POST',
    url: `${API}/auth/login`,
    payload: ADMIN,
    remoteAddress: peer,
    headers: { 'x-forwarded-proto': 'https' },
  })

describe('session cookie Secure flag', () => {
  it('follows X-Forwarded-Proto from a trusted proxy only', async () => {
    const { app } = await buildAdmin({ auth: ADMIN })
    closeLater(app)
    const login = (peer: string, proto?: string) =>
      app.inject({
        method: 'POST',
        url: `${API}/auth/login`,
        payload: ADMIN,
        remoteAddress: peer,
        headers: proto === undefined ? {} : { 'x-forwarded-proto': proto },
      })
    expect(cookieOf((await login('10.0.0.1', 'https')).headers)).toMatch(/; Secure/)
    expect(cookieOf((await login('10.0.0.1', 'http, https')).headers)).toMatch(/; Secure/)
    expect(cookieOf((await login('10.0.0.1')).headers)).not.toMatch(/Secure/)
    expect(cookieOf((await login('203.0.113.9', 'https')).headers)).not.toMatch(/Secure/)
  })

  it('uses the trustedProxies option of the admin app', async () => {
    const { app } = await buildAdmin({ auth: ADMIN, trustedProxies: ['198.51.100.0/24'] })
    closeLater(app)
    const login = loginVia(app)
    expect(cookieOf((await login('198.51.100.4')).headers)).toMatch(/; Secure/)
    expect(cookieOf((await login('10.0.0.1')).headers)).not.toMatch(/Secure/)
  })

  it("follows Fastify's request.protocol when the app sets trustProxy", async () => {
    const engine = createEngine({ store: 'memory' })
    const app = Fastify({ trustProxy: '127.0.0.1' })
    await app.register(adminApp, { engine, auth: ADMIN })
    closeLater(app)
    app.addHook('onClose', () => engine.close())
    const login = loginVia(app)
    expect(cookieOf((await login('127.0.0.1')).headers)).toMatch(/; Secure/)
    expect(cookieOf((await login('10.0.0.1')).headers)).not.toMatch(/Secure/)
  })
})
