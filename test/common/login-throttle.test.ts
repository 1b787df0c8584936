/**
 * The login throttle on a fake clock: a correct password from a network that has not been
 * failing goes through at once whatever others do; a failing network is slowed on the pair
 * (exponentially, capped) and network-wide; IPv6 counts per /64, IPv4 per address (mapped
 * addresses as IPv4); tables stay bounded and drop keys that slow nobody first; attempts are
 * reserved before the password is checked; a success clears the pair.
 */
import { describe, expect, it } from 'vitest'
import {
  LoginThrottle,
  type LoginAttempt,
  type LoginThrottleOptions,
  type LoginWait,
} from '../../src/common/login-throttle.js'
import { FakeClock } from '../helpers/clock.js'

function throttleWith(options: LoginThrottleOptions = {}) {
  const clock = new FakeClock()
  const throttle = new LoginThrottle(clock, options)
  /** One attempt settled at once: the wait in seconds, or 0 when it was allowed. */
  const fail = (username: string, address: string): number => {
    const attempt = throttle.begin(username, address)
    if (!attempt.allowed) return attempt.retryAfter
    attempt.fail()
    return 0
  }
  const succeed = (username: string, address: string): number => {
    const attempt = throttle.begin(username, address)
    if (!attempt.allowed) return attempt.retryAfter
    attempt.succeed()
    return 0
  }
  return { clock, throttle, fail, succeed }
}

function allowed(attempt: LoginWait | LoginAttempt): LoginAttempt {
  if (!attempt.allowed)
    throw new Error(`expected an allowed attempt, got a wait of ${attempt.retryAfter} s`)
  return attempt
}

describe('LoginThrottle: the pair key', () => {
  it('allows freeAttempts failures, then doubles the delay after each failure up to maxDelay', () => {
    const { clock, fail } = throttleWith({ freeAttempts: 3, baseDelay: 2, maxDelay: 10 })
    const ip = '198.51.100.7'
    for (let i = 0; i < 3; i++) expect(fail('admin', ip)).toBe(0)
    expect(fail('admin', ip)).toBe(2)
    clock.advance(1_000)
    expect(fail('admin', ip)).toBe(1) // counted from the last failure
    const waits: number[] = []
    for (let i = 0; i < 4; i++) {
      clock.advance(60_000)
      expect(fail('admin', ip)).toBe(0)
      waits.push(fail('admin', ip))
    }
    expect(waits).toEqual([4, 8, 10, 10])
    // the same username from another network, another username from this one: not this pair
    expect(fail('admin', '198.51.100.8')).toBe(0)
    expect(fail('ops', ip)).toBe(0)
  })

  it('lowercases and trims the username', () => {
    const { fail } = throttleWith({ freeAttempts: 1, baseDelay: 5 })
    expect(fail('Admin ', '192.0.2.1')).toBe(0)
    expect(fail('admin', '192.0.2.1')).toBe(5)
  })

  it('starts a key afresh after resetAfter seconds without a failure', () => {
    const { clock, fail } = throttleWith({ freeAttempts: 1, baseDelay: 5, resetAfter: 100 })
    expect(fail('admin', '192.0.2.1')).toBe(0)
    clock.advance(10_000)
    expect(fail('admin', '192.0.2.1')).toBe(0)
    clock.advance(101_000)
    expect(fail('admin', '192.0.2.1')).toBe(0)
    expect(fail('admin', '192.0.2.1')).toBe(5)
  })
})

describe('LoginThrottle: the network key', () => {
  it('slows one network trying many usernames, at most maxNetworkDelay, and only that network', () => {
    const { clock, fail, succeed } = throttleWith({
      networkFreeAttempts: 4,
      baseDelay: 8,
      maxNetworkDelay: 30,
    })
    for (let i = 0; i < 4; i++) expect(fail(`user${i}`, '203.0.113.9')).toBe(0)
    expect(fail('user9', '203.0.113.9')).toBe(8)
    // a right password from that network waits too: the network is the client
    expect(succeed('admin', '203.0.113.9')).toBe(8)
    clock.advance(8_000)
    expect(fail('user10', '203.0.113.9')).toBe(0)
    expect(fail('user11', '203.0.113.9')).toBe(16)
    clock.advance(16_000)
    expect(fail('user12', '203.0.113.9')).toBe(0)
    expect(fail('user13', '203.0.113.9')).toBe(30)
    // another network is not slowed by it
    expect(succeed('admin', '203.0.113.10')).toBe(0)
  })
})

