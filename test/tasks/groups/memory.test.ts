/**
 * Grouped and rate-limited queues on a manager without a store, and the validation of their
 * options: a bad option is refused with a validation error and changes nothing.
 */
import { describe, expect, it } from 'vitest'
import { TaskManager, TaskValidationError } from '../../../src/tasks/index.js'
import { quietLogger } from '../helpers.js'
import { groupBehaviour } from './behaviour.js'

groupBehaviour({
  name: 'no store',
  enabled: () => Promise.resolve(true),
  open: () => null,
  again: () => null,
  cleanup: () => Promise.resolve(),
})

describe('group and rate options', () => {
  it.each([
    [{ groupConcurrency: 0 }, /groupConcurrency must be a positive integer/],
    [{ groupConcurrency: -1 }, /groupConcurrency must be a positive integer/],
    [{ groupConcurrency: 1.5 }, /groupConcurrency must be a positive integer/],
    [{ groupConcurrency: '2' }, /groupConcurrency must be a positive integer/],
    [{ rateLimit: 'fast' }, /Invalid rateLimit "fast"/],
    [{ rateLimit: '0/second' }, /Invalid rateLimit "0\/second"/],
    [{ groupRateLimit: '5/fortnight' }, /Invalid groupRateLimit/],
    [{ groupRateLimit: 10 }, /Invalid groupRateLimit 10/],
  ])('refuses the queue option %j', (options, message) => {
    const make = () => new TaskManager({ queues: { q: options as never }, logger: quietLogger })
    expect(make).toThrow(TaskValidationError)
    expect(make).toThrow(message)
  })

  it('refuses a bad group at registration and per call, changing nothing', async () => {
    const manager = new TaskManager({
      queues: { grouped: { groupConcurrency: 2 } },
      logger: quietLogger,
    })
    expect(() =>
      manager.task({ name: 'bad', queue: 'grouped', group: '' }, () => undefined),
    ).toThrow(/group must be a non-empty string/)
    const work = manager.task({ name: 'work', queue: 'grouped' }, () => undefined)
    await expect(manager.addTask(work, [], { group: 'x'.repeat(129) })).rejects.toThrow(
      TaskValidationError,
    )
    await expect(manager.addTask(work, [], { group: 42 as never })).rejects.toThrow(
      /group must be a non-empty string/,
    )
    expect((await manager.listTasks({})).total).toBe(0)
    await manager.shutdown()
  })

  it('refuses a group on a queue without group or rate options, changing nothing', async () => {
    const manager = new TaskManager({ queues: { plain: { concurrency: 2 } }, logger: quietLogger })
    const plain = manager.task({ name: 'plain', queue: 'plain' }, () => undefined)
    const byDefault = manager.task({ name: 'by-default', group: 'g' }, () => undefined)
    await expect(manager.addTask(plain, [], { group: 'tenant-1' })).rejects.toThrow(
      /queue "plain" has no groupConcurrency, rateLimit or groupRateLimit/,
    )
    await expect(manager.addTask(byDefault, [])).rejects.toThrow(TaskValidationError)
    expect((await manager.listTasks({})).total).toBe(0)
    // Without a group the same task runs as before.
    const id = await manager.addTask(plain, [])
    expect(manager.localTask(id)?.group).toBeNull()
    await manager.shutdown()
  })

  it('a call may clear the registration group with null; the queue stats show groups', async () => {
    const manager = new TaskManager({
      queues: { grouped: { groupConcurrency: 1, concurrency: 1 } },
      logger: quietLogger,
    })
    let release!: () => void
    const blocker = new Promise<void>((resolve) => (release = resolve))
    const work = manager.task({ name: 'w', queue: 'grouped', group: 'reg' }, () => blocker)
    const first = await manager.addTask(work, [])
    const second = await manager.addTask(work, [], { group: null })
    expect(manager.localTask(first)?.group).toBe('reg')
    expect(manager.localTask(second)?.group).toBeNull()
    const stats = manager.queueStats().find((queue) => queue.name === 'grouped')
    expect(stats?.groups).toEqual(
      expect.arrayContaining([
        { group: 'reg', waiting: 0, running: 1 },
        { group: null, waiting: 1, running: 0 },
      ]),
    )
    release()
    await manager.shutdown()
  })
})
