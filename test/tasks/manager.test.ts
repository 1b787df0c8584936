import { describe, expect, it, vi } from 'vitest'
import {
  canTransition,
  ManagerClosedError,
  TASK_STATUSES,
  TaskManager,
  TaskNotCancellableError,
  TaskNotFoundError,
  TaskNotRegisteredError,
  TaskNotRetryableError,
  TaskValidationError,
  type TaskStatus,
} from '../../src/tasks/index.js'
import { deferred, fakeClock, flush, until, waitForStatus } from './helpers.js'

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}\+00:00$/
const LOG_LINE =
  /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}\+00:00 \[(debug|info|warning|error)\] /

describe('finished history in memory (no durable store)', () => {
  it('keeps the newest finishedInMemory records; older ones go with their idempotency keys', async () => {
    const manager = new TaskManager({ finishedInMemory: 3 })
    const work = manager.task({ name: 'work' }, (n: number) => n)
    const ids: string[] = []
    for (let n = 0; n < 5; n++) {
      const id = await manager.addTask(work, [n], { idempotencyKey: `order-${n}` })
      await waitForStatus(manager, id)
      ids.push(id)
    }
    const kept = await Promise.all(ids.map((id) => manager.getTask(id)))
    expect(kept.map((record) => record?.status ?? null)).toEqual([
      null,
      null,
      'success',
      'success',
      'success',
    ])
    expect((await manager.listTasks()).total).toBe(3)
    // A kept record still holds its key; a forgotten one's key is free for a new task.
    expect(await manager.addTask(work, [9], { idempotencyKey: 'order-4' })).toBe(ids[4])
    const again = await manager.addTask(work, [9], { idempotencyKey: 'order-0' })
    expect(again).not.toBe(ids[0])
    expect((await waitForStatus(manager, again)).status).toBe('success')
    await manager.shutdown()
  })

  it('the in-memory store keeps its maxTasks most recently saved tasks', async () => {
    const { memoryTaskStore } = await import('../../src/tasks/index.js')
    expect(() => memoryTaskStore({ maxTasks: 0 })).toThrow(TaskValidationError)
    const store = memoryTaskStore({ maxTasks: 2 })
    const manager = new TaskManager({ store })
    const kept = manager.task({ name: 'kept', persist: true }, (n: number) => n)
    const ids: string[] = []
    for (let n = 0; n < 4; n++) {
      const id = await manager.addTask(kept, [n])
      await waitForStatus(manager, id)
      ids.push(id)
    }
    await until(async () =>
      (await store.loadTasks()).some((task) => task.record.task_id === ids[3]),
    )
    const saved = (await store.loadTasks()).map((task) => task.record.task_id)
    expect(saved).toEqual(ids.slice(2))
    await manager.shutdown()
  })

  it('the in-memory store claims a batch of idempotency keys as one claim each would', async () => {
    const { memoryTaskStore } = await import('../../src/tasks/index.js')
    const store = memoryTaskStore()
    expect(store.claimIdempotencyKey('held', 'older')).toBeNull()
    const claims = [
      { key: 'free', task_id: 'a' },
      { key: 'held', task_id: 'b' },
    ]
    expect(store.claimIdempotencyKeys?.(claims)).toEqual([null, 'older'])
    expect(store.claimIdempotencyKey('free', 'c')).toBe('a')
    expect(store.claimIdempotencyKeys?.([{ key: 'free', task_id: 'a' }])).toEqual([null])
    // A key given twice is refused, and nothing of the batch is claimed.
    expect(() =>
      store.claimIdempotencyKeys?.([
        { key: 'other', task_id: 'd' },
        { key: 'other', task_id: 'e' },
      ]),
    ).toThrow(TaskValidationError)
    expect(store.claimIdempotencyKey('other', 'f')).toBeNull()
  })

  it('stays at the bound over thousands of finished tasks', async () => {
    const manager = new TaskManager({ finishedInMemory: 2 })
    const work = manager.task({ name: 'work' }, (n: number) => n)
    const ids: string[] = []
    for (let n = 0; n < 3000; n++) ids.push(await manager.addTask(work, [n]))
    await waitForStatus(manager, ids.at(-1) as string)
    await until(async () => (await manager.listTasks()).total === 2)
    // The two that finished last (among the last added: runs finish about in order).
    const kept = (await manager.listTasks()).items.map((record) => record.task_id)
    expect(kept.every((id) => ids.indexOf(id) >= ids.length - 100)).toBe(true)
    expect(await manager.getTask(ids[0] as string)).toBeUndefined()
    await manager.shutdown()
  })
})

