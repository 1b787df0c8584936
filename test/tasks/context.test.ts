import { AsyncLocalStorage } from 'node:async_hooks'
import { afterEach, describe, expect, it, vi } from 'vitest'
import {
  generateEncryptionKey,
  getTaskContext,
  TaskArgumentError,
  TaskManager,
  taskLog,
  TaskValidationError,
  type TaskContext,
} from '../../src/tasks/index.js'
import { recordingLogger } from '../helpers/logger.js'
import { fakeClock, waitForStatus } from './helpers.js'

afterEach(() => {
  vi.restoreAllMocks()
})

describe('task context', () => {
  it('is visible in task code and its helpers, sync and async', async () => {
    const manager = new TaskManager()
    const seen: (Omit<TaskContext, 'signal' | 'childResults'> | undefined)[] = []
    const helper = (): void => {
      const context = getTaskContext()!
      const { signal: _signal, childResults: _childResults, ...rest } = context
      // A task outside any flow has no children: their results are empty.
      expect(context.childResults()).toEqual({})
      seen.push(rest)
    }
    const job = manager.task({ name: 'ctx', retries: 1 }, async () => {
      helper()
      await new Promise((resolve) => setTimeout(resolve, 1))
      helper()
      if (getTaskContext()!.attempt === 1) throw new Error('retry me')
    })
    const id = await manager.addTask(job, [], { tags: { tenant: 'acme' } })
    await waitForStatus(manager, id)
    expect(seen).toEqual([
      { task_id: id, func_name: 'ctx', attempt: 1, tags: { tenant: 'acme' } },
      { task_id: id, func_name: 'ctx', attempt: 1, tags: { tenant: 'acme' } },
      { task_id: id, func_name: 'ctx', attempt: 2, tags: { tenant: 'acme' } },
      { task_id: id, func_name: 'ctx', attempt: 2, tags: { tenant: 'acme' } },
    ])
    expect(getTaskContext()).toBeUndefined()
  })

  it("runs the task inside the caller's AsyncLocalStorage context captured at addTask", async () => {
    const trace = new AsyncLocalStorage<{ traceId: string }>()
    const manager = new TaskManager({ queues: { serial: { concurrency: 1 } } })
    const seen: (string | undefined)[] = []
    let release!: () => void
    const blocker = manager.task(
      { name: 'blocker', queue: 'serial' },
      () => new Promise<void>((r) => (release = r)),
    )
    const job = manager.task({ name: 'traced', queue: 'serial' }, () => {
      seen.push(trace.getStore()?.traceId)
    })
    await trace.run({ traceId: 'outer' }, () => manager.addTask(blocker, []))
    // Queued behind the blocker: it starts later, from the blocker's completion.
    const id = await trace.run({ traceId: 'abc-123' }, () => manager.addTask(job, []))
    const other = await manager.addTask(job, [])
    release()
    await waitForStatus(manager, id)
    await waitForStatus(manager, other)
    expect(seen).toEqual(['abc-123', undefined])
  })
})

describe('caller context across retries', () => {
  it('keeps the caller store on every attempt, also after a backoff wait', async () => {
    const trace = new AsyncLocalStorage<{ traceId: string }>()
    const manager = new TaskManager({ clock: fakeClock() })
    const seen: (string | undefined)[] = []
    const job = manager.task({ name: 'flaky', retries: 2, delay: 1 }, async () => {
      seen.push(trace.getStore()?.traceId)
      await Promise.resolve()
      if (seen.length < 3) throw new Error('again')
    })
    const id = await trace.run({ traceId: 't-1' }, () => manager.addTask(job, []))
    expect((await waitForStatus(manager, id)).status).toBe('success')
    expect(seen).toEqual(['t-1', 't-1', 't-1'])
  })
})

describe('taskLog', () => {
  it('adds `<timestamp> [<level>] <message>` lines to the record', async () => {
    const manager = new TaskManager({ clock: fakeClock() })
    const job = manager.task({ name: 'logger' }, () => {
      taskLog('hello')
      taskLog('careful', { level: 'warning', rows: 3 })
    })
    const id = await manager.addTask(job, [])
    const record = await waitForStatus(manager, id)
    expect(record.logs).toEqual([
      '2026-11-21T21:00:00.123+00:00 [info] hello',
      '2026-11-21T21:00:00.123+00:00 [warning] careful',
    ])
  })

  it("outside a task goes to the newest open manager's logger at the same level", async () => {
    const consoleSpies = (['log', 'info', 'warn', 'error', 'debug'] as const).map((name) =>
      vi.spyOn(console, name).mockImplementation(() => {}),
    )
    const older = recordingLogger()
    const newer = recordingLogger()
    const first = new TaskManager({ logger: older })
    const second = new TaskManager({ logger: newer })
    const job = second.task({ name: 'direct' }, (id: number) => {
      taskLog('with extra', { level: 'debug', id })
    })
    taskLog('plain', { level: 'warning' })
    job.fn(7)
    expect(newer.lines).toEqual([
      { level: 'warn', msg: 'plain', fields: {} },
      { level: 'debug', msg: 'with extra', fields: { id: 7 } },
    ])
    expect(older.lines).toEqual([])
    // Once the newer manager is shut down, the older one hears of it.
    await second.shutdown()
    taskLog('after', { level: 'error' })
    expect(older.messages('error')).toEqual(['after'])
    await first.shutdown()
    for (const spy of consoleSpies) expect(spy).not.toHaveBeenCalled()
  })

  it('rejects an unknown level', () => {
    expect(() => taskLog('x', { level: 'fatal' as never })).toThrow(TaskValidationError)
  })
})

