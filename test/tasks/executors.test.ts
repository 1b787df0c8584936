import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { TaskArgumentError, TaskManager } from '../../src/tasks/index.js'
import {
  crash,
  crashOnce,
  echo,
  explodeInWorker,
  fib,
  fixtureManager,
  inlineDouble,
  sleepFor,
  whoami,
} from './fixtures/worker-tasks.js'
import { until, waitForStatus } from './helpers.js'

/** The context a worker task logged as `context {json}`. */
function workerContext(line: string): Record<string, unknown> {
  const json = /\[debug\] context (.*)$/.exec(line)?.[1]
  if (json === undefined) throw new Error(`not a context line: ${line}`)
  return JSON.parse(json) as Record<string, unknown>
}

const fixture = new URL('./fixtures/worker-tasks.ts', import.meta.url).href
const dir = mkdtempSync(join(tmpdir(), 'switchyard-tasks-executors-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe('thread executor', () => {
  const manager = new TaskManager({ maxSyncThreads: 1 })
  const on = { executor: 'thread' as const, module: fixture }
  const fibTask = manager.task({ ...on, name: 'fib' }, fib)
  const who = manager.task({ ...on, name: 'whoami' }, whoami)
  const explode = manager.task({ ...on, name: 'explodeInWorker' }, explodeInWorker)
  const sleeper = manager.task({ ...on, name: 'sleepFor' }, sleepFor)
  afterAll(() => Promise.all([manager.shutdown(), fixtureManager.shutdown()]))

  it('runs the function in a worker thread and records the result', async () => {
    const id = await manager.addTask(fibTask, [20])
    const record = await waitForStatus(manager, id)
    expect(record).toMatchObject({ status: 'success', executor: 'thread', func_name: 'fib' })
  })

  it('gives task code its context and forwards taskLog lines to the record', async () => {
    const id = await manager.addTask(who, [], { tags: { region: 'eu' } })
    const record = await waitForStatus(manager, id)
    expect(record.status).toBe('success')
    expect(record.logs).toHaveLength(2)
    expect(record.logs[0]).toMatch(/^\S+ \[warning\] inside worker$/)
    expect(workerContext(record.logs[1]!)).toEqual({
      task_id: id,
      func_name: 'whoami',
      attempt: 1,
      tags: { region: 'eu' },
      main: false,
      pid: process.pid,
    })
  })

  it('keeps the worker stack trace of a failure', async () => {
    const id = await manager.addTask(explode, ['bad pixel'])
    const record = await waitForStatus(manager, id)
    expect(record.status).toBe('failed')
    expect(record.error).toBe('RangeError: bad pixel')
    expect(record.stacktrace).toContain('explodeInWorker')
    expect(record.stacktrace).toContain('worker-tasks.ts')
  })

  it('finds tasks registered inline when the worker imports the module', async () => {
    const id = await fixtureManager.addTask(inlineDouble, [21])
    expect((await waitForStatus(fixtureManager, id)).status).toBe('success')
  })

  it('cancels the wait for a running thread task; the thread finishes and is reused', async () => {
    const id = await manager.addTask(sleeper, [300])
    await until(() => manager.localTask(id)!.status === 'running')
    await manager.cancel(id)
    expect((await waitForStatus(manager, id)).status).toBe('cancelled')
    // The single thread is busy until the call ends; the next task still runs afterwards.
    const next = await manager.addTask(fibTask, [5])
    expect((await waitForStatus(manager, next)).status).toBe('success')
  })

  it('a thread task cancelled while it waits for a free thread never runs', async () => {
    const busy = await manager.addTask(sleeper, [200])
    await until(() => manager.localTask(busy)!.status === 'running')
    const waiting = await manager.addTask(who, [])
    expect(manager.localTask(waiting)!.status).toBe('pending')
    expect((await manager.cancel(waiting)).status).toBe('cancelled')
    expect((await waitForStatus(manager, busy)).status).toBe('success')
    const after = await manager.addTask(fibTask, [3])
    await waitForStatus(manager, after)
    expect(manager.localTask(waiting)).toMatchObject({
      status: 'cancelled',
      start_time: null,
      logs: [],
    })
  })

  it('refuses arguments that cannot be cloned to a thread', async () => {
    const before = (await manager.listTasks()).total
    await expect(manager.addTask(fibTask, [(() => 1) as never])).rejects.toThrow(TaskArgumentError)
    expect((await manager.listTasks()).total).toBe(before)
  })
})

