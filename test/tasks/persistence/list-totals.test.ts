/**
 * The cached totals of list queries: a total is served from the cache and recounted in the
 * background once stale, and a slow count is reused for longer (so a count that blocks the
 * process is repeated at most about 1 % of the time). A fake clock stands in for time: the
 * count function moves it by as long as the count "takes".
 */
import { describe, expect, it } from 'vitest'
import {
  ListTotals,
  MAX_TTL_MS,
  SLOW_COUNT_FACTOR,
} from '../../../src/tasks/stores/sql/list-totals.js'
import { flush, until } from '../helpers.js'

function setup(takesMs: number) {
  let now = 0
  let matches = 10
  let counts = 0
  const totals = new ListTotals(5000, () => now)
  const count = () => {
    counts++
    now += takesMs
    return Promise.resolve(matches)
  }
  return {
    totals,
    count,
    advance: (ms: number) => (now += ms),
    setMatches: (n: number) => (matches = n),
    counts: () => counts,
  }
}

describe('list totals', () => {
  it('a fast count is reused for the time to live, then recounted in the background', async () => {
    const t = setup(2)
    expect(await t.totals.get('all', t.count)).toBe(10)
    t.setMatches(11)
    t.advance(4000)
    expect(await t.totals.get('all', t.count)).toBe(10)
    await flush() // a recount would have started by now
    expect(t.counts()).toBe(1)
    t.advance(1000)
    // Stale: the old total answers at once, the recount follows.
    expect(await t.totals.get('all', t.count)).toBe(10)
    await until(() => t.counts() === 2)
    await until(async () => (await t.totals.get('all', t.count)) === 11)
    expect(t.counts()).toBe(2)
  })

  it('a slow count is reused for a hundred times as long as it took, at most ten minutes', async () => {
    const slow = setup(1000)
    await slow.totals.get('all', slow.count)
    slow.advance(SLOW_COUNT_FACTOR * 1000 - 1)
    await slow.totals.get('all', slow.count)
    await flush()
    expect(slow.counts()).toBe(1)
    slow.advance(1)
    await slow.totals.get('all', slow.count)
    await until(() => slow.counts() === 2)

    const slowest = setup(60_000)
    await slowest.totals.get('all', slowest.count)
    slowest.advance(MAX_TTL_MS)
    await slowest.totals.get('all', slowest.count)
    await until(() => slowest.counts() === 2)
  })

  it('keeps one total per filter, and clear() forgets them', async () => {
    const t = setup(1)
    await t.totals.get('status=failed', t.count)
    t.setMatches(3)
    expect(await t.totals.get('status=success', t.count)).toBe(3)
    expect(await t.totals.get('status=failed', t.count)).toBe(10)
    t.totals.clear()
    expect(await t.totals.get('status=failed', t.count)).toBe(3)
    expect(t.counts()).toBe(3)
  })

  it('a count running when clear() is called answers its request but is not kept', async () => {
    // The count is held open so clear() lands while it runs, as a history deletion can.
    let matches = 10
    let counts = 0
    let release: (() => void) | undefined
    const totals = new ListTotals(5000, () => 0)
    const count = async () => {
      counts++
      const seen = matches
      if (counts === 1) await new Promise<void>((resolve) => (release = resolve))
      return seen
    }
    const first = totals.get('all', count)
    await until(() => release !== undefined)
    matches = 4
    totals.clear()
    release?.()
    expect(await first).toBe(10)
    // Nothing was kept: the next request counts afresh.
    expect(await totals.get('all', count)).toBe(4)
    expect(counts).toBe(2)
  })

  it('a background recount running when clear() is called is not kept', async () => {
    let now = 0
    let matches = 10
    let counts = 0
    let release: (() => void) | undefined
    const totals = new ListTotals(5000, () => now)
    const count = async () => {
      counts++
      const seen = matches
      if (counts === 2) await new Promise<void>((resolve) => (release = resolve))
      return seen
    }
    expect(await totals.get('all', count)).toBe(10)
    now += 5000
    matches = 7 // counted by the recount, then deleted before it finishes
    expect(await totals.get('all', count)).toBe(10)
    await until(() => release !== undefined)
    matches = 2
    totals.clear()
    release?.()
    await flush()
    // The stale recount was dropped: the next request counts afresh.
    expect(await totals.get('all', count)).toBe(2)
    expect(counts).toBe(3)
  })

  it('counts every time when the cache is off', async () => {
    let counts = 0
    const totals = new ListTotals(0, () => 0)
    const count = () => Promise.resolve(++counts)
    expect(await totals.get('all', count)).toBe(1)
    expect(await totals.get('all', count)).toBe(2)
  })
})
