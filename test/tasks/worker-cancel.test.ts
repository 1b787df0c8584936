/**
 * Cancelling a running thread or process task whose code never returns: after the grace period
 * the worker is terminated and a fresh one serves the next task. And the environment a process
 * worker gets (`workerEnv`).
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { sqliteStore, TaskManager } from '../../src/tasks/index.js'
import { envLacks, fib, spin } from './fixtures/worker-tasks.js'
import { quietLogger, until, waitForStatus } from './helpers.js'

const fixture = new URL('./fixtures/worker-tasks.ts', import.meta.url).href

describe.each(['thread', 'process'] as const)('a cancelled %s task that never returns', (kind) => {
  const manager = new TaskManager({
    maxSyncThreads: 1,
    maxProcessWorkers: 1,
    processShutdownTimeout: 0.2,
    cancelGracePeriod: 0.2,
  })
  const on = { executor: kind, module: fixture }
  const spinner = manager.task({ ...on, name: 'spin' }, spin)
  const fibTask = manager.task({ ...on, name: 'fib' }, fib)
  afterAll(() => manager.shutdown())

  it('loses its worker after the grace period; the next task runs on a fresh one', async () => {
    const stuck = await manager.addTask(spinner, [120_000])
    await until(() => manager.localTask(stuck)!.status === 'running')
    await manager.cancel(stuck)
    expect((await waitForStatus(manager, stuck)).status).toBe('cancelled')
    const next = await manager.addTask(fibTask, [10])
    expect((await waitForStatus(manager, next, undefined, 20_000)).status).toBe('success')
  }, 30_000)
})

describe('a thread task cancelled from another instance', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sy-worker-cancel-'))
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  it('loses its worker after the grace period; the record is cancelled', async () => {
    const path = join(dir, 'shared.db')
    const runner = new TaskManager({
      store: sqliteStore(path),
      logger: quietLogger,
      maxSyncThreads: 1,
      cancelGracePeriod: 0.2,
    })
    const other = new TaskManager({ store: sqliteStore(path), logger: quietLogger })
    const on = { executor: 'thread' as const, module: fixture, persist: true }
    const spinner = runner.task({ ...on, name: 'spin' }, spin)
    const fibTask = runner.task({ ...on, name: 'fib' }, fib)
    try {
      await Promise.all([runner.startup(), other.startup()])
      const stuck = await runner.addTask(spinner, [120_000])
      await until(async () => (await other.getTask(stuck))?.status === 'running')
      await other.cancel(stuck)
      expect((await waitForStatus(runner, stuck)).status).toBe('cancelled')
      const next = await runner.addTask(fibTask, [10])
      expect((await waitForStatus(runner, next, undefined, 20_000)).status).toBe('success')
      await until(async () => (await other.getTask(stuck))?.status === 'cancelled')
    } finally {
      await Promise.all([other.shutdown(), runner.shutdown()])
    }
  }, 30_000)
})

describe('workerEnv', () => {
  const name = 'SY_TEST_WORKER_SECRET'
  process.env[name] = 'hunter2'
  afterAll(() => {
    Reflect.deleteProperty(process.env, name)
  })
  const on = { executor: 'process' as const, module: fixture, name: 'envLacks' }

  it('passes every variable by default', async () => {
    const manager = new TaskManager({ maxProcessWorkers: 1 })
    const task = manager.task(on, envLacks)
    const id = await manager.addTask(task, [name])
    expect((await waitForStatus(manager, id)).error).toBe(`Error: ${name} reached the worker`)
    await manager.shutdown()
  })

  it('passes only the listed variables', async () => {
    const manager = new TaskManager({ maxProcessWorkers: 1, workerEnv: ['PATH', 'HOME'] })
    const task = manager.task(on, envLacks)
    const id = await manager.addTask(task, [name])
    expect((await waitForStatus(manager, id)).status).toBe('success')
    await manager.shutdown()
  })

  it('refuses anything but a list of variable names', () => {
    expect(() => new TaskManager({ workerEnv: 'PATH' as never })).toThrow(/workerEnv/)
    expect(() => new TaskManager({ workerEnv: [''] })).toThrow(/workerEnv/)
    expect(() => new TaskManager({ cancelGracePeriod: -1 })).toThrow(/cancelGracePeriod/)
  })
})
