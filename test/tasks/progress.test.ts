/**
 * `taskProgress`: the record's `progress` and `progress_message` from async, thread and process
 * tasks, validation, coalesced notifications (a tight loop does not flood the stream), and the
 * task admin API and stream returning them.
 */
import { afterAll, describe, expect, it } from 'vitest'
import {
  TaskManager,
  TaskValidationError,
  taskProgress,
  type TaskRecord,
} from '../../src/tasks/index.js'
import { reportProgress } from './fixtures/worker-tasks.js'
import { deferred, quietLogger, waitForStatus } from './helpers.js'
import { adminApp, listen, openStream } from './admin/helpers.js'

const fixture = new URL('./fixtures/worker-tasks.ts', import.meta.url).href

describe('taskProgress', () => {
  it('does nothing outside a task and refuses fractions outside 0..1', () => {
    expect(() => taskProgress(0.5, 'outside')).not.toThrow()
    for (const bad of [-0.1, 1.01, Number.NaN, Infinity, '0.5' as unknown as number]) {
      expect(() => taskProgress(bad)).toThrow(TaskValidationError)
    }
    expect(() => taskProgress(0.5, 42 as unknown as string)).toThrow(TaskValidationError)
  })

  it('sets progress on an async task and coalesces a tight loop into a few notifications', async () => {
    const manager = new TaskManager({ logger: quietLogger })
    const gate = deferred()
    const task = manager.task({ name: 'loop' }, async () => {
      for (let i = 1; i <= 1000; i++) taskProgress(i / 1000, `item ${i}`)
      await gate.promise
    })
    const notified: string[] = []
    manager.subscribeLogs((id) => notified.push(id))
    const id = await manager.addTask(task, [])
    await waitForStatus(manager, id, ['running'])
    await expect.poll(() => manager.localTask(id)?.progress).toBe(1)
    expect(manager.localTask(id)?.progress_message).toBe('item 1000')
    // The first value at once, the last when the window ends: not one per call.
    await expect.poll(() => notified.length).toBe(2)
    gate.resolve()
    const done = await waitForStatus(manager, id)
    expect(done).toMatchObject({ status: 'success', progress: 1, progress_message: 'item 1000' })
    await manager.shutdown()
  })

  it('cuts long messages and ignores progress after the task finished', async () => {
    const manager = new TaskManager({ logger: quietLogger })
    const late = deferred()
    const task = manager.task({ name: 'long' }, () => {
      taskProgress(0.25, 'x'.repeat(5000))
      // Still inside the task's context, but after it ended: must not change the record.
      setTimeout(() => {
        taskProgress(0.9, 'late')
        late.resolve()
      }, 20)
    })
    const id = await manager.addTask(task, [])
    const record = await waitForStatus(manager, id)
    expect(record.progress).toBe(0.25)
    expect(record.progress_message).toHaveLength(500)
    await late.promise
    expect(manager.localTask(id)).toMatchObject({ progress: 0.25, status: 'success' })
    await manager.shutdown()
  })

  for (const executor of ['thread', 'process'] as const) {
    it(`reaches the record from the ${executor} executor`, async () => {
      const manager = new TaskManager({ logger: quietLogger })
      const task = manager.task(
        { name: 'reportProgress', executor, module: fixture },
        reportProgress,
      )
      const id = await manager.addTask(task, [4])
      const record = await waitForStatus(manager, id, undefined, 20_000)
      expect(record).toMatchObject({
        status: 'success',
        progress: 1,
        progress_message: 'step 4 of 4',
      })
      await manager.shutdown()
    })
  }
})

describe('progress in the task admin', () => {
  const apps: { close(): Promise<unknown> }[] = []
  afterAll(() => Promise.all(apps.map((app) => app.close())))

  it('is returned by the API and sent on the stream as ordinary task events', async () => {
    const { app, manager } = await adminApp()
    apps.push(app)
    const base = await listen(app)
    const stream = await openStream(`${base}/tasks/dashboard/stream`)
    const gate = deferred()
    const task = manager.task({ name: 'halfway' }, async () => {
      taskProgress(0.5, 'half')
      await gate.promise
    })
    const id = await manager.addTask(task, [])
    await expect.poll(() => manager.localTask(id)?.progress).toBe(0.5)
    const detail = (await app.inject(`/tasks/${id}`)).json<TaskRecord>()
    expect(detail).toMatchObject({ progress: 0.5, progress_message: 'half', status: 'running' })
    await expect
      .poll(() =>
        stream.frames.some((frame) => (frame.data as TaskRecord).progress_message === 'half'),
      )
      .toBe(true)
    const row = await app.inject(`/tasks/dashboard/runs/row?key=${id}`)
    expect(row.body).toContain('<progress max="100" value="50"')
    expect(row.body).toContain('50% · half')
    gate.resolve()
    await waitForStatus(manager, id)
    stream.close()
  })
})
