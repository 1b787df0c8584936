import { describe, expect, it, vi } from 'vitest'
import {
  QueueFullError,
  QueueNotFoundError,
  TaskManager,
  TaskValidationError,
} from '../../src/tasks/index.js'
import { PriorityLine } from '../../src/tasks/queues/priority-line.js'
import { deferred, flush, until, waitForStatus } from './helpers.js'

const quietLogger = { warn: vi.fn(), error: vi.fn() }

describe('priority order', () => {
  it('runs higher priority first, FIFO among equal priorities (concurrency 1)', async () => {
    const manager = new TaskManager({ queues: { serial: { concurrency: 1 } } })
    const gate = deferred()
    const order: string[] = []
    const job = manager.task({ name: 'job', queue: 'serial' }, async (label: string) => {
      order.push(label)
      if (label === 'blocker') await gate.promise
    })
    await manager.addTask(job, ['blocker'])
    const ids = [
      await manager.addTask(job, ['low-1'], { priority: 1 }),
      await manager.addTask(job, ['high-1'], { priority: 10 }),
      await manager.addTask(job, ['none']),
      await manager.addTask(job, ['low-2'], { priority: 1 }),
      await manager.addTask(job, ['high-2'], { priority: 10 }),
      await manager.addTask(job, ['negative'], { priority: -5 }),
      await manager.addTask(job, ['mid'], { priority: 5 }),
    ]
    gate.resolve()
    for (const id of ids) await waitForStatus(manager, id)
    expect(order).toEqual([
      'blocker',
      'high-1',
      'high-2',
      'mid',
      'low-1',
      'low-2',
      'none',
      'negative',
    ])
  })

  it('uses the registration priority unless the call overrides it', async () => {
    const manager = new TaskManager({ queues: { serial: { concurrency: 1 } } })
    const gate = deferred()
    const order: string[] = []
    const urgent = manager.task({ name: 'urgent', queue: 'serial', priority: 9 }, (l: string) => {
      order.push(l)
    })
    const blocker = manager.task({ name: 'blocker', queue: 'serial' }, () => gate.promise)
    await manager.addTask(blocker, [])
    const a = await manager.addTask(urgent, ['overridden'], { priority: 1 })
    const b = await manager.addTask(urgent, ['default-9'])
    expect(manager.localTask(b)?.priority).toBe(9)
    gate.resolve()
    await waitForStatus(manager, a)
    expect(order).toEqual(['default-9', 'overridden'])
  })

  it('the waiting line orders by priority, then arrival, across many items', () => {
    const line = new PriorityLine<{ priority: number; seq: number }>()
    const priorities = [3, 1, 3, 2, 5, 1, 5]
    for (let round = 0; round < 500; round++) {
      priorities.forEach((priority, i) => line.push({ priority, seq: round * 10 + i }))
    }
    expect(line.size).toBe(3500)
    const out: { priority: number; seq: number }[] = []
    for (let item = line.pop(); item !== undefined; item = line.pop()) out.push(item)
    expect(out).toHaveLength(3500)
    const sorted = [...out].sort((a, b) => b.priority - a.priority || a.seq - b.seq)
    expect(out).toEqual(sorted)
    expect(line.pop()).toBeUndefined()
    line.push({ priority: 0, seq: 1 })
    expect(line.pop()).toEqual({ priority: 0, seq: 1 })
  })
})

