/**
 * Task timeouts: an attempt past its `timeout` fails with TASK_TIMEOUT (retries apply), async
 * code sees its signal aborted with a `timeout` reason, code that ignores the signal is abandoned
 * (its slot freed, its late outcome discarded and logged), thread and process workers are
 * terminated after the grace period. Per call over registration over the manager's default.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import {
  getTaskContext,
  sqliteStore,
  TaskAbort,
  TaskManager,
  TaskValidationError,
} from '../../src/tasks/index.js'
import { recordingLogger } from '../helpers/logger.js'
import { fib, spin } from './fixtures/worker-tasks.js'
import { deferred, fakeClock, quietLogger, until, waitForStatus } from './helpers.js'

const fixture = new URL('./fixtures/worker-tasks.ts', import.meta.url).href

/** Resolves when the running task's signal aborts, with the abort reason. */
function abortOf(signal: AbortSignal): Promise<unknown> {
  return new Promise((resolve) => {
    signal.addEventListener('abort', () => resolve(signal.reason), { once: true })
  })
}

describe('an async task past its timeout', () => {
  it('sees its signal aborted, fails with TASK_TIMEOUT, and is retried with the backoff', async () => {
    const clock = fakeClock()
    const logger = recordingLogger()
    const manager = new TaskManager({ clock, logger })
    const reasons: unknown[] = []
    const attempts: number[] = []
    const task = manager.task(
      { name: 'slow', retries: 2, delay: 1, backoff: 3, timeout: 0.05 },
      async () => {
        const context = getTaskContext()!
        attempts.push(context.attempt)
        const reason = await abortOf(context.signal)
        reasons.push(reason)
        throw reason
      },
    )
    const id = await manager.addTask(task, [])
    const record = await waitForStatus(manager, id)
    expect(record.status).toBe('failed')
    expect(record.retries_used).toBe(2)
    expect(record.error).toContain('TaskTimeoutError')
    expect(record.error).toContain('TASK_TIMEOUT')
    expect(record.error).toContain('timed out after 0.05 s')
    expect(attempts).toEqual([1, 2, 3])
    // Each attempt gets a fresh signal, aborted by its own deadline.
    await until(() => reasons.length === 3)
    for (const reason of reasons) {
      expect(reason).toBeInstanceOf(TaskAbort)
      expect((reason as TaskAbort).kind).toBe('timeout')
    }
    // Backoff: delay · backoff^(n-1) seconds before retry n.
    expect(clock.sleeps).toEqual([1000, 3000])
    // Code that stopped as asked (threw the abort reason) is not warned about.
    expect(logger.messages('warn')).toEqual([])
    expect(record.logs.filter((line) => line.startsWith('--- retry'))).toEqual([
      '--- retry 1 ---',
      '--- retry 2 ---',
    ])
    await manager.shutdown()
  })

  it('succeeds on a retry that finishes in time', async () => {
    const manager = new TaskManager({ logger: quietLogger })
    const task = manager.task({ name: 'second-time', retries: 1, timeout: 0.05 }, async () => {
      const context = getTaskContext()!
      if (context.attempt === 1) await abortOf(context.signal)
      return 'done'
    })
    const id = await manager.addTask(task, [])
    const record = await waitForStatus(manager, id)
    expect(record.status).toBe('success')
    expect(record.retries_used).toBe(1)
    expect(record.error).toBeNull()
    await manager.shutdown()
  })

  it('that ignores the signal is abandoned: the slot is freed and its late result discarded', async () => {
    const logger = recordingLogger()
    const manager = new TaskManager({ logger, queues: { single: { concurrency: 1 } } })
    const release = deferred<string>()
    let lateSignal: AbortSignal | null = null
    const stubborn = manager.task({ name: 'stubborn', queue: 'single', timeout: 0.05 }, () => {
      lateSignal = getTaskContext()!.signal
      return release.promise
    })
    const quick = manager.task({ name: 'quick', queue: 'single' }, () => 'ok')
    const stuck = await manager.addTask(stubborn, [])
    const next = await manager.addTask(quick, [])
    // The second task starts on the concurrency-1 queue although the first never returned.
    expect((await waitForStatus(manager, next)).status).toBe('success')
    const failed = await waitForStatus(manager, stuck)
    expect(failed.status).toBe('failed')
    expect(failed.error).toContain('TASK_TIMEOUT')
    expect(lateSignal!.aborted).toBe(true)

    release.resolve('too late')
    await until(() => logger.messages('warn').some((m) => m.includes('discarded the late result')))
    const after = manager.localTask(stuck)!
    expect(after.status).toBe('failed')
    expect(after.error).toBe(failed.error)
    const warning = logger.lines.find((line) => line.msg?.includes('discarded the late result'))
    expect(warning?.fields.task_id).toBe(stuck)
    await manager.shutdown()
  })

  it('discards a late error too, without touching the record', async () => {
    const logger = recordingLogger()
    const manager = new TaskManager({ logger })
    const release = deferred<string>()
    const task = manager.task({ name: 'late-error', timeout: 0.05 }, () => release.promise)
    const id = await manager.addTask(task, [])
    const failed = await waitForStatus(manager, id)
    release.reject(new RangeError('boom'))
    await until(() => logger.messages('warn').some((m) => m.includes('discarded the late error')))
    expect(manager.localTask(id)!.error).toBe(failed.error)
    expect(manager.localTask(id)!.error).not.toContain('boom')
    await manager.shutdown()
  })

  it('is not touched when it ends in time', async () => {
    const manager = new TaskManager({ defaultTimeout: 5, logger: quietLogger })
    let signal: AbortSignal | null = null
    const task = manager.task({ name: 'fast' }, () => {
      signal = getTaskContext()!.signal
      return Promise.resolve('fast')
    })
    const id = await manager.addTask(task, [])
    const record = await waitForStatus(manager, id)
    expect(record.status).toBe('success')
    expect(record.error).toBeNull()
    expect(signal!.aborted).toBe(false)
    await manager.shutdown()
  })

  it('a cancel still cancels a task with a timeout', async () => {
    const manager = new TaskManager({ logger: quietLogger })
    let reason: unknown = null
    const task = manager.task({ name: 'cancel-me', timeout: 30 }, async () => {
      reason = await abortOf(getTaskContext()!.signal)
    })
    const id = await manager.addTask(task, [])
    await until(() => manager.localTask(id)!.status === 'running')
    await manager.cancel(id)
    expect((await waitForStatus(manager, id)).status).toBe('cancelled')
    await until(() => reason !== null)
    expect((reason as TaskAbort).kind).toBe('cancel')
    await manager.shutdown()
  })
})