describe('task records', () => {
  it('runs a task and records exactly the record fields plus executor and queue', async () => {
    const manager = new TaskManager()
    const add = manager.task({ name: 'add' }, (a: number, b: number) => a + b)
    const id = await manager.addTask(add, [1, 2], { tags: { user: '42' }, priority: 3 })
    expect(id).toMatch(/^[0-9a-f-]{36}$/)
    const record = await waitForStatus(manager, id)
    expect(Object.keys(record).sort()).toEqual(
      [
        'task_id',
        'func_name',
        'status',
        'created_at',
        'start_time',
        'end_time',
        'duration',
        'retries_used',
        'error',
        'logs',
        'stacktrace',
        'tags',
        'source',
        'priority',
        'executor',
        'queue',
        'progress',
        'progress_message',
        'expires_at',
        'worker',
        'retry_of',
        'retried_as',
        'group',
        'parent_id',
      ].sort(),
    )
    expect(record).toMatchObject({
      task_id: id,
      func_name: 'add',
      status: 'success',
      retries_used: 0,
      error: null,
      stacktrace: null,
      tags: { user: '42' },
      source: 'manual',
      priority: 3,
      executor: 'async',
      queue: 'default',
      progress: null,
      progress_message: null,
      expires_at: null,
      worker: manager.workerId,
      retry_of: null,
      retried_as: null,
    })
    expect(record.created_at).toMatch(ISO)
    expect(record.start_time).toMatch(ISO)
    expect(record.end_time).toMatch(ISO)
    expect(record.duration).toBeGreaterThanOrEqual(0)
    const scheduled = await manager.addTask(add, [2, 2], { source: 'scheduled' })
    expect((await waitForStatus(manager, scheduled)).source).toBe('scheduled')
  })

  it('formats timestamps in UTC with milliseconds and an explicit offset', async () => {
    const clock = fakeClock()
    const manager = new TaskManager({ clock })
    const noop = manager.task({ name: 'noop' }, () => undefined)
    const id = await manager.addTask(noop, [])
    const record = await waitForStatus(manager, id)
    expect(record.created_at).toBe('2026-11-21T21:00:00.123+00:00')
    expect(record.start_time).toBe('2026-11-21T21:00:00.123+00:00')
  })

  it('defaults: retries 0, delay 0, backoff 1, persist false, async executor', () => {
    const manager = new TaskManager()
    const handle = manager.task({}, function named() {})
    expect(handle.name).toBe('named')
    expect(handle.definition).toMatchObject({
      retries: 0,
      delay: 0,
      backoff: 1,
      persist: false,
      executor: 'async',
      priority: null,
      eager: false,
      requeueOnInterrupt: false,
    })
  })

  it('allows only the documented transitions', () => {
    const allowed: Record<TaskStatus, TaskStatus[]> = {
      pending: ['running', 'cancelled', 'expired', 'failed'],
      running: ['success', 'failed', 'cancelled', 'interrupted', 'pending'],
      success: [],
      failed: ['pending'],
      cancelled: [],
      interrupted: [],
      rejected: [],
      expired: [],
    }
    for (const from of TASK_STATUSES) {
      for (const to of TASK_STATUSES) {
        expect(canTransition(from, to), `${from} -> ${to}`).toBe(allowed[from].includes(to))
      }
    }
  })
})

