import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  ALGORITHMS,
  type CounterOutcome,
  type CounterRule,
} from '../../src/rate-limit/algorithms.js'
import { memoryCounters } from '../../src/rate-limit/counters/memory.js'
import { postgresCounters } from '../../src/rate-limit/counters/postgres.js'
import type { CounterCheck } from '../../src/rate-limit/counters/types.js'
import { postgresStore } from '../../src/stores/postgres/store.js'
import type { PostgresHandle, Store } from '../../src/stores/types.js'
import {
  dropPrefixed,
  postgresTestsEnabled,
  TEST_PG_URL,
  testTablePrefix,
  withClient,
} from '../helpers/postgres.js'

const available = await postgresTestsEnabled('PostgreSQL rate-limit counter tests')
const tablePrefix = testTablePrefix('rlc')

const verdicts = (outcomes: readonly CounterOutcome[]): CounterOutcome[] =>
  outcomes.map(({ allowed, effective, remaining, resetAt, retryAfterMs }) => ({
    allowed,
    effective,
    remaining,
    resetAt,
    retryAfterMs,
  }))

describe.skipIf(!available)('PostgreSQL counters', () => {
  let store: Store
  let postgres: PostgresHandle
  beforeAll(async () => {
    store = postgresStore({ url: TEST_PG_URL, tablePrefix, onFault: () => undefined })
    await store.connect()
    if (store.backend.kind !== 'postgres') throw new Error('expected the postgres backend')
    postgres = store.backend.postgres
  })
  afterAll(async () => {
    await store.close()
    await dropPrefixed([tablePrefix])
  })
  const counters = () =>
    postgresCounters({ client: postgres, tablePrefix, commandTimeout: 10, sweepInterval: 0 })
  const rows = async (): Promise<number> =>
    withClient(async (client) =>
      Number((await client.query(`SELECT count(*) AS n FROM ${tablePrefix}rl_counters`)).rows[0].n),
    )

  it('match the memory counters outcome for outcome, for every algorithm', async () => {
    const t0 = 1_800_000_000_000
    const offsets = [
      0, 1, 2, 3, 4, 5, 6, 7, 2500, 4000, 9999, 10_000, 10_001, 12_000, 15_000, 15_001, 19_999,
      21_000, 26_000, 26_001, 40_000,
    ]
    for (const algorithm of ALGORITHMS) {
      const memory = memoryCounters({ sweepInterval: 0 })
      const pg = counters()
      const rule: CounterRule = { algorithm, count: 5, periodMs: 10_000, burst: 2 }
      const checks: CounterCheck[] = [
        { scope: 'global', bucket: `ip:${algorithm}`, rule: { ...rule, count: 8, burst: 0 } },
        { scope: 'route:default:GET:/p', bucket: `ip:${algorithm}`, rule },
      ]
      for (const offset of offsets) {
        const expected = verdicts(memory.consume(checks, t0 + offset))
        expect({ algorithm, offset, outcomes: await pg.consume(checks, t0 + offset) }).toEqual({
          algorithm,
          offset,
          outcomes: expected,
        })
      }
      await pg.close()
    }
  })

  it('peek matches the memory counters for every algorithm and writes nothing', async () => {
    const t0 = 1_800_000_000_000
    const offsets = [0, 1, 2, 3, 4, 5, 6, 7, 2500, 9999, 10_000, 10_001, 15_000, 21_000, 40_000]
    for (const algorithm of ALGORITHMS) {
      const memory = memoryCounters({ sweepInterval: 0 })
      const pg = counters()
      const rule: CounterRule = { algorithm, count: 5, periodMs: 10_000, burst: 2 }
      const checks: CounterCheck[] = [
        { scope: 'peek', bucket: `ip:${algorithm}`, rule: { ...rule, count: 3, burst: 0 } },
        { scope: 'route:peek:GET:/p', bucket: `ip:${algorithm}`, rule },
      ]
      const before = await rows()
      expect((await pg.peek(checks, t0)).map((o) => o.allowed)).toEqual([true, true])
      expect(await rows()).toBe(before)
      for (const offset of offsets) {
        const now = t0 + offset
        const expected = verdicts(memory.peek(checks, now))
        expect({ algorithm, offset, peeked: await pg.peek(checks, now) }).toEqual({
          algorithm,
          offset,
          peeked: expected,
        })
        expect(await pg.consume(checks, now)).toEqual(verdicts(memory.consume(checks, now)))
      }
    }
  })

  it('a blocked limit stops evaluation: later counters are not touched', async () => {
    const pg = counters()
    const rule = (count: number): CounterRule => ({
      algorithm: 'fixed_window',
      count,
      periodMs: 60_000,
      burst: 0,
    })
    const checks = [
      { scope: 'order', bucket: 'ip:a', rule: rule(1) },
      { scope: 'route:order:GET:/o', bucket: 'ip:a', rule: rule(5) },
    ]
    const now = 1_800_000_000_000
    expect((await pg.consume(checks, now)).map((o) => o.allowed)).toEqual([true, true])
    expect((await pg.consume(checks, now)).map((o) => o.allowed)).toEqual([false])
    expect((await pg.consume(checks.slice(1), now))[0]?.remaining).toBe(3)
  })

  it('concurrent first requests of one counter are all counted', async () => {
    const pg = counters()
    const rule: CounterRule = { algorithm: 'fixed_window', count: 10, periodMs: 60_000, burst: 0 }
    const now = 1_800_000_000_000
    const outcomes = await Promise.all(
      Array.from({ length: 15 }, () => pg.consume([{ scope: 'race', bucket: 'ip:r', rule }], now)),
    )
    expect(outcomes.filter(([o]) => o?.allowed === true)).toHaveLength(10)
  })

  it('resets exactly one scope, never a prefix or substring of another; sweeps expired rows', async () => {
    const pg = counters()
    const rule: CounterRule = { algorithm: 'fixed_window', count: 1, periodMs: 60_000, burst: 0 }
    const scopes = ['route:r:GET:/a', 'route:r:GET:/a/b', 'route:r:GET:/ab', 'route:r:GET:/a%']
    const now = 1_800_000_000_000
    for (const scope of scopes) await pg.consume([{ scope, bucket: 'ip:x', rule }], now)
    await pg.reset('route:r:GET:/a')
    const allowed = async (scope: string) =>
      (await pg.consume([{ scope, bucket: 'ip:x', rule }], now))[0]?.allowed
    expect(await allowed('route:r:GET:/a')).toBe(true)
    expect(await allowed('route:r:GET:/a/b')).toBe(false)
    expect(await allowed('route:r:GET:/ab')).toBe(false)
    expect(await allowed('route:r:GET:/a%')).toBe(false)
    expect(await pg.sweep(now + 60_000)).toBeGreaterThanOrEqual(scopes.length)
    expect(await allowed('route:r:GET:/a/b')).toBe(true)
  })

  it('refuses an invalid rule instead of storing it', async () => {
    const pg = counters()
    const rule: CounterRule = { algorithm: 'fixed_window', count: 1, periodMs: 0, burst: 0 }
    await expect(pg.consume([{ scope: 'bad', bucket: 'b', rule }], 1)).rejects.toThrow(
      /invalid rate-limit rule/,
    )
  })
})

