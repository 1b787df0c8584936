/**
 * Operator pauses on a manager without a durable store: a paused queue admits tasks but starts
 * none until it is resumed (running ones finish); a paused schedule fires no slot (the slots
 * that come due are skipped) and runs now on demand as a manual record. Unknown names are
 * refused and change nothing. (The same across instances and restarts on every durable store:
 * the pause suite of the store conformance.)
 */
import { describe, expect, it } from 'vitest'
import {
  QueueNotFoundError,
  ScheduleNotFoundError,
  TaskManager,
  toIso,
} from '../../src/tasks/index.js'
import { fakeClock, fakeTimer, quietLogger, SCHEDULE_START } from './helpers.js'

/** A task that runs until the test opens its gate. */
function gate() {
  let open: () => void = () => undefined
  const opened = new Promise<void>((resolve) => {
    open = resolve
  })
  return { opened, open: () => open() }
}

describe('queue pause and resume', () => {
  it('admits tasks into a paused queue without starting them; running ones finish; resume starts them', async () => {
    const manager = new TaskManager({ logger: quietLogger, queues: { mail: { concurrency: 2 } } })
    const first = gate()
    const started: string[] = []
    const send = manager.task({ name: 'send', queue: 'mail' }, async (label: string) => {
      started.push(label)
      if (label === 'long') await first.opened
    })
    await manager.startup()
    const long = await manager.addTask(send, ['long'])
    expect(manager.localTask(long)?.status).toBe('running')

    const stats = await manager.pauseQueue('mail')
    expect(stats).toMatchObject({ name: 'mail', paused: true, running: 1, pending: 0 })
    const waiting = await manager.addTask(send, ['waiting'])
    // A queue that was not paused would have started it at once (a free slot).
    expect(manager.localTask(waiting)?.status).toBe('pending')
    expect(manager.queueStats().find((queue) => queue.name === 'mail')).toMatchObject({
      paused: true,
      pending: 1,
      running: 1,
    })
    // The other queues are not affected.
    expect(manager.queueStats().find((queue) => queue.name === 'default')?.paused).toBe(false)

    first.open()
    await expect.poll(() => manager.localTask(long)?.status).toBe('success')
    expect(manager.localTask(waiting)?.status).toBe('pending')
    expect(started).toEqual(['long'])

    expect(await manager.resumeQueue('mail')).toMatchObject({ name: 'mail', paused: false })
    await expect.poll(() => manager.localTask(waiting)?.status).toBe('success')
    expect(started).toEqual(['long', 'waiting'])
    await manager.shutdown()
  })

  it('pausing twice and resuming a queue that is not paused change nothing else', async () => {
    const manager = new TaskManager({ logger: quietLogger })
    await manager.pauseQueue('default')
    expect((await manager.pauseQueue('default')).paused).toBe(true)
    expect((await manager.resumeQueue('default')).paused).toBe(false)
    expect((await manager.resumeQueue('default')).paused).toBe(false)
    const job = manager.task({ name: 'job' }, () => 1)
    const id = await manager.addTask(job, [])
    await expect.poll(() => manager.localTask(id)?.status).toBe('success')
    await manager.shutdown()
  })

  it('refuses an unknown queue with QueueNotFoundError and changes nothing', async () => {
    const manager = new TaskManager({ logger: quietLogger, queues: { mail: {} } })
    const before = manager.queueStats()
    await expect(manager.pauseQueue('nope')).rejects.toThrow(QueueNotFoundError)
    await expect(manager.resumeQueue('nope')).rejects.toThrow(QueueNotFoundError)
    // A name inherited from Object.prototype is no queue either.
    await expect(manager.pauseQueue('constructor')).rejects.toThrow(QueueNotFoundError)
    expect(manager.queueStats()).toEqual(before)
    await manager.shutdown()
  })

  it('counts a paused queue’s waiting tasks against max_size', async () => {
    const manager = new TaskManager({ logger: quietLogger, queues: { small: { maxSize: 1 } } })
    const job = manager.task({ name: 'small-job', queue: 'small' }, () => 1)
    await manager.pauseQueue('small')
    await manager.addTask(job, [])
    await expect(manager.addTask(job, [])).rejects.toMatchObject({ code: 'QUEUE_FULL' })
    await manager.resumeQueue('small')
    await manager.shutdown()
  })
})

describe('schedule pause, resume and run now', () => {
  it('skips the slots that come due while paused, fires again after resume, and runs now as manual', async () => {
    const clock = fakeClock(SCHEDULE_START)
    const timer = fakeTimer()
    const manager = new TaskManager({ clock, timer, logger: quietLogger })
    let runs = 0
    manager.schedule({ every: 2 }, function beat() {
      runs++
    })
    await manager.startup()
    const paused = await manager.pauseSchedule('beat')
    expect(paused).toMatchObject({ name: 'beat', paused: true })
    expect(manager.listSchedules()[0]?.paused).toBe(true)

    // The slot at +2 s comes due while paused: skipped.
    clock.advance(2000)
    timer.fire()
    const manualId = await manager.runSchedule('beat')
    await expect.poll(() => manager.localTask(manualId)?.status).toBe('success')
    expect(manager.localTask(manualId)?.source).toBe('manual')

    expect((await manager.resumeSchedule('beat')).paused).toBe(false)
    clock.advance(2000)
    timer.fire()
    const scheduled = async () =>
      (await manager.listTasks({ perPage: 50 })).items.filter((r) => r.source === 'scheduled')
    await expect.poll(async () => (await scheduled()).length).toBe(1)
    expect((await scheduled()).map((record) => record.tags.slot)).toEqual([
      toIso(SCHEDULE_START + 4000),
    ])
    await expect.poll(() => runs).toBe(2)
    await manager.shutdown()
  })

  it('refuses an unknown schedule with ScheduleNotFoundError and changes nothing', async () => {
    const manager = new TaskManager({ logger: quietLogger })
    manager.schedule({ every: 60 }, function known() {})
    const before = manager.listSchedules()
    await expect(manager.pauseSchedule('nope')).rejects.toThrow(ScheduleNotFoundError)
    await expect(manager.resumeSchedule('nope')).rejects.toThrow(ScheduleNotFoundError)
    await expect(manager.runSchedule('toString')).rejects.toThrow(ScheduleNotFoundError)
    expect(manager.listSchedules()).toEqual(before)
    expect((await manager.listTasks()).total).toBe(0)
    await manager.shutdown()
  })
})