describe('retries', () => {
  it('waits delay, delay·backoff, delay·backoff² between attempts and records each retry', async () => {
    const clock = fakeClock()
    const manager = new TaskManager({ clock })
    let calls = 0
    const flaky = manager.task({ name: 'flaky', retries: 3, delay: 1, backoff: 2 }, () => {
      calls++
      throw new TypeError(`boom ${calls}`)
    })
    const id = await manager.addTask(flaky, [])
    const record = await waitForStatus(manager, id)
    expect(calls).toBe(4)
    expect(clock.sleeps).toEqual([1000, 2000, 4000])
    expect(record.status).toBe('failed')
    expect(record.retries_used).toBe(3)
    expect(record.error).toBe('TypeError: boom 4')
    expect(record.stacktrace).toContain('TypeError: boom 4')
    expect(record.stacktrace).toContain('manager.test.ts')
    expect(record.logs.filter((line) => line.startsWith('--- retry'))).toEqual([
      '--- retry 1 ---',
      '--- retry 2 ---',
      '--- retry 3 ---',
    ])
    for (const line of record.logs.filter((l) => !l.startsWith('---')))
      expect(line).toMatch(LOG_LINE)
    expect(record.logs[0]).toMatch(/\[error\] attempt 1 failed: TypeError: boom 1$/)
  })

  it('succeeds on a later attempt with retries_used counting the retries', async () => {
    const clock = fakeClock()
    const manager = new TaskManager({ clock })
    let calls = 0
    const flaky = manager.task({ name: 'flaky2', retries: 5, delay: 0.5 }, async () => {
      calls++
      await Promise.resolve()
      if (calls < 3) throw new Error('not yet')
      return 'ok'
    })
    const id = await manager.addTask(flaky, [])
    const record = await waitForStatus(manager, id)
    expect(record.status).toBe('success')
    expect(record.retries_used).toBe(2)
    expect(record.error).toBeNull()
    expect(clock.sleeps).toEqual([500, 500])
  })

  it('cancelling during the backoff wait ends the task as cancelled without another attempt', async () => {
    const manager = new TaskManager()
    let calls = 0
    const slowRetry = manager.task({ name: 'slowRetry', retries: 2, delay: 3600 }, () => {
      calls++
      throw new Error('fail')
    })
    const id = await manager.addTask(slowRetry, [])
    await until(() => manager.localTask(id)?.logs.includes('--- retry 1 ---') === true)
    await manager.cancel(id)
    const record = await waitForStatus(manager, id)
    expect(record.status).toBe('cancelled')
    expect(calls).toBe(1)
  })
})

describe('cancel', () => {
  it('cancels a pending task, which then never runs', async () => {
    const manager = new TaskManager({ queues: { one: { concurrency: 1 } } })
    const gate = deferred()
    const ran: string[] = []
    const job = manager.task({ name: 'job', queue: 'one' }, async (label: string) => {
      ran.push(label)
      if (label === 'first') await gate.promise
    })
    const first = await manager.addTask(job, ['first'])
    const second = await manager.addTask(job, ['second'])
    expect(manager.localTask(second)?.status).toBe('pending')
    const cancelled = await manager.cancel(second)
    expect(cancelled.status).toBe('cancelled')
    expect(cancelled.end_time).toMatch(ISO)
    expect(manager.queueStats().find((q) => q.name === 'one')?.pending).toBe(0)
    gate.resolve()
    await waitForStatus(manager, first)
    await flush()
    expect(ran).toEqual(['first'])
    expect(manager.localTask(second)?.status).toBe('cancelled')
    expect(manager.localTask(second)?.start_time).toBeNull()
  })

  it('cancels a running async task asynchronously and aborts its signal', async () => {
    const manager = new TaskManager()
    const started = deferred()
    let aborted = false
    const { getTaskContext } = await import('../../src/tasks/index.js')
    const long = manager.task({ name: 'long' }, async () => {
      const signal = getTaskContext()!.signal
      signal.addEventListener('abort', () => (aborted = true))
      started.resolve()
      await new Promise(() => {})
    })
    const id = await manager.addTask(long, [])
    await started.promise
    const response = await manager.cancel(id)
    expect(response.status).toBe('running')
    const record = await waitForStatus(manager, id)
    expect(record.status).toBe('cancelled')
    expect(aborted).toBe(true)
  })

  it('refuses to cancel a finished task or an unknown id, changing nothing', async () => {
    const manager = new TaskManager()
    const noop = manager.task({ name: 'noop' }, () => 1)
    const id = await manager.addTask(noop, [])
    await waitForStatus(manager, id)
    await expect(manager.cancel(id)).rejects.toThrow(TaskNotCancellableError)
    expect(manager.localTask(id)?.status).toBe('success')
    await expect(manager.cancel('nope')).rejects.toThrow(TaskNotFoundError)
  })
})

