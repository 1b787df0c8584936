/**
 * Smaller manager options and exports: logFile, requeuePending's need for a durable store, the
 * exported ScheduledEntry.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import {
  ScheduledEntry,
  OneOffNextRunError,
  PeriodicTrigger,
  TaskManager,
  TaskValidationError,
} from '../../src/tasks/index.js'
import { quietLogger, waitForStatus } from './helpers.js'

const dir = mkdtempSync(join(tmpdir(), 'sy-manager-options-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe('logFile', () => {
  it('writes task log lines to the file (the FileObserver shorthand)', async () => {
    const path = join(dir, 'tasks.log')
    const manager = new TaskManager({ logFile: path })
    const job = manager.task({ name: 'noisy' }, async () => {
      const { taskLog } = await import('../../src/tasks/index.js')
      taskLog('hello from the task')
    })
    await manager.startup()
    const id = await manager.addTask(job, [])
    await waitForStatus(manager, id)
    await manager.shutdown()
    expect(readFileSync(path, 'utf8')).toMatch(
      new RegExp(`^\\[${id}\\] \\[noisy\\] \\S+ hello from the task$`, 'm'),
    )
  })

  it('takes the observer options too, and refuses anything else', async () => {
    const path = join(dir, 'lifecycle.log')
    const manager = new TaskManager({ logFile: { path, lifecycle: true } })
    const job = manager.task({ name: 'quiet' }, () => undefined)
    await manager.startup()
    await waitForStatus(manager, await manager.addTask(job, []))
    await manager.shutdown()
    expect(readFileSync(path, 'utf8')).toContain('success')
    expect(() => new TaskManager({ logFile: 42 as never })).toThrow(TaskValidationError)
  })
})

describe('requeuePending', () => {
  it('is a startup error with a store that cannot requeue', () => {
    expect(() => new TaskManager({ requeuePending: true, logger: quietLogger })).toThrow(
      /requeuePending needs a durable store/,
    )
    expect(
      () =>
        new TaskManager({ requeuePending: true, store: join(dir, 'ok.db'), logger: quietLogger }),
    ).not.toThrow()
  })
})

describe('ScheduledEntry', () => {
  it('is exported: periodic entries have a next run, one-off entries refuse it', () => {
    const periodic = new ScheduledEntry('tick', new PeriodicTrigger({ every: 60 }), false)
    expect(periodic.recurring).toBe(true)
    expect(periodic.nextRun(0)).toBe(60_000)
    const once = new ScheduledEntry('once', null, true)
    expect(once.recurring).toBe(false)
    expect(() => once.nextRun(0)).toThrow(OneOffNextRunError)
  })
})