describe('LoginThrottle: client networks', () => {
  it('groups IPv6 addresses by /64 and IPv4 addresses one by one; IPv4-mapped counts as IPv4', () => {
    const { fail } = throttleWith({ freeAttempts: 2, baseDelay: 7 })
    expect(fail('admin', '2001:db8:1:2::1')).toBe(0)
    expect(fail('admin', '2001:db8:1:2:ffff:ffff:ffff:fffe')).toBe(0)
    // an address of that /64 never used before waits too
    expect(fail('admin', '2001:db8:1:2:abcd::99')).toBe(7)
    expect(fail('admin', '2001:DB8:1:2::42%eth0')).toBe(7)
    // the neighbouring /64 is another client
    expect(fail('admin', '2001:db8:1:3::1')).toBe(0)

    expect(fail('admin', '192.0.2.1')).toBe(0)
    expect(fail('admin', '::ffff:192.0.2.1')).toBe(0)
    expect(fail('admin', '192.0.2.1')).toBe(7)
    expect(fail('admin', '::ffff:c000:201')).toBe(7)
    // the next IPv4 address is another client
    expect(fail('admin', '192.0.2.2')).toBe(0)
  })
})

describe('LoginThrottle: the username key', () => {
  it('never slows a network that has not failed, however many others fail on the username', () => {
    const { fail, succeed } = throttleWith({ usernameFreeAttempts: 3, maxUsernameDelay: 60 })
    for (let i = 0; i < 100; i++) expect(fail('admin', `198.51.100.${i}`)).toBe(0)
    for (let i = 0; i < 100; i++) expect(fail('admin', `2001:db8:${i}::1`)).toBe(0)
    expect(succeed('admin', '192.0.2.50')).toBe(0)
    expect(succeed('admin', '192.0.2.50')).toBe(0)
    expect(succeed('admin', '2001:db8:ffff::1')).toBe(0)
  })

  it('slows a network that has failed itself, by at most maxUsernameDelay', () => {
    const { clock, fail, succeed } = throttleWith({
      usernameFreeAttempts: 3,
      baseDelay: 4,
      maxUsernameDelay: 10,
    })
    for (let i = 0; i < 3; i++) expect(fail('admin', `198.51.100.${i}`)).toBe(0)
    // first attempt of a fresh network: allowed (and a failure); its second waits
    expect(fail('admin', '198.51.100.50')).toBe(0)
    expect(fail('admin', '198.51.100.50')).toBe(8)
    for (let i = 10; i < 20; i++) fail('admin', `198.51.100.${i}`)
    expect(fail('admin', '198.51.100.50')).toBe(10)
    // a network that failed on another username is failing too, and stays so after a success
    expect(fail('ops', '192.0.2.9')).toBe(0)
    expect(succeed('admin', '192.0.2.9')).toBe(10)
    clock.advance(10_000)
    expect(succeed('admin', '192.0.2.9')).toBe(0)
  })
})

describe('LoginThrottle: reservations', () => {
  it('counts concurrent attempts before any password is checked', () => {
    const { throttle } = throttleWith({ freeAttempts: 3, baseDelay: 10 })
    const attempts = Array.from({ length: 10 }, () => throttle.begin('admin', '192.0.2.1'))
    expect(attempts.filter((attempt) => attempt.allowed)).toHaveLength(3)
    expect(attempts.filter((attempt) => !attempt.allowed)).toHaveLength(7)
  })

  it('a success clears the pair; settling twice does nothing', () => {
    const { throttle, fail } = throttleWith({ freeAttempts: 2, baseDelay: 5 })
    expect(fail('admin', '192.0.2.1')).toBe(0)
    const right = allowed(throttle.begin('admin', '192.0.2.1'))
    right.succeed()
    right.fail()
    right.succeed()
    // the pair starts afresh: two failures free again
    expect(fail('admin', '192.0.2.1')).toBe(0)
    expect(fail('admin', '192.0.2.1')).toBe(0)
    expect(fail('admin', '192.0.2.1')).toBe(5)
  })

  it("a success takes back only its own reservation of the network and the username, and their last failure's time", () => {
    const { clock, throttle, fail } = throttleWith({
      freeAttempts: 100,
      networkFreeAttempts: 2,
      baseDelay: 5,
    })
    expect(fail('a', '192.0.2.1')).toBe(0)
    expect(fail('b', '192.0.2.1')).toBe(0)
    expect(fail('c', '192.0.2.1')).toBe(5)
    clock.advance(5_000)
    // a success after the wait: the network's two failures stay, and it need not wait again
    allowed(throttle.begin('admin', '192.0.2.1')).succeed()
    const next = allowed(throttle.begin('admin', '192.0.2.1'))
    // while this one is reserved, the network has three failures: others wait 10 s
    expect(fail('d', '192.0.2.1')).toBe(10)
    next.succeed()
    expect(fail('d', '192.0.2.1')).toBe(0)
    expect(fail('e', '192.0.2.1')).toBe(10)
  })
})

