/** Conformance of the admin-data port (queue configs, audit) and the session port. */
import { expect } from 'vitest'
import { TaskValidationError } from '../../../../src/tasks/errors.js'
import { T0, type SuiteContext } from './context.js'

/** Registers the admin-data suite. */
export function adminDataSuite({ a, b, test }: SuiteContext): void {
  test('queue configs: replace by name; bad values change nothing', async () => {
    await a().admin.putQueueConfig({ name: 'emails', concurrency: 2, max_size: null })
    await b().admin.putQueueConfig({ name: 'emails', concurrency: 3, max_size: 10 })
    await expect(
      a().admin.putQueueConfig({ name: 'x', concurrency: -1, max_size: null }),
    ).rejects.toThrow(TaskValidationError)
    expect(await a().admin.queueConfigs()).toEqual([
      { name: 'emails', concurrency: 3, max_size: 10, paused: false },
    ])
  })

  test('queue configs: a pause is stored with the config and read by every instance', async () => {
    await a().admin.putQueueConfig({ name: 'mail', concurrency: 2, max_size: null, paused: true })
    await a().admin.putQueueConfig({ name: 'sms', concurrency: null, max_size: null })
    const ours = async () =>
      (await b().admin.queueConfigs()).filter((c) => c.name === 'mail' || c.name === 'sms')
    expect(await ours()).toEqual([
      { name: 'mail', concurrency: 2, max_size: null, paused: true },
      { name: 'sms', concurrency: null, max_size: null, paused: false },
    ])
    await b().admin.putQueueConfig({ name: 'mail', concurrency: 2, max_size: null, paused: false })
    expect((await ours())[0]).toEqual({
      name: 'mail',
      concurrency: 2,
      max_size: null,
      paused: false,
    })
  })

  test('schedule controls: replace by name, read by every instance', async () => {
    expect(await a().admin.scheduleControls()).toEqual([])
    await a().admin.putScheduleControl({ name: 'nightly', paused: true, updated_ms: T0 })
    await a().admin.putScheduleControl({ name: 'hourly', paused: false, updated_ms: T0 + 1 })
    await b().admin.putScheduleControl({ name: 'nightly', paused: false, updated_ms: T0 + 2 })
    expect(await a().admin.scheduleControls()).toEqual([
      { name: 'hourly', paused: false, updated_ms: T0 + 1 },
      { name: 'nightly', paused: false, updated_ms: T0 + 2 },
    ])
  })

  test('an announcement of controls reaches the other instance’s feed, naming no task', async () => {
    const start = await b().changes.read(null, 100)
    await a().changes.announceControls()
    const { changes } = await b().changes.read(start.position, 100)
    const announced = changes.filter((change) => change.controls === true)
    expect(announced).toHaveLength(1)
    expect(announced[0]).toMatchObject({ origin: a().changes.origin, task_ids: [] })
    expect(announced[0]?.cancel).toBeUndefined()
  })

  test('audit: increasing ids, newest first, paged', async () => {
    const first = await a().admin.appendAudit({
      timestamp: T0,
      action: 'retry',
      task_id: 't1',
      actor: 'anonymous',
      detail: { new_task_id: 't2' },
    })
    const second = await b().admin.appendAudit({
      timestamp: T0 + 1,
      action: 'history_delete',
      task_id: null,
      actor: 'ada',
      detail: { deleted: 3 },
    })
    expect(second.id).toBeGreaterThan(first.id)
    const page = await a().admin.listAudit(1, 1)
    expect(page.total).toBe(2)
    expect(page.items).toEqual([second])
    expect((await a().admin.listAudit(2, 1)).items).toEqual([first])
  })
}

/** Registers the session suite. */
export function sessionsSuite({ a, b, test }: SuiteContext): void {
  test('a revocation holds on every instance until it expires', async () => {
    await a().sessions.revoke('tok', T0 + 1000)
    expect(await b().sessions.isRevoked('tok', T0)).toBe(true)
    expect(await b().sessions.isRevoked('tok', T0 + 1000)).toBe(false)
    expect(await b().sessions.isRevoked('other', T0)).toBe(false)
  })
}
