import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import type { CounterRule } from '../../src/rate-limit/algorithms.js'
import { memoryCounters } from '../../src/rate-limit/counters/memory.js'
import { snapshotCounters } from '../../src/rate-limit/counters/file.js'
import { rateLimit } from '../../src/fastify/index.js'
import { limitedApp, statuses } from './helpers.js'

const rule: CounterRule = { algorithm: 'fixed_window', count: 2, periodMs: 60_000, burst: 0 }
const T0 = 1_800_000_000_000
const dirs: string[] = []
const tempFile = () => {
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-rl-'))
  dirs.push(dir)
  return join(dir, 'counters.json')
}
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})

describe('memory counters', () => {
  it('forget expired entries and stay within maxEntries', () => {
    const counters = memoryCounters({ maxEntries: 100, sweepInterval: 0 })
    for (let i = 0; i < 250; i++)
      counters.consume([{ scope: 'global', bucket: `ip:${i}`, rule }], T0)
    expect(counters.entryCount).toBeLessThanOrEqual(100)
    counters.sweep(T0 + 60_000)
    expect(counters.entryCount).toBe(0)
  })

  it('an expired entry counts as fresh', () => {
    const counters = memoryCounters({ sweepInterval: 0 })
    const check = [{ scope: 'global', bucket: 'ip:a', rule: { ...rule, count: 1 } }]
    expect(counters.consume(check, T0)[0]?.allowed).toBe(true)
    expect(counters.consume(check, T0 + 1)[0]?.allowed).toBe(false)
    expect(counters.consume(check, T0 + 60_000)[0]?.allowed).toBe(true)
  })
})

describe('memory counters: takeToken', () => {
  it('answers what consume answers for a token bucket, request after request', () => {
    const bucketRule: CounterRule = {
      algorithm: 'token_bucket',
      count: 3,
      periodMs: 1000,
      burst: 2,
    }
    const inPlace = memoryCounters({ sweepInterval: 0 })
    const stepped = memoryCounters({ sweepInterval: 0 })
    // A burst that runs dry, refills at fractions of a token, then an idle gap past expiry.
    const times = [0, 0, 0, 0, 0, 0, 0, 1, 150, 333, 334, 700, 1000, 1001, 1002, 5000, 5000]
    const waits = times.map((at) => inPlace.takeToken('ofrep', 'ek_1', bucketRule, T0 + at))
    const expected = times.map((at) => {
      const [outcome] = stepped.consume(
        [{ scope: 'ofrep', bucket: 'ek_1', rule: bucketRule }],
        T0 + at,
      )
      return outcome?.retryAfterMs
    })
    expect(waits).toEqual(expected)
    expect(waits.filter((wait) => wait > 0).length).toBeGreaterThan(0)
    expect(waits.at(-1)).toBe(0)
  })
})

