/**
 * Cancel from any instance: a request recorded through one store instance is read by another
 * from the change feed; a manager on one instance cancels a task running on another.
 */
import { expect } from 'vitest'
import {
  getTaskContext,
  TaskManager,
  TaskNotCancellableError,
  TaskNotFoundError,
} from '../../../../src/tasks/index.js'
import { quietLogger } from '../../../helpers/logger.js'
import { until } from '../../../helpers/wait.js'
import { makeTask } from '../helpers.js'
import type { DurableTaskStore } from '../../../../src/tasks/stores/ports.js'
import type { SuiteContext } from './context.js'

/** A few seconds: the request is acted on within one, but CI machines stall. */
const DEADLINE_MS = 5000

/** The cancel suite; `open` gives a new store instance for a manager (which closes it). */
export function cancelSuite({ a, b, test }: SuiteContext, open: () => DurableTaskStore): void {
  test('records a request only for a pending or running record', async () => {
    const running = makeTask({ status: 'running', start_time: '2026-11-21T12:00:01+00:00' })
    const done = makeTask({ status: 'success', end_time: '2026-11-21T12:00:02+00:00' })
    await a().records.save([running, done])
    const start = await b().changes.read(null, 100)
    expect(await a().changes.requestCancel(running.record.task_id)).toBe(true)
    expect(await a().changes.requestCancel(done.record.task_id)).toBe(false)
    expect(await a().changes.requestCancel('no-such-task')).toBe(false)
    const read = await b().changes.read(start.position, 100)
    const requests = read.changes.filter((change) => change.cancel === true)
    expect(requests.map((change) => change.task_ids)).toEqual([[running.record.task_id]])
    expect(requests[0]?.origin).toBe(a().changes.origin)
    // A request is not a write: the record is unchanged.
    expect((await b().records.get(running.record.task_id))?.record.status).toBe('running')
    running.record.status = 'cancelled'
    running.record.end_time = '2026-11-21T12:00:03+00:00'
    await a().records.save([running])
  })

  test('a manager cancels a task running on another manager', async () => {
    const runner = new TaskManager({
      store: open(),
      logger: quietLogger,
      queues: { one: { concurrency: 1 } },
    })
    const other = new TaskManager({ store: open(), logger: quietLogger })
    let aborted = false
    const long = runner.task(
      { name: 'cancel-anywhere-long', persist: true, queue: 'one' },
      async () => {
        const signal = getTaskContext()!.signal
        await new Promise<void>((resolve) => {
          signal.addEventListener('abort', () => {
            aborted = true
            resolve()
          })
        })
      },
    )
    const quick = runner.task({ name: 'cancel-anywhere-quick', persist: true }, () => 1)
    try {
      await runner.startup()
      await other.startup()
      const id = await runner.addTask(long, [])
      // Waits behind the first in the one-slot queue.
      const waiting = await runner.addTask(long, [])
      await until(async () => (await other.getTask(id))?.status === 'running', DEADLINE_MS)
      await until(async () => (await other.getTask(waiting))?.status === 'pending', DEADLINE_MS)
      expect((await other.cancel(waiting)).status).toBe('pending')
      await until(() => runner.localTask(waiting)?.status === 'cancelled', DEADLINE_MS)
      expect(runner.localTask(waiting)?.start_time).toBeNull()
      const answer = await other.cancel(id)
      expect(answer.task_id).toBe(id)
      expect(['running', 'cancelled']).toContain(answer.status)
      await until(() => runner.localTask(id)?.status === 'cancelled', DEADLINE_MS)
      expect(aborted).toBe(true)
      await until(async () => (await other.getTask(id))?.status === 'cancelled', DEADLINE_MS)
      // Finished: the same conflict as on the instance that ran it, and nothing changes.
      await expect(other.cancel(id)).rejects.toThrow(TaskNotCancellableError)
      const finished = await runner.addTask(quick, [])
      await until(async () => (await other.getTask(finished))?.status === 'success', DEADLINE_MS)
      await expect(other.cancel(finished)).rejects.toThrow(TaskNotCancellableError)
      expect((await other.getTask(finished))?.status).toBe('success')
      await expect(other.cancel('no-such-task')).rejects.toThrow(TaskNotFoundError)
    } finally {
      await other.shutdown()
      await runner.shutdown()
    }
  })
}
