/**
 * The Redis gates decide the starts asked for in one event-loop turn in one script call, one
 * start after the other in the order they were asked. These tests hold the batching to that
 * promise: on a real Redis, starts asked together get exactly the outcomes calls of their own
 * would have had (a place taken by an earlier start of the batch is full for the later ones, a
 * place released by an earlier one is free), across the split into calls of at most
 * `MAX_GATE_BATCH`; with recorded calls, each call carries its starts' arguments in order, each
 * start gets its own answer, and a failed call fails its own starts only.
 */
import { afterAll, describe, expect, it } from 'vitest'
import { redisStore } from '../../../src/tasks/stores/index.js'
import type { GateRequest, TaskGateStore } from '../../../src/tasks/stores/ports.js'
import { MAX_GATE_BATCH, redisGates } from '../../../src/tasks/stores/redis/gates.js'
import type { RedisOps } from '../../../src/tasks/stores/redis/ops.js'
import { deleteKeys } from '../../helpers/redis.js'
import { REDIS_URL, serverEnabled, uniquePrefix } from './helpers.js'

const enabled = await serverEnabled(REDIS_URL, 'redis-gate-batches.test.ts')
const prefixes: string[] = []

afterAll(async () => {
  if (!enabled) return
  for (const prefix of prefixes) await deleteKeys(prefix, REDIS_URL)
})

const now = Date.now()

function slot(key: string, limit: number, holder: string, extra: Partial<GateRequest> = {}) {
  return { holder, slots: [{ key, limit }], rates: [], leaseUntil: now + 60_000, now, ...extra }
}

describe.skipIf(!enabled)('Redis gates: starts of one turn in one call, in order', () => {
  async function withGates(run: (gates: TaskGateStore) => Promise<void>): Promise<void> {
    const prefix = `sy-test:${uniquePrefix('gates')}`
    prefixes.push(prefix)
    const store = redisStore({ url: REDIS_URL, prefix })
    await store.init()
    try {
      await run(store.gates)
    } finally {
      await store.close()
    }
  }

  it('a batch sees the places taken and released by its earlier starts', async () => {
    await withGates(async (gates) => {
      // Asked in one turn: h1 takes the only place, h2 finds it full, h3 gives h1's back
      // and takes it, h4 finds it full again.
      const decisions = await Promise.all([
        gates.acquire(slot('g', 1, 'h1')),
        gates.acquire(slot('g', 1, 'h2')),
        gates.acquire(slot('g', 1, 'h3', { release: [{ key: 'g', holder: 'h1' }] })),
        gates.acquire(slot('g', 1, 'h4')),
      ])
      expect(decisions.map((decision) => decision.allowed)).toEqual([true, false, true, false])
      // What the batch left is what four calls of their own would have left.
      expect((await gates.acquire(slot('g', 1, 'h5'))).allowed).toBe(false)
      await gates.release([{ key: 'g', holder: 'h3' }])
      expect((await gates.acquire(slot('g', 1, 'h5'))).allowed).toBe(true)
    })
  })

  it('a rate gate counts the starts of a batch in order and tells the refused when to retry', async () => {
    await withGates(async (gates) => {
      const rate = (holder: string) => ({
        holder,
        slots: [],
        rates: [{ key: 'r', count: 2, periodMs: 60_000 }],
        leaseUntil: now + 60_000,
        now,
      })
      const decisions = await Promise.all(
        ['a', 'b', 'c'].map((holder) => gates.acquire(rate(holder))),
      )
      expect(decisions.slice(0, 2)).toEqual([
        { allowed: true, retryAfterMs: null },
        { allowed: true, retryAfterMs: null },
      ])
      expect(decisions[2]?.allowed).toBe(false)
      expect(decisions[2]?.retryAfterMs).toBeGreaterThan(50_000)
      expect(decisions[2]?.retryAfterMs).toBeLessThanOrEqual(60_000)
    })
  })

  it('starts beyond one call keep their order across the calls', async () => {
    await withGates(async (gates) => {
      const count = 2 * MAX_GATE_BATCH + 44
      const decisions = await Promise.all(
        Array.from({ length: count }, (_, i) => gates.acquire(slot('wide', 5, `h${i}`))),
      )
      const allowed = decisions.flatMap((decision, i) => (decision.allowed ? [i] : []))
      expect(allowed).toEqual([0, 1, 2, 3, 4])
    })
  })
})

