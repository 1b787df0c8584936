/** Conformance of the one-off schedule port. */
import { expect } from 'vitest'
import { TaskValidationError } from '../../../../src/tasks/errors.js'
import { oneOff, T0, type SuiteContext } from './context.js'

/** Registers the one-off suite. */
export function oneOffSuite({ a, b, test }: SuiteContext): void {
  test('replace, cancel, list, window, claim once, lease re-claim', async () => {
    await a().oneOffs.upsert(oneOff('r1', T0 + 10_000))
    await a().oneOffs.upsert(oneOff('r2', T0 + 20_000))
    await b().oneOffs.upsert(oneOff('r1', T0 + 5_000, { args: ['replaced'] }))
    await expect(a().oneOffs.upsert(oneOff('', T0))).rejects.toThrow(TaskValidationError)
    await expect(a().oneOffs.upsert(oneOff('bad', 1.5))).rejects.toThrow(TaskValidationError)
    expect(await a().oneOffs.count()).toBe(2)
    const listed = await b().oneOffs.list()
    expect(listed.map((e) => [e.run_key, e.args])).toEqual([
      ['r1', ['replaced']],
      ['r2', ['r2']],
    ])
    expect((await b().oneOffs.list(T0 + 6_000)).map((e) => e.run_key)).toEqual(['r1'])
    expect((await a().oneOffs.fetchWindow(T0 + 300_000, T0, 100)).map((e) => e.run_key)).toEqual([
      'r1',
      'r2',
    ])
    // Not yet due: nobody claims it.
    expect(
      await a().oneOffs.claim('r1', { owner: 'A', leaseUntil: T0 + 9_000, now: T0 }),
    ).toBeNull()
    const now = T0 + 5_000
    const racers = await Promise.all(
      ['A', 'B', 'A', 'B'].map((owner, i) =>
        (i % 2 === 0 ? a() : b()).oneOffs.claim('r1', { owner, leaseUntil: now + 30_000, now }),
      ),
    )
    const won = racers.filter((r) => r !== null)
    expect(won).toHaveLength(1)
    expect(won[0]!.entry.args).toEqual(['replaced'])
    // Claimed entries leave the window until the lease ends.
    expect((await a().oneOffs.fetchWindow(now + 300_000, now, 100)).map((e) => e.run_key)).toEqual([
      'r2',
    ])
    // The claimer crashed: after the lease another instance claims it.
    const later = now + 31_000
    const reclaimed = await b().oneOffs.claim('r1', {
      owner: 'B',
      leaseUntil: later + 30_000,
      now: later,
    })
    expect(reclaimed).not.toBeNull()
    expect(await a().oneOffs.complete('r1', won[0]!.claim_token)).toBe(false)
    expect(await b().oneOffs.complete('r1', reclaimed!.claim_token)).toBe(true)
    expect(await a().oneOffs.cancel('r2')).toBe(true)
    expect(await a().oneOffs.cancel('r2')).toBe(false)
    expect(await b().oneOffs.count()).toBe(0)
  })
}
