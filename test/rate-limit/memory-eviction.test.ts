/**
 * Memory counters at capacity: eviction stays inside the scope that holds the most counters
 * (a flood of random keys on one route cannot reset another route's counters, such as a login
 * limit), recently used counters survive a flood of new ones in their own scope, and expired
 * counters are dropped as new ones arrive, without sweeping everything per insertion.
 */
import { describe, expect, it } from 'vitest'
import type { CounterRule } from '../../src/rate-limit/algorithms.js'
import { MemoryCounters } from '../../src/rate-limit/counters/memory.js'

const T0 = 1_800_000_000_000
const rule = (count: number, periodMs = 60_000): CounterRule => ({
  algorithm: 'fixed_window',
  count,
  periodMs,
  burst: 0,
})
const hit = (counters: MemoryCounters, scope: string, bucket: string, limit = 1, now = T0) =>
  counters.consume([{ scope, bucket, rule: rule(limit) }], now)[0]?.allowed

describe('memory counters at capacity', () => {
  it("a flood on one scope never evicts another scope's counters", () => {
    const counters = new MemoryCounters({ maxEntries: 100, sweepInterval: 0 })
    expect(hit(counters, 'route:default:POST:/login', 'ip:203.0.113.9')).toBe(true)
    expect(hit(counters, 'route:default:POST:/login', 'ip:203.0.113.9')).toBe(false)
    for (let i = 0; i < 5000; i++) hit(counters, 'route:default:GET:/search', `ip:10.0.${i}`, 1000)
    expect(counters.entryCount).toBeLessThanOrEqual(100)
    expect(hit(counters, 'route:default:POST:/login', 'ip:203.0.113.9')).toBe(false)
  })

  it('within the flooded scope, a counter in use survives', () => {
    const counters = new MemoryCounters({ maxEntries: 100, sweepInterval: 0 })
    for (let i = 0; i < 1000; i++) {
      hit(counters, 'global', `ip:flood-${i}`, 1000)
      // a client keeps using its counter (limit 10) while the flood goes on: it is never the
      // least recently used, so its count is never reset
      if (i % 50 === 0) hit(counters, 'global', 'ip:steady', 10)
    }
    expect(hit(counters, 'global', 'ip:steady', 10)).toBe(false)
  })

  it('drops expired counters as new ones arrive', () => {
    const counters = new MemoryCounters({ maxEntries: 1_000_000, sweepInterval: 0 })
    for (let i = 0; i < 1000; i++) hit(counters, 'global', `ip:old-${i}`, 5, T0)
    for (let i = 0; i < 1000; i++) hit(counters, 'global', `ip:new-${i}`, 5, T0 + 120_000)
    expect(counters.entryCount).toBeLessThan(1100)
  })
})