describe('idempotency keys', () => {
  it('returns the original task_id for a non-failed task with the same key and runs once', async () => {
    const manager = new TaskManager()
    let runs = 0
    const job = manager.task({ name: 'charge' }, () => {
      runs++
    })
    const first = await manager.addTask(job, [], { idempotencyKey: 'order-1' })
    const second = await manager.addTask(job, [], { idempotencyKey: 'order-1' })
    expect(second).toBe(first)
    await waitForStatus(manager, first)
    const third = await manager.addTask(job, [], { idempotencyKey: 'order-1' })
    expect(third).toBe(first)
    expect(runs).toBe(1)
    expect((await manager.listTasks()).items).toHaveLength(1)
    const other = await manager.addTask(job, [], { idempotencyKey: 'order-2' })
    expect(other).not.toBe(first)
  })

  it('lets the key run again once the original failed', async () => {
    const manager = new TaskManager()
    let runs = 0
    const job = manager.task({ name: 'charge' }, () => {
      runs++
      if (runs === 1) throw new Error('declined')
    })
    const first = await manager.addTask(job, [], { idempotencyKey: 'k' })
    expect((await waitForStatus(manager, first)).status).toBe('failed')
    const second = await manager.addTask(job, [], { idempotencyKey: 'k' })
    expect(second).not.toBe(first)
    expect((await waitForStatus(manager, second)).status).toBe('success')
    expect(await manager.addTask(job, [], { idempotencyKey: 'k' })).toBe(second)
  })

  it('claims keys through the store seam', async () => {
    const { memoryTaskStore } = await import('../../src/tasks/index.js')
    const shared = memoryTaskStore()
    const a = new TaskManager({ store: shared })
    const b = new TaskManager({ store: shared })
    const jobA = a.task({ name: 'job' }, () => undefined)
    const jobB = b.task({ name: 'job' }, () => undefined)
    const id = await a.addTask(jobA, [], { idempotencyKey: 'shared' })
    expect(await b.addTask(jobB, [], { idempotencyKey: 'shared' })).toBe(id)
    expect((await b.listTasks()).items).toHaveLength(0)
  })
})

describe('argument encryption', () => {
  it('stores only ciphertext, decrypts for the call, and keeps retries working', async () => {
    const key = generateEncryptionKey()
    const manager = new TaskManager({ encryptionKey: key, clock: fakeClock() })
    const seen: unknown[][] = []
    const job = manager.task(
      { name: 'secret', retries: 1 },
      (card: string, meta: { cvv: number }) => {
        seen.push([card, meta])
        if (seen.length === 1) throw new Error('try again')
      },
    )
    const id = await manager.addTask(job, ['4111-1111-1111-1111', { cvv: 739517 }])
    const stored = (await manager.getStoredTask(id))!
    expect(stored.args).toBeNull()
    expect(stored.encrypted_args).toMatch(/^v2\./)
    const text = JSON.stringify(stored)
    expect(text).not.toContain('4111-1111-1111-1111')
    // A six-digit value: a short one can appear by chance in the UUID or timestamps.
    expect(text).not.toContain('739517')
    expect(text).not.toContain('cvv')
    const record = await waitForStatus(manager, id)
    expect(record.status).toBe('success')
    expect(seen).toEqual([
      ['4111-1111-1111-1111', { cvv: 739517 }],
      ['4111-1111-1111-1111', { cvv: 739517 }],
    ])
    expect(JSON.stringify(await manager.getStoredTask(id))).not.toContain('4111')
  })

  it('rejects arguments that JSON cannot carry, storing nothing', async () => {
    const manager = new TaskManager({ encryptionKey: Buffer.alloc(32, 1) })
    const job = manager.task({ name: 'job' }, (_value: unknown) => undefined)
    await expect(manager.addTask(job, [() => 1])).rejects.toThrow(TaskArgumentError)
    await expect(manager.addTask(job, [10n])).rejects.toThrow(TaskArgumentError)
    expect((await manager.listTasks()).items).toEqual([])
  })

  it('accepts hex and base64 keys, refuses others', () => {
    expect(() => new TaskManager({ encryptionKey: 'ab'.repeat(32) })).not.toThrow()
    expect(
      () => new TaskManager({ encryptionKey: Buffer.alloc(32).toString('base64') }),
    ).not.toThrow()
    expect(() => new TaskManager({ encryptionKey: Buffer.alloc(16) })).toThrow(/32 bytes/)
  })
})