describe('queue admission', () => {
  it('raises QueueFullError and records status rejected when waiting items reach max_size', async () => {
    const manager = new TaskManager({ queues: { small: { concurrency: 1, maxSize: 2 } } })
    const gate = deferred()
    const job = manager.task({ name: 'job', queue: 'small' }, () => gate.promise)
    await manager.addTask(job, []) // running
    await manager.addTask(job, []) // waiting 1
    await manager.addTask(job, []) // waiting 2
    const error = await manager.addTask(job, []).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(QueueFullError)
    expect((error as QueueFullError).code).toBe('QUEUE_FULL')
    const rejected = (await manager.listTasks({ status: 'rejected' })).items
    expect(rejected).toHaveLength(1)
    expect(rejected[0]!.error).toMatch(/QueueFullError: Queue "small" is full/)
    expect(rejected[0]!.start_time).toBeNull()
    expect(manager.queueStats().find((q) => q.name === 'small')).toEqual({
      name: 'small',
      concurrency: 1,
      max_size: 2,
      pending: 2,
      running: 1,
      finished: 0,
      rejected: 1,
      paused: false,
    })
    gate.resolve()
    await until(() => manager.queueStats().find((q) => q.name === 'small')!.finished === 3)
  })

  it('maxSize is shorthand for the default queue max_size (counting waiting, not running)', async () => {
    const manager = new TaskManager({ maxSize: 0, queues: { default: { concurrency: 1 } } })
    const gate = deferred()
    const job = manager.task({ name: 'job' }, () => gate.promise)
    await manager.addTask(job, []) // starts at once, nothing waits
    await expect(manager.addTask(job, [])).rejects.toThrow(QueueFullError)
    expect(manager.queueStats()).toEqual([
      {
        name: 'default',
        concurrency: 1,
        max_size: 0,
        pending: 0,
        running: 1,
        finished: 0,
        rejected: 1,
        paused: false,
      },
    ])
    gate.resolve()
  })

  it('falls back to the default queue with one warning for an unknown queue', async () => {
    const logger = { warn: vi.fn(), error: vi.fn() }
    const manager = new TaskManager({ logger })
    const job = manager.task({ name: 'job' }, () => 1)
    const a = await manager.addTask(job, [], { queue: 'nope' })
    await manager.addTask(job, [], { queue: 'nope' })
    expect((await waitForStatus(manager, a)).queue).toBe('default')
    expect(logger.warn).toHaveBeenCalledTimes(1)
    expect(logger.warn.mock.calls[0]![0]).toMatch(/Unknown queue "nope"/)
  })

  it('a default queue exists when none is given', () => {
    const manager = new TaskManager({ logger: quietLogger })
    expect(manager.queueStats().map((q) => q.name)).toEqual(['default'])
  })
})

describe('live queue config', () => {
  it('changes concurrency under load without ever exceeding the new limit', async () => {
    const manager = new TaskManager({ queues: { work: { concurrency: 4 } } })
    let running = 0
    let maxAfterChange = 0
    let changed = false
    const gates: (() => void)[] = []
    const job = manager.task({ name: 'job', queue: 'work' }, async () => {
      running++
      if (changed) maxAfterChange = Math.max(maxAfterChange, running)
      await new Promise<void>((resolve) => gates.push(resolve))
      running--
    })
    const ids: string[] = []
    for (let i = 0; i < 20; i++) ids.push(await manager.addTask(job, []))
    await until(() => running === 4)
    expect(await manager.updateQueueConfig('work', { concurrency: 2 })).toEqual({
      concurrency: 2,
      max_size: null,
    })
    changed = true
    // Release tasks one at a time; starts after the change must keep running ≤ 2.
    while (ids.some((id) => manager.localTask(id)!.status !== 'success')) {
      gates.shift()?.()
      await flush()
      await flush()
    }
    expect(maxAfterChange).toBeLessThanOrEqual(2)
    expect(maxAfterChange).toBeGreaterThan(0)
  })

  it('raising concurrency starts waiting tasks at once', async () => {
    const manager = new TaskManager({ queues: { work: { concurrency: 1 } } })
    const gate = deferred()
    let started = 0
    const job = manager.task({ name: 'job', queue: 'work' }, async () => {
      started++
      await gate.promise
    })
    for (let i = 0; i < 5; i++) await manager.addTask(job, [])
    await flush()
    expect(started).toBe(1)
    await manager.updateQueueConfig('work', { concurrency: 3, max_size: 10 })
    await flush()
    expect(started).toBe(3)
    expect(manager.queueStats()[0]).toMatchObject({
      concurrency: 3,
      max_size: 10,
      pending: 2,
      running: 3,
    })
    await manager.updateQueueConfig('work', { concurrency: null })
    await flush()
    expect(started).toBe(5)
    gate.resolve()
  })

  it('rejects bad updates and unknown queues, changing nothing', async () => {
    const manager = new TaskManager({ queues: { work: { concurrency: 2, max_size: 5 } } })
    await expect(manager.updateQueueConfig('work', { concurrency: 0 })).rejects.toThrow(
      TaskValidationError,
    )
    await expect(manager.updateQueueConfig('work', { max_size: -1 })).rejects.toThrow(
      TaskValidationError,
    )
    await expect(manager.updateQueueConfig('work', { concurrency: 2.5 })).rejects.toThrow(
      /positive integer/,
    )
    await expect(manager.updateQueueConfig('missing', { concurrency: 1 })).rejects.toThrow(
      QueueNotFoundError,
    )
    expect(manager.queueStats().find((q) => q.name === 'work')).toMatchObject({
      concurrency: 2,
      max_size: 5,
    })
  })
})