describe('validation', () => {
  it('rejects bad registrations with a clear error', () => {
    const manager = new TaskManager()
    expect(() => manager.task({ retries: -1, name: 'a' }, () => 1)).toThrow(/retries must be/)
    expect(() => manager.task({ retries: 1.5, name: 'a' }, () => 1)).toThrow(/integer/)
    expect(() => manager.task({ delay: Number.NaN, name: 'a' }, () => 1)).toThrow(/delay/)
    expect(() => manager.task({ name: 'a', executor: 'gpu' as never }, () => 1)).toThrow(/executor/)
    expect(() => manager.task({ name: 'a', executor: 'thread' }, () => 1)).toThrow(/module/)
    expect(() => manager.task({}, () => 1)).toThrow(TaskValidationError)
    manager.task({ name: 'dup' }, () => 1)
    expect(() => manager.task({ name: 'dup' }, () => 2)).toThrow(/already registered/)
    expect(manager.registeredTasks().map((t) => t.name)).toEqual(['dup'])
  })

  it('rejects bad addTask input and stores nothing', async () => {
    const manager = new TaskManager()
    const other = new TaskManager()
    const task = manager.task({ name: 't' }, (x: number) => x)
    const foreign = other.task({ name: 't' }, (x: number) => x)
    await expect(manager.addTask(foreign, [1])).rejects.toThrow(TaskValidationError)
    await expect(manager.addTask(task, [1], { tags: { a: 1 as never } })).rejects.toThrow(/tag "a"/)
    await expect(manager.addTask(task, [1], { priority: 1.5 })).rejects.toThrow(/priority/)
    await expect(manager.addTask(task, [1], { idempotencyKey: '' })).rejects.toThrow(
      /idempotencyKey/,
    )
    await expect(manager.addTask(task, 1 as never)).rejects.toThrow(/array/)
    await expect(manager.addTask(task, [1], { source: 'cron' as never })).rejects.toThrow(/source/)
    expect((await manager.listTasks()).items).toEqual([])
  })

  it('validates manager options', () => {
    expect(() => new TaskManager({ finishedInMemory: 0 })).toThrow(/finishedInMemory/)
    expect(() => new TaskManager({ finishedInMemory: 2.5 })).toThrow(/finishedInMemory/)
    expect(() => new TaskManager({ maxConcurrentTasks: 0 })).toThrow(/maxConcurrentTasks/)
    expect(() => new TaskManager({ processShutdownTimeout: -1 })).toThrow(/processShutdownTimeout/)
    expect(() => new TaskManager({ queues: { q: { concurrency: 0 } } })).toThrow(/concurrency/)
    expect(() => new TaskManager({ encryptionKey: 'short' })).toThrow(/32 bytes/)
  })
})