describe('PostgreSQL counters fail open', () => {
  const rule: CounterRule = { algorithm: 'fixed_window', count: 1, periodMs: 1000, burst: 0 }
  const check = [{ scope: 's', bucket: 'b', rule }]

  it('reject past their deadline (the evaluator then lets the request through), then open the circuit', async () => {
    let calls = 0
    const circuit: string[] = []
    const stalled = postgresCounters({
      client: {
        query: () => {
          calls++
          return new Promise(() => undefined) // never answers
        },
      },
      commandTimeout: 0.02,
      sweepInterval: 0,
      onCircuit: (state) => circuit.push(state),
    })
    const started = performance.now()
    await expect(stalled.consume(check, 1)).rejects.toThrow(/did not answer within 20 ms/)
    expect(performance.now() - started).toBeLessThan(1000)
    for (let i = 0; i < 4; i++) await stalled.consume(check, 1).catch(() => undefined)
    expect(circuit).toEqual(['open'])
    // While open, nothing is sent: the request is refused at once.
    await expect(stalled.consume(check, 1)).rejects.toThrow(/circuit open/)
    expect(calls).toBe(5)
  })

  it('reject when the store is not connected yet, without throwing', async () => {
    const store = postgresStore({ url: TEST_PG_URL, tablePrefix: 'never_connected_' })
    if (store.backend.kind !== 'postgres') throw new Error('expected the postgres backend')
    const pg = postgresCounters({ client: store.backend.postgres, sweepInterval: 0 })
    await expect(pg.consume(check, 1)).rejects.toThrow(/not connected/)
  })
})