describe('LoginThrottle: bounded tables', () => {
  it('keeps at most maxEntries keys per table, dropping keys that slow nobody first', () => {
    const { throttle, fail } = throttleWith({
      freeAttempts: 2,
      networkFreeAttempts: 2,
      usernameFreeAttempts: 1000,
      baseDelay: 50,
      maxEntries: 4,
    })
    // a guesser is throttled on its pair and its network
    expect(fail('admin', '203.0.113.1')).toBe(0)
    expect(fail('admin', '203.0.113.1')).toBe(0)
    expect(fail('admin', '203.0.113.1')).toBe(50)
    // it rotates through many fresh networks, one failure each: the tables stay bounded
    for (let i = 0; i < 50; i++) {
      expect(fail('admin', `2001:db8:${i.toString(16)}::1`)).toBe(0)
      const size = throttle.size()
      expect(Math.max(size.pairs, size.networks, size.usernames)).toBeLessThanOrEqual(4)
    }
    // ...which pushed out only keys within their free failures: the throttled ones stay
    expect(fail('admin', '203.0.113.1')).toBe(50)
    // the oldest unthrottled keys went first: the first rotated network starts afresh...
    expect(fail('admin', '2001:db8:0::1')).toBe(0)
    expect(fail('admin', '2001:db8:0::1')).toBe(0)
    expect(fail('admin', '2001:db8:0::1')).toBe(50)
    // ...while the most recent one still has its failure counted
    expect(fail('admin', '2001:db8:31::1')).toBe(0)
    expect(fail('admin', '2001:db8:31::1')).toBe(50)
  })

  it('drops the least recently failed throttled key when every key is throttled', () => {
    const { clock, fail } = throttleWith({
      freeAttempts: 1,
      networkFreeAttempts: 100,
      usernameFreeAttempts: 100,
      baseDelay: 50,
      maxEntries: 2,
    })
    expect(fail('a', '192.0.2.1')).toBe(0)
    clock.advance(1_000)
    expect(fail('b', '192.0.2.1')).toBe(0)
    clock.advance(1_000)
    expect(fail('c', '192.0.2.1')).toBe(0)
    expect(fail('a', '192.0.2.1')).toBe(0) // dropped: the least recently failed
    expect(fail('c', '192.0.2.1')).toBe(50)
  })
})

describe('LoginThrottle: options', () => {
  it('rejects bad values, naming the option', () => {
    const clock = new FakeClock()
    expect(() => new LoginThrottle(clock, { maxDelay: -1 })).toThrow(/loginThrottle\.maxDelay/)
    expect(() => new LoginThrottle(clock, { networkFreeAttempts: 1.5 })).toThrow(
      /loginThrottle\.networkFreeAttempts must be a non-negative integer/,
    )
    expect(() => new LoginThrottle(clock, { maxUsernameDelay: Number.NaN })).toThrow(
      /maxUsernameDelay/,
    )
    expect(() => new LoginThrottle(clock, { maxSharedDelay: -1 })).toThrow(/maxSharedDelay/)
  })

  it('reads the former names sharedFreeAttempts and maxSharedDelay as both network and username settings; the new names win', () => {
    const { fail } = throttleWith({
      freeAttempts: 100,
      sharedFreeAttempts: 2,
      maxSharedDelay: 3,
      baseDelay: 10,
    })
    expect(fail('a', '192.0.2.1')).toBe(0)
    expect(fail('b', '192.0.2.1')).toBe(0)
    expect(fail('c', '192.0.2.1')).toBe(3) // network key: 2 free, capped at 3 s
    const { fail: failNew } = throttleWith({
      freeAttempts: 100,
      sharedFreeAttempts: 2,
      networkFreeAttempts: 3,
    })
    for (const user of ['a', 'b', 'c']) expect(failNew(user, '192.0.2.1')).toBe(0)
    expect(failNew('d', '192.0.2.1')).toBe(1)
  })
})
