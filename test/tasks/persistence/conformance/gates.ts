/**
 * Conformance of the task gates (grouped and rate-limited queues): a slot gate never has more
 * live holders than its limit, a rate gate never counts more than `count` starts in any window,
 * and a refused start changes nothing — also when instances race.
 */
import { randomUUID } from 'node:crypto'
import { expect, type it } from 'vitest'
import type { GateRequest, TaskGateStore } from '../../../../src/tasks/stores/ports.js'
import { T0, type SuiteContext } from './context.js'

/** Two gate instances over the same namespace, and the test function to use. */
export interface GateContext {
  a: () => TaskGateStore
  b: () => TaskGateStore
  test: typeof it | typeof it.skip
}

/** The gates of a store suite's two instances. */
export function storeGates({ a, b, test }: SuiteContext): GateContext {
  const gatesOf = (store: ReturnType<SuiteContext['a']>): TaskGateStore => {
    if (store.gates === undefined) throw new Error(`${store.kind} has no gates`)
    return store.gates
  }
  return { a: () => gatesOf(a()), b: () => gatesOf(b()), test }
}

const slot = (key: string, limit: number, holder: string, now = T0, lease = now + 30_000) =>
  ({ holder, slots: [{ key, limit }], rates: [], leaseUntil: lease, now }) satisfies GateRequest

const rate = (key: string, count: number, periodMs: number, holder: string, now: number) =>
  ({
    holder,
    slots: [],
    rates: [{ key, count, periodMs }],
    leaseUntil: now + 30_000,
    now,
  }) satisfies GateRequest

/** Registers the gate suite. */
export function gatesSuite({ a, b, test }: GateContext): void {
  test('a slot gate holds at most its limit until a holder releases', async () => {
    const key = `slots-${randomUUID()}`
    expect(await a().acquire(slot(key, 1, 'h1'))).toEqual({ allowed: true, retryAfterMs: null })
    expect(await b().acquire(slot(key, 1, 'h2'))).toEqual({ allowed: false, retryAfterMs: null })
    // The holder itself asking again is counted once.
    expect((await b().acquire(slot(key, 1, 'h1'))).allowed).toBe(true)
    await b().release([{ key, holder: 'h1' }])
    await b().release([{ key, holder: 'never-held' }])
    expect((await a().acquire(slot(key, 1, 'h2'))).allowed).toBe(true)
    expect((await a().acquire(slot(key, 1, 'h3'))).allowed).toBe(false)
  })

  test('holds released with a start are given back before it is decided, even when refused', async () => {
    const key = `handoff-${randomUUID()}`
    const other = `handoff-other-${randomUUID()}`
    const rateKey = `handoff-rate-${randomUUID()}`
    expect((await a().acquire(slot(key, 1, 'h1'))).allowed).toBe(true)
    expect((await a().acquire(slot(other, 1, 'o1'))).allowed).toBe(true)
    // Without the release the gate is full; with it the next holder takes the place.
    expect((await b().acquire(slot(key, 1, 'h2'))).allowed).toBe(false)
    const handOff = { ...slot(key, 1, 'h2'), release: [{ key, holder: 'h1' }] }
    expect(await b().acquire(handOff)).toEqual({ allowed: true, retryAfterMs: null })
    expect((await a().acquire(slot(key, 1, 'h3'))).allowed).toBe(false)
    // A start refused by its rate gate still gives back the holds it carried.
    expect((await a().acquire(rate(rateKey, 1, 60_000, 'r1', T0))).allowed).toBe(true)
    const refused = await b().acquire({
      ...rate(rateKey, 1, 60_000, 'r2', T0 + 10),
      release: [{ key: other, holder: 'o1' }],
    })
    expect(refused.allowed).toBe(false)
    expect((await a().acquire(slot(other, 1, 'o2'))).allowed).toBe(true)
  })

  test('a hold whose lease ended frees its place; a renewed one keeps it', async () => {
    const key = `leases-${randomUUID()}`
    expect((await a().acquire(slot(key, 2, 'short', T0, T0 + 1000))).allowed).toBe(true)
    expect((await a().acquire(slot(key, 2, 'renewed', T0, T0 + 1000))).allowed).toBe(true)
    await b().renew([{ key, holder: 'renewed' }], T0 + 60_000, T0 + 500)
    expect((await b().acquire(slot(key, 2, 'third', T0 + 500))).allowed).toBe(false)
    expect((await b().acquire(slot(key, 2, 'third', T0 + 2000))).allowed).toBe(true)
    expect((await b().acquire(slot(key, 2, 'fourth', T0 + 2000))).allowed).toBe(false)
  })

  test('a rate gate counts at most its count in any window and says when to retry', async () => {
    const key = `rate-${randomUUID()}`
    for (let i = 0; i < 3; i++) {
      expect(
        (await (i % 2 === 0 ? a() : b()).acquire(rate(key, 3, 1000, `r${i}`, T0 + i * 100)))
          .allowed,
      ).toBe(true)
    }
    const refused = await a().acquire(rate(key, 3, 1000, 'r3', T0 + 900))
    expect(refused.allowed).toBe(false)
    // The oldest start (at T0) leaves the window at T0 + 1000.
    expect(refused.retryAfterMs).toBe(100)
    expect((await b().acquire(rate(key, 3, 1000, 'r3', T0 + 999))).allowed).toBe(false)
    expect((await b().acquire(rate(key, 3, 1000, 'r3', T0 + 1000))).allowed).toBe(true)
    expect((await a().acquire(rate(key, 3, 1000, 'r4', T0 + 1050))).allowed).toBe(false)
  })

  test('a refused start changes no gate', async () => {
    const slotKey = `both-slot-${randomUUID()}`
    const rateKey = `both-rate-${randomUUID()}`
    const both = (holder: string, now: number): GateRequest => ({
      holder,
      slots: [{ key: slotKey, limit: 1 }],
      rates: [{ key: rateKey, count: 1, periodMs: 60_000 }],
      leaseUntil: now + 30_000,
      now,
    })
    expect((await a().acquire(rate(rateKey, 1, 60_000, 'spender', T0))).allowed).toBe(true)
    // The rate gate refuses: the slot gate must not have been taken.
    expect((await a().acquire(both('blocked', T0 + 10))).allowed).toBe(false)
    expect((await b().acquire(slot(slotKey, 1, 'other', T0 + 20))).allowed).toBe(true)
    await b().release([{ key: slotKey, holder: 'other' }])
    // The slot gate refuses: the rate gate must not have counted (a later window is free).
    expect((await a().acquire(slot(slotKey, 1, 'holder', T0 + 61_000))).allowed).toBe(true)
    expect((await a().acquire(both('blocked', T0 + 61_000))).allowed).toBe(false)
    expect((await b().acquire(rate(rateKey, 1, 60_000, 'fresh', T0 + 61_000))).allowed).toBe(true)
  })

  test('racing instances never take more places or starts than the limits', async () => {
    const slotKey = `race-slot-${randomUUID()}`
    const rateKey = `race-rate-${randomUUID()}`
    const slotResults = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        (i % 2 === 0 ? a() : b()).acquire(slot(slotKey, 3, `s${i}`)),
      ),
    )
    expect(slotResults.filter((result) => result.allowed)).toHaveLength(3)
    const rateResults = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        (i % 2 === 0 ? a() : b()).acquire(rate(rateKey, 5, 10_000, `q${i}`, T0)),
      ),
    )
    expect(rateResults.filter((result) => result.allowed)).toHaveLength(5)
  })
}