describe('which timeout applies', () => {
  const hang = (): Promise<never> => new Promise<never>(() => undefined)

  it('the manager default, then the registration, then the addTask call', async () => {
    const manager = new TaskManager({ defaultTimeout: 0.05, logger: quietLogger })
    const plain = manager.task({ name: 'plain' }, hang)
    const own = manager.task({ name: 'own', timeout: 0.07 }, hang)
    const byDefault = await manager.addTask(plain, [])
    const byRegistration = await manager.addTask(own, [])
    const byCall = await manager.addTask(own, [], { timeout: 0.09 })
    expect((await waitForStatus(manager, byDefault)).error).toContain('after 0.05 s')
    expect((await waitForStatus(manager, byRegistration)).error).toContain('after 0.07 s')
    expect((await waitForStatus(manager, byCall)).error).toContain('after 0.09 s')
    await manager.shutdown()
  })

  it('none without any of them: the signal stays quiet', async () => {
    const manager = new TaskManager({ logger: quietLogger })
    const release = deferred<string>()
    let signal: AbortSignal | null = null
    const task = manager.task({ name: 'unbounded' }, () => {
      signal = getTaskContext()!.signal
      return release.promise
    })
    const id = await manager.addTask(task, [])
    await until(() => signal !== null)
    release.resolve('done')
    expect((await waitForStatus(manager, id)).status).toBe('success')
    expect(signal!.aborted).toBe(false)
    await manager.shutdown()
  })
})

describe('a schedule with a timeout', () => {
  it('registers its task with it, and refuses an invalid one without registering', async () => {
    const manager = new TaskManager({ logger: quietLogger })
    const handle = manager.schedule({ every: 60 }, () => undefined, { name: 'tick', timeout: 2 })
    expect(handle.definition.timeoutMs).toBe(2000)
    expect(() =>
      manager.schedule({ every: 60 }, () => undefined, { name: 'bad-tick', timeout: 0 }),
    ).toThrow(/timeout must be a finite number of seconds greater than 0/)
    expect(manager.listSchedules().map((schedule) => schedule.name)).toEqual(['tick'])
    await manager.shutdown()
  })
})