describe('Redis gates: calls as sent', () => {
  /** Gates over recorded calls; `answer` replies to each call (default: allow every start). */
  function recorded(answer?: (call: number, starts: number) => Promise<unknown>) {
    const calls: { keys: string[]; args: (string | number)[] }[] = []
    const ops = {
      prefix: 'p:',
      key: (...parts: string[]) => `p:${parts.join('')}`,
      run: (name: string, keys: string[], args: (string | number)[]) => {
        expect(name).toBe('acquire-gates')
        calls.push({ keys, args })
        const starts = Number(args[0])
        return (
          answer?.(calls.length - 1, starts) ??
          Promise.resolve(Array.from({ length: starts }, () => [1, -1]).flat())
        )
      },
      isOpen: () => true,
      ordered: true,
      call: () => Promise.resolve(0),
    } satisfies RedisOps
    return { gates: redisGates(ops), calls }
  }

  it('sends the starts of one turn as one call, in order, with every gate and release', async () => {
    const { gates, calls } = recorded()
    const first = slot('s', 2, 'h1', { release: [{ key: 'old', holder: 'h0' }] })
    const second = {
      holder: 'h2',
      slots: [],
      rates: [{ key: 'q', count: 10, periodMs: 1000 }],
      leaseUntil: now + 30_000,
      now,
    }
    await Promise.all([gates.acquire(first), gates.acquire(second)])
    expect(calls).toHaveLength(1)
    const [call] = calls
    expect(call?.keys).toEqual(['p:gate:old', 'p:gate:s', 'p:gate:q'])
    const args = call?.args ?? []
    // Two starts; the wall clock, as both starts' clocks are.
    expect(args[0]).toBe(2)
    expect(Math.abs(Number(args[1]) - Date.now())).toBeLessThan(5_000)
    expect(args.slice(2)).toEqual([
      ...['h1', now + 60_000, now, 1, 1, 1, 0, 'h0', 2],
      ...['h2', now + 30_000, now, 1, 0, 0, 1, 10, 1000],
    ])
  })

  it('sends no wall clock for starts on a clock of their own', async () => {
    const { gates, calls } = recorded()
    const past = now - 3_600_000
    await gates.acquire({ ...slot('s', 1, 'h'), now: past, leaseUntil: past + 1000 })
    expect(calls[0]?.args.slice(0, 6)).toEqual([1, -1, 'h', past + 1000, past, 0])
  })

  it('gives each start its own answer and splits a long turn into calls', async () => {
    const { gates, calls } = recorded((_, starts) =>
      // Every other start refused, the refused ones by a rate gate with a wait of their place.
      Promise.resolve(
        Array.from({ length: starts }, (__, i) => (i % 2 === 0 ? [1, -1] : [0, 100 + i])).flat(),
      ),
    )
    const count = MAX_GATE_BATCH + 3
    const decisions = await Promise.all(
      Array.from({ length: count }, (_, i) => gates.acquire(slot('s', 1, `h${i}`))),
    )
    expect(calls.map((call) => call.args[0])).toEqual([MAX_GATE_BATCH, 3])
    expect(decisions[0]).toEqual({ allowed: true, retryAfterMs: null })
    expect(decisions[1]).toEqual({ allowed: false, retryAfterMs: 101 })
    expect(decisions[MAX_GATE_BATCH + 1]).toEqual({ allowed: false, retryAfterMs: 101 })
    expect(decisions[MAX_GATE_BATCH + 2]).toEqual({ allowed: true, retryAfterMs: null })
  })

  it('a failed call fails its own starts only, thrown or rejected', async () => {
    const { gates } = recorded((call, starts) => {
      if (call === 0) return Promise.reject(new Error('connection lost'))
      if (call === 1) throw new Error('closed')
      return Promise.resolve(Array.from({ length: starts }, () => [1, -1]).flat())
    })
    const count = MAX_GATE_BATCH * 2 + 1
    const settled = await Promise.allSettled(
      Array.from({ length: count }, (_, i) => gates.acquire(slot('s', 1, `h${i}`))),
    )
    const reasons = settled.map((outcome) =>
      outcome.status === 'rejected' ? String(outcome.reason) : 'allowed',
    )
    expect(reasons.slice(0, MAX_GATE_BATCH).every((r) => r === 'Error: connection lost')).toBe(true)
    expect(reasons.slice(MAX_GATE_BATCH, -1).every((r) => r === 'Error: closed')).toBe(true)
    expect(reasons.at(-1)).toBe('allowed')
    // A later turn is a call of its own, unaffected.
    expect((await gates.acquire(slot('s', 1, 'later'))).allowed).toBe(true)
  })
})