describe('memory counters: hit', () => {
  const algorithms = ['fixed_window', 'sliding_window', 'moving_window', 'token_bucket'] as const
  it.each(algorithms)(
    '%s: answers what consume answers, request after request, with nothing counted when refused',
    (algorithm) => {
      const hitRule: CounterRule = { algorithm, count: 3, periodMs: 1000, burst: 1 }
      const inPlace = memoryCounters({ sweepInterval: 0 })
      const stepped = memoryCounters({ sweepInterval: 0 })
      // A burst past the limit, the next window (or a partial refill), a window boundary to the
      // millisecond, then an idle gap past expiry; the same start time for both stores.
      const times = [0, 0, 0, 0, 0, 0, 1, 333, 999, 1000, 1000, 1001, 1500, 2600, 2600, 9000]
      const reading = { remaining: -1, resetAt: -1 }
      const hits = times.map((at) => {
        const allowed = inPlace.hit('route:x', 'ip:a', hitRule, T0 + at, reading)
        return allowed ? { allowed, remaining: reading.remaining, resetAt: reading.resetAt } : {}
      })
      const expected = times.map((at) => {
        const [outcome] = stepped.consume(
          [{ scope: 'route:x', bucket: 'ip:a', rule: hitRule }],
          T0 + at,
        )
        return outcome?.allowed === true
          ? { allowed: true, remaining: outcome.remaining, resetAt: outcome.resetAt }
          : {}
      })
      expect(hits).toEqual(expected)
      expect(hits.filter((hit) => hit.allowed !== true).length).toBeGreaterThan(0)
      expect(hits.at(-1)).toMatchObject({ allowed: true, remaining: 3 })
    },
  )

  it('a counter of another algorithm (the limit was changed) starts afresh, as in consume', () => {
    const counters = memoryCounters({ sweepInterval: 0 })
    const fixed: CounterRule = { algorithm: 'fixed_window', count: 1, periodMs: 60_000, burst: 0 }
    const reading = { remaining: -1, resetAt: -1 }
    expect(counters.hit('global', 'ip:a', fixed, T0, reading)).toBe(true)
    expect(counters.hit('global', 'ip:a', fixed, T0 + 1, reading)).toBe(false)
    const bucket: CounterRule = { ...fixed, algorithm: 'token_bucket', count: 2 }
    expect(counters.hit('global', 'ip:a', bucket, T0 + 2, reading)).toBe(true)
    expect(reading.remaining).toBe(1)
  })
})

describe('file-snapshot counters', () => {
  it('restore the counters of the previous process at startup', async () => {
    const path = tempFile()
    const now = () => T0 + 1000
    const first = snapshotCounters({ path, interval: 0, sweepInterval: 0, now })
    const check = [{ scope: 'route:default:GET:/x', bucket: 'ip:a', rule }]
    first.consume(check, T0 + 1000)
    await first.snapshot()
    first.consume(check, T0 + 1000)
    await first.close() // final snapshot holds both requests
    const saved = JSON.parse(readFileSync(path, 'utf8')) as { counters: unknown[] }
    expect(saved.counters).toHaveLength(1)
    const second = snapshotCounters({ path, interval: 0, sweepInterval: 0, now })
    expect(second.consume(check, T0 + 2000)[0]?.allowed).toBe(false)
    await second.close()
    // once the window has passed, the restored entry is dropped
    const third = snapshotCounters({ path, interval: 0, sweepInterval: 0, now: () => T0 + 60_000 })
    expect(third.entryCount).toBe(0)
    await third.close()
  })

  it('a corrupt snapshot is reported and ignored', async () => {
    const path = tempFile()
    writeFileSync(path, '{not json')
    const errors: unknown[] = []
    const counters = snapshotCounters({
      path,
      interval: 0,
      sweepInterval: 0,
      onError: (e) => errors.push(e),
    })
    expect(errors).toHaveLength(1)
    expect(counters.entryCount).toBe(0)
    writeFileSync(path, JSON.stringify({ version: 9, counters: [] }))
    const other = snapshotCounters({
      path,
      interval: 0,
      sweepInterval: 0,
      onError: (e) => errors.push(e),
    })
    expect(errors).toHaveLength(2)
    await counters.close()
    await other.close()
  })

  it('a restarted app keeps its quota through the snapshot', async () => {
    const path = tempFile()
    const build = async () => {
      const counters = snapshotCounters({
        path,
        interval: 0,
        sweepInterval: 0,
        now: () => Date.parse('2026-11-21T12:00:00Z'), // the apps' fake clock
      })
      const built = await limitedApp([{ path: '/x', hooks: [rateLimit({ limit: '2/minute' })] }], {
        rateLimit: { counters },
      })
      return { ...built, counters }
    }
    const first = await build()
    expect(await statuses(first.app, 1)).toEqual([200])
    await first.counters.close()
    const second = await build()
    // the fake clock of both apps is the same instant: one request left
    expect(await statuses(second.app, 2)).toEqual([200, 429])
    await second.counters.close()
  })
})
