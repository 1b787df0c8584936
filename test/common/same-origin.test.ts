/**
 * The `allowedHosts` check of both admin mounts: host names compared without port and case,
 * IPv6 literals with or without brackets, `*.name` for subdomains, the loopback names by
 * default without credentials, and a bad entry refused at mount.
 */
import { describe, expect, it } from 'vitest'
import { AllowedHosts, LOOPBACK_HOSTS } from '../../src/common/same-origin.js'

const invalid = (message: string) => new RangeError(message)

describe('AllowedHosts', () => {
  it('defaults to the loopback names without credentials, and to no check with them', () => {
    const open = AllowedHosts.resolve(undefined, true, invalid)
    expect(open).not.toBeNull()
    for (const host of [
      'localhost',
      'LOCALHOST:8000',
      'localhost.',
      '127.0.0.1:9000',
      '[::1]',
      '[0:0:0:0:0:0:0:1]:80',
      'app.localhost:3000',
      '127.1',
    ]) {
      expect(open!.allows(host), host).toBe(true)
    }
    for (const host of [
      'evil.example',
      'localhost.evil.example',
      '127.0.0.2',
      '[::2]',
      'x@localhost',
      'localhost/x',
      'localhost:x',
      '',
      undefined,
    ]) {
      expect(open!.allows(host), String(host)).toBe(false)
    }
    expect(AllowedHosts.resolve(undefined, false, invalid)).toBeNull()
    expect(AllowedHosts.resolve(false, true, invalid)).toBeNull()
    expect(LOOPBACK_HOSTS).toContain('::1')
  })

  it('matches listed names, IPv6 literals in either form, and wildcard subdomains', () => {
    const hosts = new AllowedHosts(
      ['Admin.Example.com', '::1', '[2001:db8::1]', '*.corp.example'],
      invalid,
    )
    for (const host of [
      'admin.example.com:443',
      'ADMIN.EXAMPLE.COM',
      '[::1]:9000',
      '[2001:DB8:0::1]',
      'a.b.corp.example',
    ]) {
      expect(hosts.allows(host), host).toBe(true)
    }
    for (const host of ['example.com', 'corp.example', 'xcorp.example', 'localhost']) {
      expect(hosts.allows(host), host).toBe(false)
    }
  })

  it('refuses entries that are not host names', () => {
    for (const bad of [
      ['a.example:80'],
      ['*'],
      ['*.'],
      ['*.127.0.0.1'],
      [''],
      ['http://a.example'],
      ['a b'],
      ['a/b'],
      [1],
      [],
      'a.example',
    ]) {
      expect(() => new AllowedHosts(bad as never, invalid), JSON.stringify(bad)).toThrow(
        /allowedHosts/,
      )
    }
  })
})