describe('invalid timeouts', () => {
  const bad: unknown[] = [0, -1, Number.NaN, Number.POSITIVE_INFINITY, '5']

  it.each(bad)('refuses %s as defaultTimeout, task timeout and addTask timeout', async (value) => {
    expect(() => new TaskManager({ defaultTimeout: value as number })).toThrow(TaskValidationError)
    expect(() => new TaskManager({ defaultTimeout: value as number })).toThrow(
      /defaultTimeout must be a finite number of seconds greater than 0/,
    )
    const manager = new TaskManager({ logger: quietLogger })
    expect(() => manager.task({ name: 'bad', timeout: value as number }, () => 1)).toThrow(
      /Task "bad": timeout must be a finite number of seconds greater than 0/,
    )
    expect(manager.getRegisteredTask('bad')).toBeUndefined()
    const ok = manager.task({ name: 'ok' }, () => 1)
    await expect(manager.addTask(ok, [], { timeout: value as number })).rejects.toThrow(
      /timeout must be a finite number of seconds greater than 0/,
    )
    expect((await manager.listTasks()).items).toHaveLength(0)
    await manager.shutdown()
  })
})

describe.each(['thread', 'process'] as const)('a %s task past its timeout', (kind) => {
  const manager = new TaskManager({
    maxSyncThreads: 1,
    maxProcessWorkers: 1,
    processShutdownTimeout: 0.2,
    cancelGracePeriod: 0.2,
    logger: quietLogger,
  })
  const on = { executor: kind, module: fixture }
  const spinner = manager.task({ ...on, name: 'spin', timeout: 0.3 }, spin)
  const fibTask = manager.task({ ...on, name: 'fib' }, fib)
  afterAll(() => manager.shutdown())

  it('fails with TASK_TIMEOUT; its worker is terminated after the grace period and replaced', async () => {
    const stuck = await manager.addTask(spinner, [120_000])
    const record = await waitForStatus(manager, stuck, undefined, 20_000)
    expect(record.status).toBe('failed')
    expect(record.error).toContain('TASK_TIMEOUT')
    expect(record.error).toContain('after 0.3 s')
    // One worker only: the next task can run only once the spinning one was terminated.
    const next = await manager.addTask(fibTask, [10])
    expect((await waitForStatus(manager, next, undefined, 20_000)).status).toBe('success')
    const again = await manager.addTask(fibTask, [12])
    expect((await waitForStatus(manager, again, undefined, 20_000)).status).toBe('success')
  }, 30_000)
})

describe('the stored record of a timed-out task', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sy-timeout-'))
  afterAll(() => rmSync(dir, { recursive: true, force: true }))
  const hang = (): Promise<never> => new Promise<never>(() => undefined)

  it('is failed with TASK_TIMEOUT in memory', async () => {
    const manager = new TaskManager({ logger: quietLogger })
    const task = manager.task({ name: 'hang', persist: true, timeout: 0.05 }, hang)
    const id = await manager.addTask(task, [])
    await waitForStatus(manager, id)
    const record = await manager.getTask(id)
    expect(record?.status).toBe('failed')
    expect(record?.error).toContain('TASK_TIMEOUT')
    await manager.shutdown()
  })

  it('is failed with TASK_TIMEOUT in SQLite', async () => {
    const path = join(dir, 'timeout.db')
    const manager = new TaskManager({ store: sqliteStore(path), logger: quietLogger })
    await manager.startup()
    const task = manager.task({ name: 'hang', persist: true, timeout: 0.05 }, hang)
    const id = await manager.addTask(task, [])
    await waitForStatus(manager, id)
    await manager.shutdown()
    const check = sqliteStore(path)
    try {
      const stored = await check.records.get(id)
      expect(stored?.record.status).toBe('failed')
      expect(stored?.record.error).toContain('TASK_TIMEOUT')
      expect(stored?.record.error).toContain('after 0.05 s')
    } finally {
      await check.close()
    }
  })
})
