/**
 * Login throttling on the task admin's login form, by the same rule as the admin app: a correct
 * password from a client network that has not been failing logs in at once whatever others do
 * (failures scattered over many addresses, a flood from one IPv6 /64), while the failing
 * network is throttled — the whole /64, addresses it has not used yet included.
 */
import type { FastifyInstance } from 'fastify'
import { afterEach, describe, expect, it } from 'vitest'
import { adminApp, loginRequest } from './helpers.js'

const apps: FastifyInstance[] = []
afterEach(async () => {
  await Promise.all(apps.splice(0).map((app) => app.close()))
})

async function throttled() {
  let now = Date.parse('2026-11-21T12:00:00Z')
  const { app } = await adminApp({ auth: ['admin', 's3cret'], clock: { now: () => now } })
  apps.push(app)
  // One form serves every failed attempt: a failure leaves its pre-login cookie in place.
  const wrong = await loginRequest(app, 'admin', 'guess')
  const fail = (remoteAddress: string) => app.inject({ ...wrong, remoteAddress })
  const succeed = async (remoteAddress: string) =>
    app.inject({ ...(await loginRequest(app, 'admin', 's3cret')), remoteAddress })
  return { app, fail, succeed, advance: (ms: number) => (now += ms) }
}

describe('task admin login throttling', () => {
  it('26 failed logins from scattered addresses do not lock the username: the right password from a new address logs in at once', async () => {
    const { fail, succeed } = await throttled()
    for (let i = 1; i <= 26; i++) expect((await fail(`198.51.100.${i}`)).statusCode).toBe(401)
    for (const peer of ['192.0.2.50', '192.0.2.50', '2001:db8:5d:1::10'])
      expect((await succeed(peer)).statusCode, peer).toBe(303)
    // a network that took part in the guessing is slowed on that username
    const again = await fail('198.51.100.1')
    expect(again.statusCode).toBe(429)
    expect(Number(again.headers['retry-after'])).toBeGreaterThan(0)
  })

  it('a flood of failures from one IPv6 /64 keeps no right password out, and throttles the whole /64', async () => {
    const { fail, succeed, advance } = await throttled()
    const codes = new Map<number, number>()
    let right = 0
    // ~85 requests a second for 10 s, each from a different address of 2001:db8:bad:1::/64,
    // with a right password from another network about every second
    for (let i = 0; i < 850; i++) {
      advance(12)
      const flood = await fail(`2001:db8:bad:1::${(i + 1).toString(16)}`)
      codes.set(flood.statusCode, (codes.get(flood.statusCode) ?? 0) + 1)
      if (i % 77 === 76) {
        const ok = await succeed('2001:db8:600d:1::7')
        expect(ok.statusCode, `right password after ${i + 1} flood requests`).toBe(303)
        right += 1
      }
    }
    expect(right).toBe(11)
    expect([...codes.keys()].sort()).toEqual([401, 429])
    expect(codes.get(401)).toBeLessThan(12)
    // an address of the /64 that has not been used yet is throttled, right password or not
    const fresh = await succeed('2001:db8:bad:1:ffff:ffff:ffff:1')
    expect(fresh.statusCode).toBe(429)
    expect(Number(fresh.headers['retry-after'])).toBeGreaterThan(0)
    expect(fresh.body).toContain('Too many failed logins')
  })
})
