/**
 * The client address of the `ip` key, exempt addresses and IPv6 buckets: the rightmost
 * `X-Forwarded-For` entry that is not a trusted proxy (never the first entry, which the client
 * writes), Fastify's own `request.ip` when the app sets `trustProxy`, and IPv6 clients counted
 * per /64 by default (`ipv6Prefix`).
 */
import Fastify from 'fastify'
import { describe, expect, it } from 'vitest'
import { createEngine } from '../../src/index.js'
import { rateLimit, switchyard } from '../../src/fastify/index.js'
import { ClientIpResolver, ipBucketAddress } from '../../src/rate-limit/client-ip.js'
import { limitedApp } from './helpers.js'

const via = (peer: string, xff?: string) => ({
  url: '/x',
  remoteAddress: peer,
  ...(xff === undefined ? {} : { headers: { 'x-forwarded-for': xff } }),
})

describe('X-Forwarded-For behind a trusted proxy', () => {
  it('counts the rightmost untrusted entry, whatever the client put first', async () => {
    const { app } = await limitedApp([{ path: '/x', hooks: [rateLimit({ limit: '1/minute' })] }])
    expect((await app.inject(via('10.0.0.5', '127.0.0.1, 203.0.113.9'))).statusCode).toBe(200)
    expect((await app.inject(via('10.0.0.5', '198.51.100.77, 203.0.113.9'))).statusCode).toBe(429)
    expect((await app.inject(via('10.0.0.5', '203.0.113.10'))).statusCode).toBe(200)
    await app.close()
  })

  it('exempts by the resolved address only', async () => {
    const { app } = await limitedApp([
      { path: '/x', hooks: [rateLimit({ limit: '1/minute', exemptIps: ['127.0.0.1'] })] },
    ])
    expect((await app.inject(via('10.0.0.5', '127.0.0.1, 203.0.113.9'))).statusCode).toBe(200)
    expect((await app.inject(via('10.0.0.5', '127.0.0.1, 203.0.113.9'))).statusCode).toBe(429)
    expect((await app.inject(via('127.0.0.1'))).statusCode).toBe(200)
    expect((await app.inject(via('127.0.0.1'))).statusCode).toBe(200)
    await app.close()
  })

  it('resolves with the proxy rule, falling back to X-Real-IP and the peer', () => {
    const resolver = new ClientIpResolver(['10.0.0.0/8'])
    const view = (ip: string, headers: Record<string, string> = {}) => ({
      method: 'GET',
      url: '/',
      ip,
      headers,
    })
    expect(resolver.resolve(view('10.0.0.5', { 'x-forwarded-for': '1.1.1.1, 10.0.0.9' }))).toBe(
      '1.1.1.1',
    )
    expect(resolver.resolve(view('10.0.0.5', { 'x-forwarded-for': '1.1.1.1, 2.2.2.2' }))).toBe(
      '2.2.2.2',
    )
    expect(resolver.resolve(view('203.0.113.1', { 'x-forwarded-for': '1.1.1.1' }))).toBe(
      '203.0.113.1',
    )
    expect(resolver.resolve(view('10.0.0.5', { 'x-real-ip': '192.0.2.4' }))).toBe('192.0.2.4')
  })

  it("uses Fastify's request.ip when the app sets trustProxy", async () => {
    const engine = createEngine({ store: 'memory', env: 'prod' })
    const app = Fastify({ trustProxy: '127.0.0.1' })
    await app.register(switchyard, { engine })
    app.get('/x', { onRequest: rateLimit({ limit: '1/minute' }) }, () => ({ ok: true }))
    // Fastify trusts only loopback: the client is 10.9.9.9 (not trusted by Fastify's rule),
    // whatever precedes it; switchyard must not walk the header again with its own list.
    expect((await app.inject(via('127.0.0.1', '203.0.113.7, 10.9.9.9'))).statusCode).toBe(200)
    expect((await app.inject(via('127.0.0.1', '203.0.113.8, 10.9.9.9'))).statusCode).toBe(429)
    await app.close()
  })
})

describe('IPv6 buckets', () => {
  it('counts a /64 as one client by default', async () => {
    const { app } = await limitedApp([{ path: '/x', hooks: [rateLimit({ limit: '1/minute' })] }])
    expect((await app.inject(via('2001:db8:1:2::1'))).statusCode).toBe(200)
    expect((await app.inject(via('2001:db8:1:2:ffff:ffff:ffff:9'))).statusCode).toBe(429)
    expect((await app.inject(via('2001:db8:1:3::1'))).statusCode).toBe(200)
    expect((await app.inject(via('192.0.2.1'))).statusCode).toBe(200)
    expect((await app.inject(via('::ffff:192.0.2.2'))).statusCode).toBe(200)
    expect((await app.inject(via('192.0.2.2'))).statusCode).toBe(429)
    await app.close()
  })

  it('ipv6Prefix changes the bucket size', async () => {
    const { app } = await limitedApp([{ path: '/x', hooks: [rateLimit({ limit: '1/minute' })] }], {
      rateLimit: { ipv6Prefix: 128 },
    })
    expect((await app.inject(via('2001:db8:1:2::1'))).statusCode).toBe(200)
    expect((await app.inject(via('2001:db8:1:2::2'))).statusCode).toBe(200)
    expect((await app.inject(via('2001:db8:1:2::2'))).statusCode).toBe(429)
    await app.close()
  })

  it.each([
    ['2001:db8:1:2:3:4:5:6', 64, '2001:db8:1:2::/64'],
    ['2001:DB8::1', 32, '2001:db8::/32'],
    ['fe80::1%eth0', 64, 'fe80::/64'],
    ['::ffff:10.1.2.3', 64, '10.1.2.3'],
    ['2001:db8::1', 128, '2001:db8::1'],
    ['2001:db8:ffff:ff80::', 57, '2001:db8:ffff:ff80::/57'],
    ['192.0.2.1', 64, '192.0.2.1'],
    ['unknown', 64, 'unknown'],
  ])('bucket of %s with prefix %i is %s', (address, prefix, bucket) => {
    expect(ipBucketAddress(address, prefix)).toBe(bucket)
  })

  it('rejects an ipv6Prefix outside 1..128', () => {
    expect(() => new ClientIpResolver(undefined, 0)).toThrow(/ipv6Prefix/)
    expect(() => new ClientIpResolver(undefined, 129)).toThrow(/ipv6Prefix/)
  })
})
