/** Conformance of the pending-queue port: claims, leases, orphans, releases. */
import { expect } from 'vitest'
import { TaskValidationError } from '../../../../src/tasks/errors.js'
import { makeTask } from '../helpers.js'
import { T0, type SuiteContext } from './context.js'

/** Registers the pending-queue suite. */
export function pendingQueueSuite({ a, b, test }: SuiteContext): void {
  test('a large batch stores each task once, the last write of a repeated id standing', async () => {
    const tasks = Array.from({ length: 450 }, () => makeTask({ func_name: 'bulk' }))
    const first = tasks[0]!
    const again = { ...first, record: { ...first.record, func_name: 'bulk_last' } }
    await a().pending.enqueue([...tasks, again], { owner: 'A', leaseUntil: T0 + 30_000 })
    const page = await b().records.list({ funcName: 'bulk', page: 1, perPage: 10 })
    expect(page.total).toBe(449)
    expect((await b().records.get(first.record.task_id))?.record.func_name).toBe('bulk_last')
    const claimed = await b().pending.claim({
      owner: 'B',
      leaseUntil: T0 + 90_000,
      now: T0 + 60_000,
      limit: 1000,
      funcNames: ['bulk', 'bulk_last'],
    })
    expect(claimed).toHaveLength(450)
    expect(claimed.every((c) => c.claimed_by === 'B')).toBe(true)
  })

  test('the owner holds its tasks; others claim only after the lease, each once', async () => {
    const tasks = Array.from({ length: 60 }, () => makeTask({ func_name: 'queued' }))
    const stray = makeTask({ func_name: 'unregistered' })
    await a().pending.enqueue([...tasks, stray], { owner: 'A', leaseUntil: T0 + 30_000 })
    await expect(
      a().pending.enqueue([makeTask({ status: 'success' })], { owner: 'A', leaseUntil: T0 }),
    ).rejects.toThrow(TaskValidationError)
    const early = await b().pending.claim({
      owner: 'B',
      leaseUntil: T0 + 60_000,
      now: T0 + 1000,
      limit: 100,
      funcNames: ['queued'],
    })
    expect(early).toHaveLength(0)
    expect(await a().pending.renewLeases('A', T0 + 40_000)).toBeGreaterThanOrEqual(61)
    // A died; B and C (two pools) race after the lease ended.
    const now = T0 + 41_000
    const claims = await Promise.all(
      ['B', 'C', 'B', 'C'].map((owner) =>
        (owner === 'B' ? a() : b()).pending.claim({
          owner,
          leaseUntil: now + 30_000,
          now,
          limit: 25,
          funcNames: ['queued'],
        }),
      ),
    )
    const ids = claims.flat().map((c) => c.task.record.task_id)
    expect(new Set(ids).size).toBe(ids.length)
    const rest = await a().pending.claim({
      owner: 'D',
      leaseUntil: now + 30_000,
      now,
      limit: 100,
      funcNames: ['queued'],
    })
    expect(ids.length + rest.length).toBe(60)
    expect(rest.every((c) => c.claimed_by === 'D')).toBe(true)
    // The unregistered function's task is untouched and still pending.
    const strayNow = await b().records.get(stray.record.task_id)
    expect(strayNow?.record.status).toBe('pending')
    // Released tasks are claimable at once.
    await a().pending.release(
      rest.map((c) => c.task.record.task_id),
      'D',
    )
    const again = await b().pending.claim({
      owner: 'E',
      leaseUntil: now + 30_000,
      now,
      limit: 100,
      funcNames: ['queued'],
    })
    expect(again.map((c) => c.task.record.task_id).sort()).toEqual(
      rest.map((c) => c.task.record.task_id).sort(),
    )
    // Finish them so later tests see a clean queue.
    const done = [...claims.flat(), ...again].map((c) => {
      c.task.record.status = 'success'
      c.task.record.end_time = c.task.record.created_at
      return c.task
    })
    await a().records.save(done)
  })

  test('orphaned running tasks are claimed once after their lease', async () => {
    const running = Array.from({ length: 10 }, () =>
      makeTask({ func_name: 'orphan', status: 'running' }),
    )
    for (const t of running) t.record.status = 'pending'
    await a().pending.enqueue(running, { owner: 'dead', leaseUntil: T0 + 1000 })
    for (const t of running) t.record.status = 'running'
    await a().records.save(running)
    const before = await b().pending.claimOrphans({
      owner: 'X',
      leaseUntil: T0 + 9000,
      now: T0,
      limit: 50,
    })
    expect(before.filter((c) => c.task.record.func_name === 'orphan')).toHaveLength(0)
    const isOrphan = (c: { task: { record: { func_name: string } } }) =>
      c.task.record.func_name === 'orphan'
    const [x, y] = (
      await Promise.all([
        a().pending.claimOrphans({ owner: 'X', leaseUntil: T0 + 9000, now: T0 + 2000, limit: 50 }),
        b().pending.claimOrphans({ owner: 'Y', leaseUntil: T0 + 9000, now: T0 + 2000, limit: 50 }),
      ])
    ).map((list) => list.filter(isOrphan))
    expect(x!.length + y!.length).toBe(10)
    const ids = [...x!, ...y!].map((c) => c.task.record.task_id)
    expect(new Set(ids).size).toBe(10)
    for (const c of [...x!, ...y!]) {
      c.task.record.status = 'interrupted'
      c.task.record.end_time = c.task.record.created_at
    }
    await a().records.save([...x!, ...y!].map((c) => c.task))
  })

  test('re-enqueueing an existing task replaces it and takes the new claim', async () => {
    const task = makeTask({ func_name: 'requeued' })
    await a().pending.enqueue([task], { owner: 'first', leaseUntil: T0 + 1000 })
    task.record.logs = ['requeued once']
    await b().pending.enqueue([task], { owner: 'second', leaseUntil: T0 + 50_000 })
    const free = { leaseUntil: T0 + 90_000, limit: 10, funcNames: ['requeued'] }
    expect(await a().pending.claim({ owner: 'third', now: T0 + 2000, ...free })).toHaveLength(0)
    const taken = await a().pending.claim({ owner: 'third', now: T0 + 60_000, ...free })
    expect(taken.map((c) => c.task.record.logs)).toEqual([['requeued once']])
    taken[0]!.task.record.status = 'cancelled'
    taken[0]!.task.record.end_time = taken[0]!.task.record.created_at
    await a().records.save([taken[0]!.task])
  })

  test('a task whose expiry passed is never leased: the claim ends it expired, once', async () => {
    const iso = (ms: number) => new Date(ms).toISOString().replace('Z', '+00:00')
    const stale = makeTask({ func_name: 'expiring', expires_at: iso(T0 + 5000) })
    const fresh = makeTask({ func_name: 'expiring', expires_at: iso(T0 + 60_000) })
    const plain = makeTask({ func_name: 'expiring' })
    await a().pending.enqueue([stale, fresh, plain], { owner: 'gone', leaseUntil: T0 + 1000 })
    expect((await b().records.get(stale.record.task_id))?.record.expires_at).toBe(iso(T0 + 5000))
    // Two instances race for the queue after the owner's lease ended and past the expiry.
    const now = T0 + 10_000
    const request = { leaseUntil: now + 30_000, now, limit: 10, funcNames: ['expiring'] }
    const [x, y] = await Promise.all([
      a().pending.claim({ owner: 'X', ...request }),
      b().pending.claim({ owner: 'Y', ...request }),
    ])
    const handed = [...x, ...y].map((c) => c.task.record.task_id)
    expect(handed.sort()).toEqual([fresh.record.task_id, plain.record.task_id].sort())
    const ended = await a().records.get(stale.record.task_id)
    expect(ended?.record.status).toBe('expired')
    expect(ended?.record.start_time).toBeNull()
    expect(ended?.record.end_time).toBe(iso(now))
    expect(ended?.record.error).toContain(`expiry at ${iso(T0 + 5000)}`)
    const listed = await b().records.list({ status: 'expired', page: 1, perPage: 10 })
    expect(listed.items.map((t) => t.record.task_id)).toEqual([stale.record.task_id])
    // Counted once in the metrics, as a terminal record.
    const metrics = await b().metrics.read({})
    const expired = metrics.cells.filter(
      (c) => c.func_name === 'expiring' && c.status === 'expired',
    )
    expect(expired.reduce((sum, c) => sum + c.count, 0)).toBe(1)
    // Nobody claims it later either.
    const later = await a().pending.claim({ owner: 'Z', ...request, now: now + 90_000 })
    expect(later.map((c) => c.task.record.task_id)).not.toContain(stale.record.task_id)
    // Retention treats it as terminal: deleted once its end is before the cutoff.
    const done = [...x, ...y, ...later].map((c) => {
      c.task.record.status = 'success'
      c.task.record.end_time = c.task.record.created_at
      return c.task
    })
    await a().records.save(done)
    await a().records.deleteTerminalBefore(now + 1)
    expect(await b().records.get(stale.record.task_id)).toBeNull()
  })

  test('create writes a new record once: racing creators of one id, one wins', async () => {
    const task = makeTask({ func_name: 'slot_task', tags: { slot: 'one' } })
    const rival = { ...task, record: { ...task.record, func_name: 'slot_rival' } }
    const lease = (owner: string) => ({ owner, leaseUntil: T0 + 30_000 })
    const won = await Promise.all([
      a().pending.create(task, lease('A')),
      b().pending.create(rival, lease('B')),
      a().pending.create(rival, lease('C')),
      b().pending.create(task, lease('D')),
    ])
    expect(won.filter(Boolean)).toHaveLength(1)
    const winner = ['A', 'B', 'C', 'D'][won.indexOf(true)]!
    const stored = await b().records.get(task.record.task_id)
    expect(stored?.record.status).toBe('pending')
    expect(stored?.record.func_name).toBe(['A', 'D'].includes(winner) ? 'slot_task' : 'slot_rival')
    // Indexed once, by its tag too.
    const tagged = await a().records.list({ tags: [['slot', 'one']], page: 1, perPage: 10 })
    expect(tagged.items.map((t) => t.record.task_id)).toEqual([task.record.task_id])
    // Held by the winner until its lease ends, then claimable like any pending record.
    const request = { leaseUntil: T0 + 90_000, limit: 10, funcNames: ['slot_task', 'slot_rival'] }
    expect(await a().pending.claim({ owner: 'E', now: T0 + 1000, ...request })).toEqual([])
    const late = await b().pending.claim({ owner: 'E', now: T0 + 31_000, ...request })
    expect(late.map((c) => c.task.record.task_id)).toEqual([task.record.task_id])
    // A finished record is never replaced by a create; nor is a bad record written.
    const done = { ...task, record: { ...task.record, status: 'success' as const } }
    done.record.end_time = done.record.created_at
    await a().records.save([done])
    expect(await b().pending.create(task, lease('F'))).toBe(false)
    expect((await a().records.get(task.record.task_id))?.record.status).toBe('success')
    const finished = makeTask({ status: 'success' })
    await expect(a().pending.create(finished, lease('G'))).rejects.toThrow(TaskValidationError)
    expect(await a().records.get(finished.record.task_id)).toBeNull()
  })
}
