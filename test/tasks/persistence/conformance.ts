/**
 * The one conformance suite every durable task store passes. `open()` returns a NEW store
 * instance (its own connection pool) over the same namespace, so races between instances are
 * real races between connections.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { DurableTaskStore, OneOffEntry } from '../../../src/tasks/stores/ports.js'
import { TaskValidationError } from '../../../src/tasks/errors.js'
import { makeTask } from './helpers.js'

/** How a test file provides its store. */
export interface ConformanceTarget {
  name: string
  enabled: () => Promise<boolean>
  open: () => DurableTaskStore
  cleanup: () => Promise<void>
}

const T0 = Date.parse('2026-11-21T12:00:00Z')

function oneOff(runKey: string, runAt: number, overrides: Partial<OneOffEntry> = {}): OneOffEntry {
  return {
    run_key: runKey,
    func_name: 'work',
    run_at: runAt,
    args: [runKey],
    encrypted_args: null,
    tags: {},
    priority: null,
    queue: null,
    idempotency_key: null,
    created_at: T0,
    ...overrides,
  }
}

/** Registers the suite for `target`. */
export function storeConformance(target: ConformanceTarget): void {
  describe(`${target.name} task store conformance`, async () => {
    const enabled = await target.enabled()
    let a: DurableTaskStore
    let b: DurableTaskStore
    beforeAll(async () => {
      if (!enabled) return
      a = target.open()
      b = target.open()
      // Two instances starting at once on a fresh namespace: the migration lock serialises them.
      await Promise.all([a.init(), b.init()])
    })
    afterAll(async () => {
      if (!enabled) return
      await a.close()
      await b.close()
      await target.cleanup()
    })
    const test = enabled ? it : it.skip

    test('saves, replaces and reads records; bad records change nothing', async () => {
      const task = makeTask({ func_name: 'roundtrip' })
      await a.saveTasks([task])
      expect(await b.getTask(task.record.task_id)).toEqual(task)
      task.record.status = 'success'
      task.record.end_time = task.record.created_at
      await a.saveTasks([task])
      expect((await b.getTask(task.record.task_id))?.record.status).toBe('success')
      const bad = makeTask({ func_name: 'roundtrip', created_at: 'yesterday' })
      await expect(a.saveTasks([makeTask({ func_name: 'roundtrip' }), bad])).rejects.toThrow(
        TaskValidationError,
      )
      const page = await a.listTasks({ funcName: 'roundtrip', page: 1, perPage: 50 })
      expect(page.total).toBe(1)
      expect(await a.getTask('missing')).toBeNull()
    })

    test('lists newest first with filters, paging and totals', async () => {
      const tasks = Array.from({ length: 12 }, (_, i) =>
        makeTask({
          func_name: 'lister',
          created: T0 + i * 1000,
          status: i % 3 === 0 ? 'failed' : 'success',
          end_time: new Date(T0 + i * 1000).toISOString(),
          queue: i % 2 === 0 ? 'even' : 'odd',
          duration: 2,
        }),
      )
      await a.saveTasks(tasks)
      const first = await b.listTasks({ funcName: 'lister', page: 1, perPage: 5 })
      expect(first.total).toBe(12)
      expect(first.items.map((t) => t.record.task_id)).toEqual(
        tasks
          .slice(7)
          .reverse()
          .map((t) => t.record.task_id),
      )
      const last = await b.listTasks({ funcName: 'lister', page: 3, perPage: 5 })
      expect(last.items).toHaveLength(2)
      const failed = await b.listTasks({
        funcName: 'lister',
        status: 'failed',
        page: 1,
        perPage: 50,
      })
      expect(failed.total).toBe(4)
      const evenRecent = await b.listTasks({
        funcName: 'lister',
        queue: 'even',
        since: T0 + 6000,
        page: 1,
        perPage: 50,
      })
      expect(evenRecent.items.map((t) => t.record.created_at)).toEqual(
        [10, 8, 6].map((i) => tasks[i]!.record.created_at),
      )
      await expect(b.listTasks({ page: 0, perPage: 5 })).rejects.toThrow(TaskValidationError)
      await expect(b.listTasks({ page: 1, perPage: 501 })).rejects.toThrow(TaskValidationError)
      const groups = (await b.aggregateTasks()).filter((g) => g.func_name === 'lister')
      const success = groups.find((g) => g.status === 'success')
      expect(success?.count).toBe(8)
      expect(success?.total_duration).toBe(16)
    })

    test('retention deletes old terminal records only, never pending or running', async () => {
      const old = T0 - 10 * 86_400_000
      const iso = (ms: number) => new Date(ms).toISOString()
      const tasks = [
        makeTask({ func_name: 'ret', created: old, status: 'pending' }),
        makeTask({ func_name: 'ret', created: old, status: 'running', start_time: iso(old) }),
        makeTask({ func_name: 'ret', created: old, status: 'success', end_time: iso(old) }),
        makeTask({ func_name: 'ret', created: old, status: 'cancelled', end_time: iso(old) }),
        makeTask({ func_name: 'ret', created: old, status: 'failed', end_time: iso(T0) }),
      ]
      await a.saveTasks(tasks)
      await expect(a.deleteTerminalBefore(Number.NaN)).rejects.toThrow(TaskValidationError)
      const deleted = await b.deleteTerminalBefore(T0 - 86_400_000)
      expect(deleted).toBeGreaterThanOrEqual(2)
      const left = await a.listTasks({ funcName: 'ret', page: 1, perPage: 50 })
      expect(left.items.map((t) => t.record.status).sort()).toEqual([
        'failed',
        'pending',
        'running',
      ])
    })

    test('pending tasks: owner holds them; others claim only after the lease, each once', async () => {
      const tasks = Array.from({ length: 60 }, () => makeTask({ func_name: 'queued' }))
      const stray = makeTask({ func_name: 'unregistered' })
      await a.enqueuePending([...tasks, stray], { owner: 'A', leaseUntil: T0 + 30_000 })
      await expect(
        a.enqueuePending([makeTask({ status: 'success' })], { owner: 'A', leaseUntil: T0 }),
      ).rejects.toThrow(TaskValidationError)
      const early = await b.claimPending({
        owner: 'B',
        leaseUntil: T0 + 60_000,
        now: T0 + 1000,
        limit: 100,
        funcNames: ['queued'],
      })
      expect(early).toHaveLength(0)
      expect(await a.renewLeases('A', T0 + 40_000)).toBeGreaterThanOrEqual(61)
      // A died; B and C (two pools) race after the lease ended.
      const now = T0 + 41_000
      const claims = await Promise.all(
        ['B', 'C', 'B', 'C'].map((owner) =>
          (owner === 'B' ? a : b).claimPending({
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
      const rest = await a.claimPending({
        owner: 'D',
        leaseUntil: now + 30_000,
        now,
        limit: 100,
        funcNames: ['queued'],
      })
      expect(ids.length + rest.length).toBe(60)
      expect(rest.every((c) => c.claimed_by === 'D')).toBe(true)
      // The unregistered function's task is untouched and still pending.
      const strayNow = await b.getTask(stray.record.task_id)
      expect(strayNow?.record.status).toBe('pending')
      // Released tasks are claimable at once.
      await a.releaseTasks(
        rest.map((c) => c.task.record.task_id),
        'D',
      )
      const again = await b.claimPending({
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
      await a.saveTasks(done)
    })

    test('orphaned running tasks are claimed once after their lease', async () => {
      const running = Array.from({ length: 10 }, () =>
        makeTask({ func_name: 'orphan', status: 'running' }),
      )
      for (const t of running) t.record.status = 'pending'
      await a.enqueuePending(running, { owner: 'dead', leaseUntil: T0 + 1000 })
      for (const t of running) t.record.status = 'running'
      await a.saveTasks(running)
      const before = await b.claimOrphans({ owner: 'X', leaseUntil: T0 + 9000, now: T0, limit: 50 })
      expect(before.filter((c) => c.task.record.func_name === 'orphan')).toHaveLength(0)
      const isOrphan = (c: { task: { record: { func_name: string } } }) =>
        c.task.record.func_name === 'orphan'
      const [x, y] = (
        await Promise.all([
          a.claimOrphans({ owner: 'X', leaseUntil: T0 + 9000, now: T0 + 2000, limit: 50 }),
          b.claimOrphans({ owner: 'Y', leaseUntil: T0 + 9000, now: T0 + 2000, limit: 50 }),
        ])
      ).map((list) => list.filter(isOrphan))
      expect(x!.length + y!.length).toBe(10)
      const ids = [...x!, ...y!].map((c) => c.task.record.task_id)
      expect(new Set(ids).size).toBe(10)
      for (const c of [...x!, ...y!]) {
        c.task.record.status = 'interrupted'
        c.task.record.end_time = c.task.record.created_at
      }
      await a.saveTasks([...x!, ...y!].map((c) => c.task))
    })

    test('re-enqueueing an existing task replaces it and takes the new claim', async () => {
      const task = makeTask({ func_name: 'requeued' })
      await a.enqueuePending([task], { owner: 'first', leaseUntil: T0 + 1000 })
      task.record.logs = ['requeued once']
      await b.enqueuePending([task], { owner: 'second', leaseUntil: T0 + 50_000 })
      const free = { leaseUntil: T0 + 90_000, limit: 10, funcNames: ['requeued'] }
      expect(await a.claimPending({ owner: 'third', now: T0 + 2000, ...free })).toHaveLength(0)
      const taken = await a.claimPending({ owner: 'third', now: T0 + 60_000, ...free })
      expect(taken.map((c) => c.task.record.logs)).toEqual([['requeued once']])
      taken[0]!.task.record.status = 'cancelled'
      taken[0]!.task.record.end_time = taken[0]!.task.record.created_at
      await a.saveTasks([taken[0]!.task])
    })

    test('idempotency keys: one winner in a race; release only by the holder', async () => {
      const attempts = Array.from({ length: 10 }, (_, i) => `task-${i}`)
      const results = await Promise.all(
        attempts.map((id, i) => (i % 2 === 0 ? a : b).claimIdempotencyKey('idem-1', id)),
      )
      const winners = attempts.filter((_, i) => results[i] === null)
      expect(winners).toHaveLength(1)
      expect(results.filter((r) => r !== null).every((r) => r === winners[0])).toBe(true)
      await b.releaseIdempotencyKey('idem-1', 'someone-else')
      expect(await a.claimIdempotencyKey('idem-1', 'late')).toBe(winners[0])
      await b.releaseIdempotencyKey('idem-1', winners[0]!)
      expect(await a.claimIdempotencyKey('idem-1', 'late')).toBeNull()
    })

    test('schedule slots fire exactly once across instances', async () => {
      const results = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          (i % 2 === 0 ? a : b).claimScheduleSlot('every-second', T0, `i${i}`),
        ),
      )
      expect(results.filter(Boolean)).toHaveLength(1)
      expect(await a.claimScheduleSlot('every-second', T0 + 1000, 'i0')).toBe(true)
      expect(await b.claimScheduleSlot('other', T0, 'i0')).toBe(true)
      await expect(a.claimScheduleSlot('x', 1.5, 'i0')).rejects.toThrow(TaskValidationError)
      expect(await a.pruneScheduleSlots(T0 + 500)).toBeGreaterThanOrEqual(2)
    })

    test('one-off schedules: replace, cancel, list, window, claim once, lease re-claim', async () => {
      await a.upsertOneOff(oneOff('r1', T0 + 10_000))
      await a.upsertOneOff(oneOff('r2', T0 + 20_000))
      await b.upsertOneOff(oneOff('r1', T0 + 5_000, { args: ['replaced'] }))
      await expect(a.upsertOneOff(oneOff('', T0))).rejects.toThrow(TaskValidationError)
      await expect(a.upsertOneOff(oneOff('bad', 1.5))).rejects.toThrow(TaskValidationError)
      expect(await a.countOneOff()).toBe(2)
      const listed = await b.listOneOff()
      expect(listed.map((e) => [e.run_key, e.args])).toEqual([
        ['r1', ['replaced']],
        ['r2', ['r2']],
      ])
      expect((await b.listOneOff(T0 + 6_000)).map((e) => e.run_key)).toEqual(['r1'])
      expect((await a.fetchOneOffWindow(T0 + 300_000, T0, 100)).map((e) => e.run_key)).toEqual([
        'r1',
        'r2',
      ])
      // Not yet due: nobody claims it.
      expect(await a.claimOneOff('r1', { owner: 'A', leaseUntil: T0 + 9_000, now: T0 })).toBeNull()
      const now = T0 + 5_000
      const racers = await Promise.all(
        ['A', 'B', 'A', 'B'].map((owner, i) =>
          (i % 2 === 0 ? a : b).claimOneOff('r1', { owner, leaseUntil: now + 30_000, now }),
        ),
      )
      const won = racers.filter((r) => r !== null)
      expect(won).toHaveLength(1)
      expect(won[0]!.entry.args).toEqual(['replaced'])
      // Claimed entries leave the window until the lease ends.
      expect((await a.fetchOneOffWindow(now + 300_000, now, 100)).map((e) => e.run_key)).toEqual([
        'r2',
      ])
      // The claimer crashed: after the lease another instance claims it.
      const later = now + 31_000
      const reclaimed = await b.claimOneOff('r1', {
        owner: 'B',
        leaseUntil: later + 30_000,
        now: later,
      })
      expect(reclaimed).not.toBeNull()
      expect(await a.completeOneOff('r1', won[0]!.claim_token)).toBe(false)
      expect(await b.completeOneOff('r1', reclaimed!.claim_token)).toBe(true)
      expect(await a.cancelOneOff('r2')).toBe(true)
      expect(await a.cancelOneOff('r2')).toBe(false)
      expect(await b.countOneOff()).toBe(0)
    })

    test('queue configs, audit and session revocations', async () => {
      await a.putQueueConfig({ name: 'emails', concurrency: 2, max_size: null })
      await b.putQueueConfig({ name: 'emails', concurrency: 3, max_size: 10 })
      await expect(
        a.putQueueConfig({ name: 'x', concurrency: -1, max_size: null }),
      ).rejects.toThrow(TaskValidationError)
      expect(await a.getQueueConfigs()).toEqual([{ name: 'emails', concurrency: 3, max_size: 10 }])
      const first = await a.appendAudit({
        timestamp: T0,
        action: 'retry',
        task_id: 't1',
        actor: 'anonymous',
        detail: { new_task_id: 't2' },
      })
      const second = await b.appendAudit({
        timestamp: T0 + 1,
        action: 'history_delete',
        task_id: null,
        actor: 'ada',
        detail: { deleted: 3 },
      })
      expect(second.id).toBeGreaterThan(first.id)
      const page = await a.listAudit(1, 1)
      expect(page.total).toBe(2)
      expect(page.items).toEqual([second])
      expect((await a.listAudit(2, 1)).items).toEqual([first])
      await a.revokeSession('tok', T0 + 1000)
      expect(await b.isSessionRevoked('tok', T0)).toBe(true)
      expect(await b.isSessionRevoked('tok', T0 + 1000)).toBe(false)
      expect(await b.isSessionRevoked('other', T0)).toBe(false)
    })
  })
}
