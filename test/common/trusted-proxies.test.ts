import { describe, expect, it } from 'vitest'
import { TrustedProxies } from '../../src/common/trusted-proxies.js'

describe('TrustedProxies', () => {
  const proxies = new TrustedProxies()

  it('takes the rightmost address that is not a trusted proxy, not the first entry', () => {
    // A client behind nginx sends its own X-Forwarded-For; nginx appends the real peer.
    expect(proxies.clientAddress('10.0.0.5', { 'x-forwarded-for': '127.0.0.1, 203.0.113.9' })).toBe(
      '203.0.113.9',
    )
    expect(
      proxies.clientAddress('10.0.0.5', {
        'x-forwarded-for': '198.51.100.7, 203.0.113.9, 10.0.0.9',
      }),
    ).toBe('203.0.113.9')
  })

  it('takes the leftmost entry only when every hop is trusted', () => {
    expect(proxies.clientAddress('10.0.0.5', { 'x-forwarded-for': '192.168.1.2, 10.0.0.9' })).toBe(
      '192.168.1.2',
    )
  })

  it('ignores forwarding headers from a peer that is not a trusted proxy', () => {
    expect(proxies.clientAddress('203.0.113.50', { 'x-forwarded-for': '127.0.0.1' })).toBe(
      '203.0.113.50',
    )
    expect(proxies.clientAddress('203.0.113.50', { 'x-real-ip': '127.0.0.1' })).toBe('203.0.113.50')
  })

  it('uses X-Real-IP from a trusted peer when there is no X-Forwarded-For', () => {
    expect(proxies.clientAddress('127.0.0.1', { 'x-real-ip': ' 203.0.113.4 ' })).toBe('203.0.113.4')
    expect(proxies.clientAddress('127.0.0.1', { 'x-real-ip': 'not-an-ip' })).toBe('127.0.0.1')
  })

  it('joins repeated X-Forwarded-For headers and falls back to the peer for garbage', () => {
    expect(
      proxies.clientAddress('10.0.0.5', { 'x-forwarded-for': ['198.51.100.1', '203.0.113.9'] }),
    ).toBe('203.0.113.9')
    expect(proxies.clientAddress('10.0.0.5', { 'x-forwarded-for': 'garbage' })).toBe('10.0.0.5')
  })

  it('answers unknown without a peer and matches IPv4-mapped IPv6 peers', () => {
    expect(proxies.clientAddress(undefined, {})).toBe('unknown')
    expect(proxies.clientAddress('::ffff:10.0.0.5', { 'x-forwarded-for': '203.0.113.9' })).toBe(
      '203.0.113.9',
    )
  })

  it('honours a custom list and nothing else', () => {
    const only = new TrustedProxies(['203.0.113.0/24'])
    expect(only.clientAddress('10.0.0.5', { 'x-forwarded-for': '198.51.100.1' })).toBe('10.0.0.5')
    expect(only.clientAddress('203.0.113.1', { 'x-forwarded-for': '198.51.100.1' })).toBe(
      '198.51.100.1',
    )
    expect(new TrustedProxies([]).clientAddress('127.0.0.1', { 'x-real-ip': '1.2.3.4' })).toBe(
      '127.0.0.1',
    )
  })

  it('reads X-Forwarded-Proto only from a trusted peer', () => {
    expect(proxies.isSecure('10.0.0.5', { 'x-forwarded-proto': 'https' }, false)).toBe(true)
    expect(proxies.isSecure('10.0.0.5', { 'x-forwarded-proto': 'http, https' }, false)).toBe(true)
    expect(proxies.isSecure('203.0.113.5', { 'x-forwarded-proto': 'https' }, false)).toBe(false)
    expect(proxies.isSecure('203.0.113.5', {}, true)).toBe(true)
    expect(proxies.isSecure('10.0.0.5', {}, false)).toBe(false)
  })

  it('rejects entries that are not addresses or ranges, with the error the caller chooses', () => {
    for (const bad of ['10.0.0.0/8/1', 'localhost', '10.0.0.0/abc', '', '300.1.1.1']) {
      expect(() => new TrustedProxies([bad])).toThrow(/Invalid trustedProxies entry/)
    }
    class MyError extends Error {}
    expect(() => new TrustedProxies(['nope'], (m) => new MyError(m))).toThrow(MyError)
    expect(() => new TrustedProxies(['10.0.0.0/33'])).toThrow(/Invalid trustedProxies entry/)
  })
})
