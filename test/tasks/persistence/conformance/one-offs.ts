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

/** Registers the debounced-placement suite (one-off entries that carry their task's id). */
export function debounceSuite({ a, b, test }: SuiteContext): void {
  const entry = (taskId: string, runAt: number, arg: string) =>
    oneOff('debounce:work:doc-1', runAt, { task_id: taskId, args: [arg] })

  test('replaces a pending entry, keeps its task id, new id once claimed', async () => {
    expect(await a().oneOffs.debounce(entry('t1', T0 + 1_000, 'first'))).toBe('t1')
    expect(await b().oneOffs.debounce(entry('t2', T0 + 5_000, 'second'))).toBe('t1')
    const listed = await a().oneOffs.list()
    expect(listed.map((e) => [e.run_key, e.task_id, e.args, e.run_at])).toEqual([
      ['debounce:work:doc-1', 't1', ['second'], T0 + 5_000],
    ])
    // The start moved: at the first call's time nothing is due.
    const early = T0 + 1_000
    expect(
      await a().oneOffs.claim('debounce:work:doc-1', {
        owner: 'A',
        leaseUntil: early + 30_000,
        now: early,
      }),
    ).toBeNull()
    const now = T0 + 5_000
    const claimed = await a().oneOffs.claim('debounce:work:doc-1', {
      owner: 'A',
      leaseUntil: now + 30_000,
      now,
    })
    expect(claimed?.entry.task_id).toBe('t1')
    expect(claimed?.entry.args).toEqual(['second'])
    // Claimed (the task is starting): a new call makes a new task.
    expect(await b().oneOffs.debounce(entry('t3', T0 + 9_000, 'third'))).toBe('t3')
    expect(await a().oneOffs.complete('debounce:work:doc-1', claimed!.claim_token)).toBe(false)
    expect(await b().oneOffs.debounce(entry('t4', T0 + 9_500, 'fourth'))).toBe('t3')
    const later = T0 + 9_500
    const next = await b().oneOffs.claim('debounce:work:doc-1', {
      owner: 'B',
      leaseUntil: later + 30_000,
      now: later,
    })
    expect([next?.entry.task_id, next?.entry.args]).toEqual(['t3', ['fourth']])
    expect(await b().oneOffs.complete('debounce:work:doc-1', next!.claim_token)).toBe(true)
    // Done and gone: the next call starts afresh.
    expect(await a().oneOffs.debounce(entry('t5', T0 + 20_000, 'fifth'))).toBe('t5')
    expect(await a().oneOffs.cancel('debounce:work:doc-1')).toBe(true)
  })

  test('two instances racing on one key leave one entry with one task id', async () => {
    const calls = Array.from({ length: 40 }, (_, i) =>
      (i % 2 === 0 ? a() : b()).oneOffs.debounce(
        oneOff('debounce:work:race', T0 + 1_000 + i, { task_id: `race-${i}`, args: [i] }),
      ),
    )
    const ids = await Promise.all(calls)
    expect(new Set(ids).size).toBe(1)
    const entries = (await a().oneOffs.list()).filter((e) => e.run_key === 'debounce:work:race')
    expect(entries).toHaveLength(1)
    expect(entries[0]!.task_id).toBe(ids[0])
    expect(await b().oneOffs.cancel('debounce:work:race')).toBe(true)
  })

  test('an entry without a task id is refused and nothing is stored', async () => {
    const before = await a().oneOffs.count()
    await expect(a().oneOffs.debounce(oneOff('debounce:work:bad', T0))).rejects.toThrow(
      TaskValidationError,
    )
    await expect(a().oneOffs.debounce(oneOff('', T0, { task_id: 'x' }))).rejects.toThrow(
      TaskValidationError,
    )
    expect(await a().oneOffs.count()).toBe(before)
  })
}
