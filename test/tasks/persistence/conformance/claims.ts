/** Conformance of the idempotency-key and schedule-slot ports: one winner per race. */
import { expect } from 'vitest'
import { TaskValidationError } from '../../../../src/tasks/errors.js'
import { MAX_CLAIMS } from '../../../../src/tasks/stores/ports.js'
import { T0, type SuiteContext } from './context.js'

/** Registers the idempotency-key suite. */
export function idempotencySuite({ a, b, test }: SuiteContext): void {
  test('one winner in a race; release only by the holder', async () => {
    const attempts = Array.from({ length: 10 }, (_, i) => `task-${i}`)
    const results = await Promise.all(
      attempts.map((id, i) => (i % 2 === 0 ? a() : b()).idempotency.claim('idem-1', id)),
    )
    const winners = attempts.filter((_, i) => results[i] === null)
    expect(winners).toHaveLength(1)
    expect(results.filter((r) => r !== null).every((r) => r === winners[0])).toBe(true)
    await b().idempotency.release('idem-1', 'someone-else')
    expect(await a().idempotency.claim('idem-1', 'late')).toBe(winners[0])
    await b().idempotency.release('idem-1', winners[0]!)
    expect(await a().idempotency.claim('idem-1', 'late')).toBeNull()
  })
}

/** Registers the suite of batched idempotency claims. */
export function idempotencyBatchSuite({ a, b, test }: SuiteContext): void {
  test('a batch claims the free keys and names the holders of the others, in order', async () => {
    expect(await a().idempotency.claim('batch-held', 'older')).toBeNull()
    const holders = await b().idempotency.claimMany([
      { key: 'batch-free-1', task_id: 'new-1' },
      { key: 'batch-held', task_id: 'new-2' },
      { key: 'batch-free-2', task_id: 'new-3' },
    ])
    expect(holders).toEqual([null, 'older', null])
    expect(await a().idempotency.claim('batch-free-1', 'late')).toBe('new-1')
    expect(await a().idempotency.claim('batch-free-2', 'late')).toBe('new-3')
    // Claimed again by its own holder: won (nothing changes).
    expect(await a().idempotency.claimMany([{ key: 'batch-free-1', task_id: 'new-1' }])).toEqual([
      null,
    ])
    expect(await a().idempotency.claimMany([])).toEqual([])
    // A released key is free for the next batch.
    await a().idempotency.release('batch-held', 'older')
    expect(await b().idempotency.claimMany([{ key: 'batch-held', task_id: 'new-4' }])).toEqual([
      null,
    ])
  })

  test('racing batches and single claims: one winner per key', async () => {
    const keys = Array.from({ length: 300 }, (_, i) => `batch-race-${i}`)
    // Overlapping batches in different orders, from both instances, and single claims.
    const batches = [
      { store: a, claims: keys.map((key) => ({ key, task_id: `x:${key}` })) },
      { store: b, claims: [...keys].reverse().map((key) => ({ key, task_id: `y:${key}` })) },
      { store: a, claims: keys.slice(100, 200).map((key) => ({ key, task_id: `z:${key}` })) },
    ]
    const [answers, singles] = await Promise.all([
      Promise.all(batches.map(({ store, claims }) => store().idempotency.claimMany(claims))),
      Promise.all(keys.slice(0, 50).map((key) => b().idempotency.claim(key, `s:${key}`))),
    ])
    const winners = new Map<string, string[]>()
    const won = (key: string, id: string) => winners.set(key, [...(winners.get(key) ?? []), id])
    batches.forEach(({ claims }, i) => {
      claims.forEach(({ key, task_id }, j) => {
        if (answers[i]?.[j] === null) won(key, task_id)
      })
    })
    keys.slice(0, 50).forEach((key, i) => {
      if (singles[i] === null) won(key, `s:${key}`)
    })
    for (const key of keys) {
      expect(winners.get(key), key).toHaveLength(1)
      const winner = winners.get(key)?.[0]
      // Every loser was told the winner's id.
      batches.forEach(({ claims }, i) => {
        const j = claims.findIndex((claim) => claim.key === key)
        if (j >= 0 && answers[i]?.[j] !== null) expect(answers[i]?.[j]).toBe(winner)
      })
    }
  })

  test('a bad batch is refused and claims nothing', async () => {
    await expect(
      a().idempotency.claimMany([
        { key: 'batch-bad', task_id: 'one' },
        { key: 'batch-bad', task_id: 'two' },
      ]),
    ).rejects.toThrow(TaskValidationError)
    await expect(
      a().idempotency.claimMany(
        Array.from({ length: MAX_CLAIMS + 1 }, (_, i) => ({ key: `batch-big-${i}`, task_id: 't' })),
      ),
    ).rejects.toThrow(TaskValidationError)
    await expect(a().idempotency.claimMany([{ key: '', task_id: 't' }])).rejects.toThrow(
      TaskValidationError,
    )
    expect(await b().idempotency.claim('batch-bad', 'free')).toBeNull()
    expect(await b().idempotency.claim('batch-big-0', 'free')).toBeNull()
  })
}

