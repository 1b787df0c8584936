/**
 * The admin event stream ends with its session: at logout of that token (at once), when the
 * token expires, and when another instance revokes it (within sessionCheckInterval).
 */
import { request as httpRequest, type IncomingMessage } from 'node:http'
import type { FastifyInstance } from 'fastify'
import { afterEach, describe, expect, it } from 'vitest'
import { ADMIN, API, buildAdmin, closeAdmins, closeLater, login } from './helpers.js'

afterEach(closeAdmins)

/** Opens the stream; resolves `ended` when the server ends it. */
const addresses = new WeakMap<FastifyInstance, string>()

async function openStream(app: FastifyInstance, token: string) {
  let address = addresses.get(app)
  if (address === undefined) {
    address = await app.listen({ host: '127.0.0.1', port: 0 })
    addresses.set(app, address)
  }
  const request = httpRequest(`${address}${API}/events`, {
    headers: { authorization: `Bearer ${token}` },
  })
  const response = await new Promise<IncomingMessage>((resolve, reject) => {
    request.on('response', resolve)
    request.on('error', reject)
    request.end()
  })
  response.resume()
  const ended = new Promise<void>((resolve) => {
    response.on('end', resolve)
    response.on('close', resolve)
  })
  let done = false
  void ended.then(() => (done = true))
  return { response, ended, isEnded: () => done, close: () => response.destroy() }
}

describe('event stream and its session', () => {
  it('ends when its token is logged out', async () => {
    const { app } = await buildAdmin({ auth: ADMIN })
    closeLater(app)
    const token = await login(app)
    const other = await login(app)
    const stream = await openStream(app, token)
    const bystander = await openStream(app, other)
    expect(stream.response.statusCode).toBe(200)
    const logout = await app.inject({
      method: 'POST',
      url: `${API}/auth/logout`,
      headers: { authorization: `Bearer ${token}` },
    })
    expect(logout.json()).toEqual({ revoked: true })
    await stream.ended
    expect(bystander.isEnded()).toBe(false)
    bystander.close()
  })

  it('ends when its token expires', async () => {
    const { app, clock, engine } = await buildAdmin({
      auth: ADMIN,
      tokenExpiry: 60,
      sessionCheckInterval: 0.05,
    })
    closeLater(app)
    const token = await login(app)
    // count the stream's token lookups, to know when it has checked its session again
    const tokens = engine.sessionTokens()
    const get = tokens.get.bind(tokens)
    let lookups = 0
    tokens.get = (hash) => {
      lookups++
      return get(hash)
    }
    const stream = await openStream(app, token)
    clock?.advance(30_000)
    const seen = lookups
    await expect.poll(() => lookups).toBeGreaterThan(seen + 1)
    expect(stream.isEnded()).toBe(false)
    clock?.advance(31_000)
    await stream.ended
  })

  it('ends within sessionCheckInterval when the token is revoked elsewhere', async () => {
    const { app, engine } = await buildAdmin({ auth: ADMIN, sessionCheckInterval: 0.05 })
    closeLater(app)
    const token = await login(app)
    const stream = await openStream(app, token)
    const { hashToken } = await import('../../src/admin/auth/sessions.js')
    // another instance sharing the store revoked it
    expect(await engine.sessionTokens().revoke(hashToken(token))).toBe(true)
    await stream.ended
  })
})