describe('process executor', () => {
  const manager = new TaskManager({ maxProcessWorkers: 1, processShutdownTimeout: 0.2 })
  const on = { executor: 'process' as const, module: fixture }
  const who = manager.task({ ...on, name: 'whoami' }, whoami)
  const explode = manager.task({ ...on, name: 'explodeInWorker' }, explodeInWorker)
  const crasher = manager.task({ ...on, name: 'crash' }, crash)
  const flaky = manager.task({ ...on, name: 'crashOnce', retries: 1 }, crashOnce)
  const echoTask = manager.task({ ...on, name: 'echo' }, echo)
  const sleeper = manager.task({ ...on, name: 'sleepFor' }, sleepFor)

  it('runs the task in a child process with context and forwarded logs', async () => {
    const id = await manager.addTask(who, [], { tags: { region: 'eu' } })
    const record = await waitForStatus(manager, id)
    expect(record).toMatchObject({ status: 'success', executor: 'process' })
    expect(record.logs[0]).toMatch(/\[warning\] inside worker$/)
    const context = workerContext(record.logs[1]!)
    expect(context).toMatchObject({
      task_id: id,
      func_name: 'whoami',
      attempt: 1,
      tags: { region: 'eu' },
    })
    expect(context.pid).not.toBe(process.pid)
  })

  it('rejects arguments that cannot be serialised at addTask, before anything is stored', async () => {
    const before = (await manager.listTasks()).total
    await expect(manager.addTask(echoTask, [() => 'fn'])).rejects.toThrow(TaskArgumentError)
    await expect(manager.addTask(echoTask, [Symbol('s')])).rejects.toThrow(TaskArgumentError)
    const error = await manager.addTask(echoTask, [{ nested: () => 1 }]).catch((e: unknown) => e)
    expect((error as TaskArgumentError).code).toBe('TASK_ARGUMENT_ERROR')
    expect((await manager.listTasks()).total).toBe(before)
  })

  it('carries structured-clone values (Map, Date, BigInt) to the child', async () => {
    const id = await manager.addTask(echoTask, [
      { when: new Date(0), big: 10n, map: new Map([[1, 2]]) },
    ])
    expect((await waitForStatus(manager, id)).status).toBe('success')
  })

  it('keeps the stack trace from the worker', async () => {
    const id = await manager.addTask(explode, ['from child'])
    const record = await waitForStatus(manager, id)
    expect(record.status).toBe('failed')
    expect(record.error).toBe('RangeError: from child')
    expect(record.stacktrace).toContain('explodeInWorker')
    expect(record.stacktrace).toContain('worker-tasks.ts')
  })

  it('fails the attempt when the worker crashes and replaces the worker', async () => {
    const id = await manager.addTask(crasher, [])
    const record = await waitForStatus(manager, id)
    expect(record.status).toBe('failed')
    expect(record.error).toMatch(
      /^WorkerCrashedError: The process worker running this task exited \(exit code 3\)/,
    )
    const next = await manager.addTask(who, [])
    expect((await waitForStatus(manager, next)).status).toBe('success')
  })

  it('retries after a crash on a fresh worker', async () => {
    const id = await manager.addTask(flaky, [join(dir, 'crash-once.marker')])
    const record = await waitForStatus(manager, id)
    expect(record.status).toBe('success')
    expect(record.retries_used).toBe(1)
    expect(record.logs.some((line) => line.includes('WorkerCrashedError'))).toBe(true)
  })

  it('at shutdown waits processShutdownTimeout, then kills the child and marks the task interrupted', async () => {
    const id = await manager.addTask(sleeper, [60_000])
    await until(() => manager.localTask(id)!.status === 'running')
    await manager.shutdown()
    expect(manager.localTask(id)!.status).toBe('interrupted')
  })
})