/** Registers the schedule-slot suite. */
export function scheduleSlotsSuite({ a, b, test }: SuiteContext): void {
  test('a slot fires exactly once across instances', async () => {
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        (i % 2 === 0 ? a() : b()).slots.claim('every-second', T0, `i${i}`, T0),
      ),
    )
    expect(results.filter(Boolean)).toHaveLength(1)
    expect(await a().slots.claim('every-second', T0 + 1000, 'i0', T0)).toBe(true)
    expect(await b().slots.claim('other', T0, 'i0', T0)).toBe(true)
    await expect(a().slots.claim('x', 1.5, 'i0', T0)).rejects.toThrow(TaskValidationError)
    expect(await a().slots.prune(T0 + 500)).toBeGreaterThanOrEqual(2)
  })

  test('a claim stays unconfirmed until its holder confirms it', async () => {
    const window = { claimedSince: T0 - 60_000, claimedBefore: T0 + 60_000, limit: 10 }
    expect(await a().slots.claim('confirming', T0, 'holder', T0)).toBe(true)
    expect(await a().slots.claim('confirming', T0 + 1000, 'holder', T0 + 1000)).toBe(true)
    expect(await b().slots.unconfirmed('confirming', window)).toEqual([T0, T0 + 1000])
    // Only the holder confirms; another schedule's name sees nothing.
    await b().slots.confirm('confirming', T0, 'someone-else')
    expect(await b().slots.unconfirmed('confirming', window)).toEqual([T0, T0 + 1000])
    expect(await b().slots.unconfirmed('confirming-other', window)).toEqual([])
    await a().slots.confirm('confirming', T0, 'holder')
    expect(await b().slots.unconfirmed('confirming', window)).toEqual([T0 + 1000])
    // The window and the limit bound the answer (oldest claim first).
    expect(
      await b().slots.unconfirmed('confirming', { ...window, claimedBefore: T0 + 1000 }),
    ).toEqual([])
    expect(
      await b().slots.unconfirmed('confirming', { ...window, claimedSince: T0 + 1001 }),
    ).toEqual([])
    expect(await a().slots.claim('confirming', T0 + 2000, 'holder', T0 + 500)).toBe(true)
    expect(await b().slots.unconfirmed('confirming', { ...window, limit: 1 })).toEqual([T0 + 2000])
    // A confirmed slot is still claimed.
    expect(await b().slots.claim('confirming', T0, 'late', T0)).toBe(false)
  })

  test('a stale unconfirmed claim is taken over by exactly one instance', async () => {
    const lease = 30_000
    expect(await a().slots.claim('takeover', T0, 'dead', T0)).toBe(true)
    expect(await a().slots.claim('takeover', T0 + 1000, 'live', T0 + 1000)).toBe(true)
    await a().slots.confirm('takeover', T0 + 1000, 'live')
    // Not stale yet: nobody takes it over.
    expect(await b().slots.takeOver('takeover', T0, 'b0', T0, T0 + 10_000)).toBe(false)
    const now = T0 + lease + 1
    const staleBefore = now - lease
    const racers = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        (i % 2 === 0 ? a() : b()).slots.takeOver('takeover', T0, `r${i}`, staleBefore, now),
      ),
    )
    expect(racers.filter(Boolean)).toHaveLength(1)
    const winner = `r${racers.indexOf(true)}`
    // The takeover counts as a fresh claim: not stale again, and no longer listed as stale.
    expect(
      await a().slots.unconfirmed('takeover', {
        claimedSince: 0,
        claimedBefore: staleBefore,
        limit: 10,
      }),
    ).toEqual([])
    expect(await a().slots.takeOver('takeover', T0, 'again', now, now)).toBe(false)
    // The dead holder's late confirmation does not count; the new holder's does.
    await a().slots.confirm('takeover', T0, 'dead')
    const later = now + lease + 1
    const all = { claimedSince: 0, claimedBefore: later, limit: 10 }
    expect(await b().slots.unconfirmed('takeover', all)).toEqual([T0])
    await b().slots.confirm('takeover', T0, winner)
    expect(await b().slots.unconfirmed('takeover', all)).toEqual([])
    // Confirmed, missing and other-schedule slots are never taken over.
    expect(await b().slots.takeOver('takeover', T0, 'x', later, later)).toBe(false)
    expect(await b().slots.takeOver('takeover', T0 + 1000, 'x', later, later)).toBe(false)
    expect(await b().slots.takeOver('takeover', T0 + 5000, 'x', later, later)).toBe(false)
    await expect(b().slots.takeOver('takeover', 0.5, 'x', later, later)).rejects.toThrow(
      TaskValidationError,
    )
  })

  test('pruning forgets unconfirmed claims too', async () => {
    expect(await a().slots.claim('pruned', T0 - 90_000, 'dead', T0 - 90_000)).toBe(true)
    const all = { claimedSince: 0, claimedBefore: T0, limit: 10 }
    expect(await b().slots.unconfirmed('pruned', all)).toEqual([T0 - 90_000])
    expect(await b().slots.prune(T0 - 80_000)).toBeGreaterThanOrEqual(1)
    expect(await b().slots.unconfirmed('pruned', all)).toEqual([])
    expect(await b().slots.takeOver('pruned', T0 - 90_000, 'x', T0, T0)).toBe(false)
  })
}