describe('maxConcurrentTasks', () => {
  it('caps simultaneous async tasks across queues', async () => {
    const manager = new TaskManager({ maxConcurrentTasks: 2, queues: { a: {}, b: {} } })
    let running = 0
    let peak = 0
    const gates: (() => void)[] = []
    const job = manager.task({ name: 'job' }, async () => {
      running++
      peak = Math.max(peak, running)
      await new Promise<void>((resolve) => gates.push(resolve))
      running--
    })
    const ids: string[] = []
    for (let i = 0; i < 6; i++)
      ids.push(await manager.addTask(job, [], { queue: i % 2 ? 'a' : 'b' }))
    await until(() => running === 2)
    await flush()
    expect(running).toBe(2)
    expect(ids.filter((id) => manager.localTask(id)!.status === 'pending')).toHaveLength(4)
    while (gates.length > 0 || running > 0) {
      gates.shift()?.()
      await flush()
    }
    for (const id of ids) expect((await waitForStatus(manager, id)).status).toBe('success')
    expect(peak).toBe(2)
  })

  it('a task cancelled while it waits for a slot never runs', async () => {
    const manager = new TaskManager({ maxConcurrentTasks: 1 })
    const gate = deferred()
    const ran: string[] = []
    const job = manager.task({ name: 'job' }, async (label: string) => {
      ran.push(label)
      if (label === 'first') await gate.promise
    })
    const first = await manager.addTask(job, ['first'])
    const second = await manager.addTask(job, ['second'])
    await flush()
    expect(manager.localTask(second)!.status).toBe('pending')
    expect((await manager.cancel(second)).status).toBe('cancelled')
    gate.resolve()
    await waitForStatus(manager, first)
    const third = await manager.addTask(job, ['third'])
    await waitForStatus(manager, third)
    expect(ran).toEqual(['first', 'third'])
    expect(manager.localTask(second)!.start_time).toBeNull()
  })
})

describe('queue options', () => {
  it('take camelCase { concurrency, maxSize }', async () => {
    const logger = { warn: vi.fn(), error: vi.fn() }
    const manager = new TaskManager({ queues: { small: { concurrency: 1, maxSize: 1 } }, logger })
    expect(manager.queueStats().find((q) => q.name === 'small')).toMatchObject({
      concurrency: 1,
      max_size: 1,
    })
    const gate = deferred()
    const job = manager.task({ name: 'job', queue: 'small' }, () => gate.promise)
    await manager.addTask(job, [])
    await manager.addTask(job, [])
    await expect(manager.addTask(job, [])).rejects.toThrow(QueueFullError)
    expect(logger.warn).not.toHaveBeenCalled()
    gate.resolve()
    await manager.shutdown()
  })

  it('still take max_size, with one deprecation warning per manager', () => {
    const logger = { warn: vi.fn(), error: vi.fn() }
    const manager = new TaskManager({
      queues: { a: { max_size: 3 }, b: { concurrency: 2, max_size: 4 } },
      logger,
    })
    expect(manager.queueStats().map((q) => [q.name, q.max_size])).toEqual([
      ['a', 3],
      ['b', 4],
      ['default', null],
    ])
    expect(logger.warn).toHaveBeenCalledTimes(1)
    expect(String(logger.warn.mock.calls[0]![0])).toMatch(/max_size.*deprecated.*maxSize/)
  })

  it('refuse maxSize and max_size that disagree', () => {
    expect(
      () => new TaskManager({ queues: { a: { maxSize: 3, max_size: 4 } }, logger: quietLogger }),
    ).toThrow(TaskValidationError)
  })
})
