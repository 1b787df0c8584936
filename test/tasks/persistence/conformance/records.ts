/** Conformance of the record port: save/replace, get, list (filters, paging), retention. */
import { expect } from 'vitest'
import { TaskValidationError } from '../../../../src/tasks/errors.js'
import { makeTask } from '../helpers.js'
import { iso, T0, type SuiteContext } from './context.js'

/** Registers the record suite. */
export function recordsSuite({ a, b, test }: SuiteContext): void {
  test('saves, replaces and reads records; bad records change nothing', async () => {
    const task = makeTask({ func_name: 'roundtrip' })
    await a().records.save([task])
    expect(await b().records.get(task.record.task_id)).toEqual(task)
    task.record.status = 'success'
    task.record.end_time = task.record.created_at
    await a().records.save([task])
    expect((await b().records.get(task.record.task_id))?.record.status).toBe('success')
    const bad = makeTask({ func_name: 'roundtrip', created_at: 'yesterday' })
    await expect(a().records.save([makeTask({ func_name: 'roundtrip' }), bad])).rejects.toThrow(
      TaskValidationError,
    )
    const page = await a().records.list({ funcName: 'roundtrip', page: 1, perPage: 50 })
    expect(page.total).toBe(1)
    expect(await a().records.get('missing')).toBeNull()
  })

  test('lists newest first with filters, paging and totals', async () => {
    const tasks = Array.from({ length: 12 }, (_, i) =>
      makeTask({
        func_name: 'lister',
        created: T0 + i * 1000,
        status: i % 3 === 0 ? 'failed' : 'success',
        end_time: iso(T0 + i * 1000),
        queue: i % 2 === 0 ? 'even' : 'odd',
        duration: 2,
      }),
    )
    await a().records.save(tasks)
    const first = await b().records.list({ funcName: 'lister', page: 1, perPage: 5 })
    expect(first.total).toBe(12)
    expect(first.items.map((t) => t.record.task_id)).toEqual(
      tasks
        .slice(7)
        .reverse()
        .map((t) => t.record.task_id),
    )
    const last = await b().records.list({ funcName: 'lister', page: 3, perPage: 5 })
    expect(last.items).toHaveLength(2)
    const failed = await b().records.list({
      funcName: 'lister',
      status: 'failed',
      page: 1,
      perPage: 50,
    })
    expect(failed.total).toBe(4)
    const evenRecent = await b().records.list({
      funcName: 'lister',
      queue: 'even',
      since: T0 + 6000,
      page: 1,
      perPage: 50,
    })
    expect(evenRecent.items.map((t) => t.record.created_at)).toEqual(
      [10, 8, 6].map((i) => tasks[i]!.record.created_at),
    )
    await expect(b().records.list({ page: 0, perPage: 5 })).rejects.toThrow(TaskValidationError)
    await expect(b().records.list({ page: 1, perPage: 501 })).rejects.toThrow(TaskValidationError)
    const groups = (await b().records.aggregate()).filter((g) => g.func_name === 'lister')
    const success = groups.find((g) => g.status === 'success')
    expect(success?.count).toBe(8)
    expect(success?.total_duration).toBe(16)
  })

  test('retention deletes old terminal records only, never pending or running', async () => {
    const old = T0 - 10 * 86_400_000
    const tasks = [
      makeTask({ func_name: 'ret', created: old, status: 'pending' }),
      makeTask({ func_name: 'ret', created: old, status: 'running', start_time: iso(old) }),
      makeTask({ func_name: 'ret', created: old, status: 'success', end_time: iso(old) }),
      makeTask({ func_name: 'ret', created: old, status: 'cancelled', end_time: iso(old) }),
      makeTask({ func_name: 'ret', created: old, status: 'failed', end_time: iso(T0) }),
    ]
    await a().records.save(tasks)
    await expect(a().records.deleteTerminalBefore(Number.NaN)).rejects.toThrow(TaskValidationError)
    const deleted = await b().records.deleteTerminalBefore(T0 - 86_400_000)
    expect(deleted).toBeGreaterThanOrEqual(2)
    const left = await a().records.list({ funcName: 'ret', page: 1, perPage: 50 })
    expect(left.items.map((t) => t.record.status).sort()).toEqual(['failed', 'pending', 'running'])
  })
}
