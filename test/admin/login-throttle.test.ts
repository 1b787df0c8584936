/**
 * Login throttling by username and by address: the address is the trusted-proxy rule's client
 * (so one proxy's traffic is not one client, and a client behind it cannot pick its address),
 * attempts are counted before the password is checked (concurrent guesses against a slow
 * authenticate are all counted), and a correct password from a network that has not been
 * failing logs in at once whatever others do. The throttle's own rules are tested on a fake
 * clock in test/common/login-throttle.test.ts.
 */
import { afterEach, describe, expect, it } from 'vitest'
import type { LoginThrottleOptions } from '../../src/common/login-throttle.js'
import type { AdminAppOptions } from '../../src/admin/index.js'
import { API, buildAdmin, closeLater, closeAdmins } from './helpers.js'

afterEach(closeAdmins)

const slowAuth = {
  authenticate: async (username: string, password: string) => {
    await new Promise((resolve) => setTimeout(resolve, 20))
    return username === 'admin' && password === 's3cret'
  },
}

const fastAuth = {
  authenticate: (username: string, password: string) =>
    username === 'admin' && password === 's3cret',
}

async function admin(
  loginThrottle: LoginThrottleOptions = {},
  auth: AdminAppOptions['auth'] = slowAuth,
) {
  const built = await buildAdmin({ auth, loginThrottle })
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

  it('26 failed logins for a username from scattered addresses do not lock it: the right password from a new address logs in at once', async () => {
    const { login } = await admin({}, fastAuth)
    for (let i = 1; i <= 26; i++)
      expect((await login('admin', `guess-${i}`, `198.51.100.${i}`)).statusCode).toBe(401)
    // an SDK app restarting (a network that has not failed) gets in at once, again and again
    for (const peer of ['192.0.2.50', '192.0.2.50', '2001:db8:5d:1::10'])
      expect((await login('admin', 's3cret', peer)).statusCode, peer).toBe(200)
    // a network that took part in the guessing is slowed on that username
    const again = await login('admin', 'guess-again', '198.51.100.1')
    expect(again.statusCode).toBe(429)
    expect(Number(again.headers['retry-after'])).toBeGreaterThan(0)
    expect(again.json().error.retry_after).toBeLessThanOrEqual(60)
  })

  it('a flood of failures from one IPv6 /64 through a trusted proxy keeps no right password out, and throttles the whole /64', async () => {
    const { login, clock } = await admin({}, fastAuth)
    const codes = new Map<number, number>()
    let right = 0
    // ~85 requests a second for 10 s, each from a different address of 2001:db8:bad:1::/64,
    // with a right password from another network about every second
    for (let i = 0; i < 850; i++) {
      clock!.advance(12)
      const flood = await login(
        'admin',
        `guess-${i}`,
        '10.0.0.1',
        `2001:db8:bad:1::${(i + 1).toString(16)}`,
      )
      codes.set(flood.statusCode, (codes.get(flood.statusCode) ?? 0) + 1)
      if (i % 77 === 76) {
        const ok = await login('admin', 's3cret', '10.0.0.1', '2001:db8:600d:1::7')
        expect(ok.statusCode, `right password after ${i + 1} flood requests`).toBe(200)
        right += 1
      }
    }
    expect(right).toBe(11)
    expect([...codes.keys()].sort()).toEqual([401, 429])
    expect(codes.get(401)).toBeLessThan(12)
    // an address of the /64 that has not been used yet is throttled too
    const fresh = await login('admin', 's3cret', '10.0.0.1', '2001:db8:bad:1:ffff:ffff:ffff:1')
    expect(fresh.statusCode).toBe(429)
    expect(Number(fresh.headers['retry-after'])).toBeGreaterThan(0)
    expect(fresh.json().error).toMatchObject({ code: 'TOO_MANY_LOGIN_ATTEMPTS' })
  })

  it('slows one network trying many usernames, and only that network', async () => {
    const { login } = await admin({ networkFreeAttempts: 4, maxNetworkDelay: 30 }, fastAuth)
    for (let i = 0; i < 4; i++)
      expect((await login(`user${i}`, 'guess', '198.51.100.200')).statusCode).toBe(401)
    const sprayed = await login('user9', 'guess', '198.51.100.200')
    expect(sprayed.statusCode).toBe(429)
    expect(sprayed.json().error.retry_after).toBeLessThanOrEqual(30)
    expect((await login('admin', 's3cret', '198.51.100.201')).statusCode).toBe(200)
  })
})
