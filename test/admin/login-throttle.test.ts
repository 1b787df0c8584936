/**
 * Login throttling by username and by address: the address is the trusted-proxy rule's client
 * (so one proxy's traffic is not one client, and a client behind it cannot pick its address),
 * attempts are counted before the password is checked (concurrent guesses against a slow
 * authenticate are all counted), and other people's failures delay a correct password by at
 * most maxSharedDelay.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { LoginThrottle } from '../../src/common/login-throttle.js'
import { API, buildAdmin, closeLater, closeAdmins } from './helpers.js'
import { FakeClock } from '../helpers/clock.js'

afterEach(closeAdmins)

const slowAuth = {
  authenticate: async (username: string, password: string) => {
    await new Promise((resolve) => setTimeout(resolve, 20))
    return username === 'admin' && password === 's3cret'
  },
}

async function admin(loginThrottle = {}) {
  const built = await buildAdmin({ auth: slowAuth, loginThrottle })
  closeLater(built.app)
  const login = (username: string, password: string, peer = '203.0.113.5', xff?: string) =>
    built.app.inject({
      method: 'POST',
      url: `${API}/auth/login`,
      payload: { username, password },
      remoteAddress: peer,
      ...(xff === undefined ? {} : { headers: { 'x-forwarded-for': xff } }),
    })
  return { ...built, login }
}

describe('admin login throttling', () => {
  it('counts concurrent guesses before the password is checked', async () => {
    const { login } = await admin({ freeAttempts: 3, baseDelay: 10 })
    const answers = await Promise.all(Array.from({ length: 10 }, () => login('admin', 'guess')))
    const codes = answers.map((answer) => answer.statusCode).sort()
    expect(codes.filter((code) => code === 401)).toHaveLength(3)
    expect(codes.filter((code) => code === 429)).toHaveLength(7)
  })

  it("counts the client behind a trusted proxy, not the proxy: others' failures do not lock an admin out", async () => {
    const { login } = await admin({ freeAttempts: 3 })
    for (let i = 0; i < 10; i++)
      await login('mallory', 'guess', '10.0.0.1', `127.0.0.1, 198.51.100.66`)
    expect((await login('mallory', 'guess', '10.0.0.1', '198.51.100.66')).statusCode).toBe(429)
    // mallory cannot escape by writing another first entry: the proxy appended her address
    expect((await login('mallory', 'guess', '10.0.0.1', '1.2.3.4, 198.51.100.66')).statusCode).toBe(
      429,
    )
    expect((await login('admin', 's3cret', '10.0.0.1', '198.51.100.7')).statusCode).toBe(200)
  })

  it('slows guessing one username from many addresses, and many usernames from one address, by at most maxSharedDelay', async () => {
    const { login, clock } = await admin({ sharedFreeAttempts: 4, maxSharedDelay: 30 })
    for (let i = 0; i < 4; i++)
      expect((await login('admin', 'guess', '10.0.0.1', `198.51.100.${i}`)).statusCode).toBe(401)
    const rotated = await login('admin', 'guess', '10.0.0.1', '198.51.100.99')
    expect(rotated.statusCode).toBe(429)
    // the real admin is delayed too, but never beyond maxSharedDelay
    const delayed = await login('admin', 's3cret', '192.0.2.50')
    expect(delayed.statusCode).toBe(429)
    expect(delayed.json().error.retry_after).toBeLessThanOrEqual(30)
    clock!.advance(30_000)
    expect((await login('admin', 's3cret', '192.0.2.50')).statusCode).toBe(200)

    for (let i = 0; i < 4; i++)
      expect((await login(`user${i}`, 'guess', '198.51.100.200')).statusCode).toBe(401)
    const sprayed = await login('user9', 'guess', '198.51.100.200')
    expect(sprayed.statusCode).toBe(429)
    expect(sprayed.json().error.retry_after).toBeLessThanOrEqual(30)
  })
})

describe('LoginThrottle', () => {
  it('begin() reserves, succeed() takes the reservation back, settling twice does nothing', () => {
    const clock = new FakeClock()
    const throttle = new LoginThrottle(clock, { freeAttempts: 1, baseDelay: 5 })
    const first = throttle.begin('Admin', '192.0.2.1')
    expect(first.allowed).toBe(true)
    const second = throttle.begin('admin', '192.0.2.1')
    expect(second).toEqual({ allowed: false, retryAfter: 5 })
    if (!first.allowed) throw new Error('unreachable')
    first.succeed()
    first.fail()
    expect(throttle.begin('admin', '192.0.2.1').allowed).toBe(true)
  })

  it('rejects bad options', () => {
    expect(() => new LoginThrottle(new FakeClock(), { maxSharedDelay: -1 })).toThrow(
      /maxSharedDelay/,
    )
  })
})