describe('retryTask', () => {
  it('re-enqueues a failed task as a new record; the original only gains retried_as', async () => {
    const manager = new TaskManager()
    let fail = true
    const seen: unknown[] = []
    const job = manager.task({ name: 'job' }, (value: string) => {
      seen.push(value)
      if (fail) throw new Error('first time')
    })
    const id = await manager.addTask(job, ['x'], { tags: { k: 'v' } })
    const failed = await waitForStatus(manager, id)
    expect(failed.status).toBe('failed')
    fail = false
    const newId = await manager.retryTask(id)
    expect(newId).not.toBe(id)
    const retried = await waitForStatus(manager, newId)
    expect(retried).toMatchObject({ status: 'success', tags: { k: 'v' } })
    expect(seen).toEqual(['x', 'x'])
    expect(retried).toMatchObject({ source: 'retry', retry_of: id, retried_as: null })
    expect(manager.localTask(id)).toEqual({ ...failed, retried_as: newId })
    await expect(manager.retryTask(newId)).rejects.toThrow(TaskNotRetryableError)
    await expect(manager.retryTask('missing')).rejects.toThrow(TaskNotFoundError)
  })

  it('refuses a retry when the function is not registered in this process', async () => {
    const { memoryTaskStore } = await import('../../src/tasks/index.js')
    const store = memoryTaskStore()
    const first = new TaskManager({ store })
    const job = first.task({ name: 'gone', persist: true }, () => {
      throw new Error('x')
    })
    const id = await first.addTask(job, [])
    await waitForStatus(first, id)
    await until(() => (store.loadTasks() as unknown[]).length === 1)
    // A second process sharing the store loads the history but never registered 'gone'.
    const second = new TaskManager({ store })
    await second.startup()
    expect(second.localTask(id)?.status).toBe('failed')
    await expect(second.retryTask(id)).rejects.toThrow(TaskNotRegisteredError)
    expect((await second.listTasks()).items).toHaveLength(1)
  })
})

describe('shutdown', () => {
  it('marks running tasks interrupted, requeues those with requeueOnInterrupt, refuses new tasks', async () => {
    const manager = new TaskManager()
    const started = deferred()
    let count = 0
    const block = manager.task({ name: 'block' }, async () => {
      if (++count === 2) started.resolve()
      await new Promise(() => {})
    })
    const again = manager.task({ name: 'again', requeueOnInterrupt: true }, async () => {
      await new Promise(() => {})
    })
    const a = await manager.addTask(block, [])
    const b = await manager.addTask(block, [])
    const c = await manager.addTask(again, [])
    await started.promise
    await manager.shutdown()
    expect(manager.localTask(a)?.status).toBe('interrupted')
    expect(manager.localTask(b)?.status).toBe('interrupted')
    expect(manager.localTask(a)?.end_time).toMatch(ISO)
    expect(manager.localTask(c)?.status).toBe('pending')
    expect(manager.localTask(c)?.start_time).toBeNull()
    await expect(manager.addTask(block, [])).rejects.toThrow(ManagerClosedError)
    await manager.shutdown()
  })

  it('saves requeued tasks to the store so a later startup can run them again', async () => {
    const { memoryTaskStore } = await import('../../src/tasks/index.js')
    const store = memoryTaskStore()
    const manager = new TaskManager({ store })
    const started = deferred()
    const again = manager.task({ name: 'again', requeueOnInterrupt: true }, async () => {
      started.resolve()
      await new Promise(() => {})
    })
    const id = await manager.addTask(again, ['arg'] as never)
    await started.promise
    await manager.shutdown()
    const saved = (await store.loadTasks()).find((task) => task.record.task_id === id)
    expect(saved?.record.status).toBe('pending')
    expect(saved?.args).toEqual(['arg'])
  })

  it('initApp registers onReady/onClose once per app', () => {
    const manager = new TaskManager()
    const hooks: string[] = []
    const app = {
      addHook: vi.fn((name: string) => {
        hooks.push(name)
      }),
    }
    manager.initApp(app)
    manager.initApp(app)
    expect(hooks).toEqual(['onReady', 'onClose'])
  })
})
