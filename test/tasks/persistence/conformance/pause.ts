/**
 * Operator pauses across instances: a queue or schedule paused through one manager is obeyed
 * by another manager on the same store (told through the change feed, well before the next
 * maintenance round), resume lets the waiting tasks go, and a restart keeps the pause.
 */
import { randomUUID } from 'node:crypto'
import { expect } from 'vitest'
import { TaskManager } from '../../../../src/tasks/index.js'
import type { DurableTaskStore } from '../../../../src/tasks/stores/ports.js'
import { quietLogger } from '../../../helpers/logger.js'
import { until } from '../../../helpers/wait.js'
import type { SuiteContext } from './context.js'

/** A few seconds: a pause is applied within one, but CI machines stall. */
const DEADLINE_MS = 5000

/** The pause suite; `open` gives a new store instance for a manager (which closes it). */
export function pauseSuite({ test }: SuiteContext, open: () => DurableTaskStore): void {
  test('a queue paused on one manager stops another from starting its tasks; resume lets them go', async () => {
    // Each run its own queue name: the namespace keeps queue configs between tests.
    const queue = `pq-${randomUUID().slice(0, 8)}`
    const worker = new TaskManager({ store: open(), logger: quietLogger, queues: { [queue]: {} } })
    const operator = new TaskManager({
      store: open(),
      logger: quietLogger,
      queues: { [queue]: {} },
    })
    const job = worker.task({ name: `${queue}-job`, persist: true, queue }, () => 'done')
    try {
      await worker.startup()
      await operator.startup()
      expect((await operator.pauseQueue(queue)).paused).toBe(true)
      await until(() => stats(worker, queue)?.paused === true, DEADLINE_MS)
      const id = await worker.addTask(job, [])
      // Accepted and stored, but not started: an unpaused queue would have started it at once.
      expect(worker.localTask(id)?.status).toBe('pending')
      expect(stats(worker, queue)).toMatchObject({ pending: 1, running: 0 })
      expect((await operator.getTask(id))?.status).toBe('pending')

      expect((await operator.resumeQueue(queue)).paused).toBe(false)
      // Either manager may start it now: the operator's queue is resumed first, and it may
      // claim the stored task before the worker hears of the resume. The store says who ran it.
      await until(async () => (await operator.getTask(id))?.status === 'success', DEADLINE_MS)
      await until(() => stats(worker, queue)?.paused === false, DEADLINE_MS)
    } finally {
      await worker.shutdown()
      await operator.shutdown()
    }
  })

  test('a restart keeps a queue paused; a change of its limits keeps the pause', async () => {
    const queue = `pr-${randomUUID().slice(0, 8)}`
    const first = new TaskManager({ store: open(), logger: quietLogger, queues: { [queue]: {} } })
    await first.startup()
    await first.pauseQueue(queue)
    await first.updateQueueConfig(queue, { concurrency: 3 })
    expect(stats(first, queue)).toMatchObject({ paused: true, concurrency: 3 })
    await first.shutdown()

    const again = new TaskManager({ store: open(), logger: quietLogger, queues: { [queue]: {} } })
    const job = again.task({ name: `${queue}-job`, persist: true, queue }, () => 'done')
    try {
      await again.startup()
      expect(stats(again, queue)).toMatchObject({ paused: true, concurrency: 3 })
      const id = await again.addTask(job, [])
      expect(again.localTask(id)?.status).toBe('pending')
      await again.resumeQueue(queue)
      await until(() => again.localTask(id)?.status === 'success', DEADLINE_MS)
    } finally {
      await again.shutdown()
    }
  })

  test('a schedule paused on one manager shows paused on another and after a restart', async () => {
    const name = `ps-${randomUUID().slice(0, 8)}`
    const make = () => {
      const manager = new TaskManager({ store: open(), logger: quietLogger })
      manager.schedule({ cron: '0 3 * * *' }, () => undefined, { name })
      return manager
    }
    const one = make()
    const two = make()
    try {
      await one.startup()
      await two.startup()
      expect((await one.pauseSchedule(name)).paused).toBe(true)
      await until(() => two.listSchedules()[0]?.paused === true, DEADLINE_MS)
      // Run now works while paused, on any instance, as a manual record.
      const id = await two.runSchedule(name)
      await until(async () => (await one.getTask(id))?.status === 'success', DEADLINE_MS)
      expect((await one.getTask(id))?.source).toBe('manual')
    } finally {
      await one.shutdown()
      await two.shutdown()
    }
    const three = make()
    try {
      await three.startup()
      expect(three.listSchedules()[0]?.paused).toBe(true)
      await three.resumeSchedule(name)
      expect(three.listSchedules()[0]?.paused).toBe(false)
    } finally {
      await three.shutdown()
    }
  })
}

function stats(manager: TaskManager, queue: string) {
  return manager.queueStats().find((entry) => entry.name === queue)
}
