/** Conformance of the idempotency-key and schedule-slot ports: one winner per race. */
import { expect } from 'vitest'
import { TaskValidationError } from '../../../../src/tasks/errors.js'
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

/** Registers the schedule-slot suite. */
export function scheduleSlotsSuite({ a, b, test }: SuiteContext): void {
  test('a slot fires exactly once across instances', async () => {
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        (i % 2 === 0 ? a() : b()).slots.claim('every-second', T0, `i${i}`),
      ),
    )
    expect(results.filter(Boolean)).toHaveLength(1)
    expect(await a().slots.claim('every-second', T0 + 1000, 'i0')).toBe(true)
    expect(await b().slots.claim('other', T0, 'i0')).toBe(true)
    await expect(a().slots.claim('x', 1.5, 'i0')).rejects.toThrow(TaskValidationError)
    expect(await a().slots.prune(T0 + 500)).toBeGreaterThanOrEqual(2)
  })
}
