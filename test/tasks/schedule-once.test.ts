/**
 * `manager.scheduleOnce` on a SQLite store with a fake clock and timer: replace by run key,
 * cancel, re-arm after a restart, and the error without a durable store.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import {
  ScheduleOnceUnsupportedError,
  TaskManager,
  TaskValidationError,
} from '../../src/tasks/index.js'
import { type FakeClock, fakeClock, fakeTimer, quietLogger, SCHEDULE_START } from './helpers.js'

const dir = mkdtempSync(join(tmpdir(), 'sy-schedule-once-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

function setup(path: string, clock: FakeClock) {
  const timer = fakeTimer()
  const manager = new TaskManager({ store: path, clock, timer, logger: quietLogger })
  const seen: string[] = []
  const remind = manager.task({ name: 'remind' }, (who: string) => {
    seen.push(who)
  })
  return { manager, timer, seen, remind }
}

describe('manager.scheduleOnce', () => {
  it('replaces by run key, cancels, and runs once when due', async () => {
    const clock = fakeClock(SCHEDULE_START)
    const { manager, timer, seen, remind } = setup(join(dir, 'once.db'), clock)
    await manager.startup()
    await manager.scheduleOnce(remind, {
      args: ['ada'],
      runAt: SCHEDULE_START + 5000,
      runKey: 'r1',
    })
    await manager.scheduleOnce(remind, {
      args: ['grace'],
      runAt: new Date(SCHEDULE_START + 3000),
      runKey: 'r1',
      tags: { kind: 'reminder' },
    })
    await manager.scheduleOnce(remind, {
      args: ['linus'],
      runAt: SCHEDULE_START + 4000,
      runKey: 'r2',
    })
    expect((await manager.listScheduled()).map((entry) => entry.run_key)).toEqual(['r1', 'r2'])
    expect(await manager.listScheduled({ before: SCHEDULE_START + 3500 })).toHaveLength(1)
    expect(await manager.cancelScheduled('r2')).toBe(true)
    expect(await manager.cancelScheduled('r2')).toBe(false)

    clock.advance(2000)
    timer.fire()
    await new Promise((resolve) => setTimeout(resolve, 50))
    expect(seen).toEqual([])
    clock.advance(2000)
    timer.fire()
    await expect.poll(() => seen).toEqual(['grace'])
    const record = (await manager.listTasks()).items[0]!
    expect(record.source).toBe('scheduled')
    expect(record.tags).toEqual({ kind: 'reminder' })
    await expect.poll(async () => (await manager.listScheduled()).length).toBe(0)
    clock.advance(10_000)
    timer.fire()
    await new Promise((resolve) => setTimeout(resolve, 50))
    expect(seen).toEqual(['grace'])
    await manager.shutdown()
  })

  it('re-arms stored entries after a restart', async () => {
    const path = join(dir, 'restart.db')
    const clock = fakeClock(SCHEDULE_START)
    const first = setup(path, clock)
    await first.manager.startup()
    await first.manager.scheduleOnce(first.remind, {
      args: ['ada'],
      runAt: SCHEDULE_START + 60_000,
    })
    await first.manager.shutdown()

    const second = setup(path, clock)
    await second.manager.startup()
    clock.advance(61_000)
    second.timer.fire()
    await expect.poll(() => second.seen).toEqual(['ada'])
    await second.manager.shutdown()
  })

  it('gives the run the group and timeout it was scheduled with', async () => {
    const clock = fakeClock(SCHEDULE_START)
    const timer = fakeTimer()
    const manager = new TaskManager({
      store: join(dir, 'grouped.db'),
      clock,
      timer,
      logger: quietLogger,
      queues: { tenants: { groupConcurrency: 1 } },
    })
    const ran: string[] = []
    const sync = manager.task({ name: 'sync', queue: 'tenants' }, (tenant: string) => {
      ran.push(tenant)
    })
    await manager.startup()
    try {
      await manager.scheduleOnce(sync, {
        args: ['acme'],
        runAt: SCHEDULE_START + 1000,
        runKey: 'sync-acme',
        group: 'acme',
        timeout: 30,
      })
      const [entry] = await manager.listScheduled()
      expect(entry).toMatchObject({ run_key: 'sync-acme', group: 'acme', timeout: 30 })
      clock.advance(1000)
      timer.fire()
      await expect.poll(() => ran, { timeout: 15_000 }).toEqual(['acme'])
      const { items } = await manager.listTasks()
      expect(items.map((record) => [record.func_name, record.group, record.source])).toEqual([
        ['sync', 'acme', 'scheduled'],
      ])
    } finally {
      await manager.shutdown()
    }
  })

  it('rejects bad input and managers without a durable store, storing nothing', async () => {
    const clock = fakeClock(SCHEDULE_START)
    const { manager, remind } = setup(join(dir, 'bad.db'), clock)
    await expect(manager.scheduleOnce(remind, { args: ['x'], runAt: 'soon' })).rejects.toThrow(
      TaskValidationError,
    )
    const other = new TaskManager({ logger: quietLogger })
    const foreign = other.task({ name: 'remind' }, (_who: string) => undefined)
    await expect(
      manager.scheduleOnce(foreign, { args: ['x'], runAt: SCHEDULE_START }),
    ).rejects.toThrow(TaskValidationError)
    // A group the function's queue cannot take, or a bad timeout: refused before storing.
    await expect(
      manager.scheduleOnce(remind, { args: ['x'], runAt: SCHEDULE_START, group: 'acme' }),
    ).rejects.toThrow(/has no groupConcurrency/)
    await expect(
      manager.scheduleOnce(remind, { args: ['x'], runAt: SCHEDULE_START, timeout: -1 }),
    ).rejects.toThrow(TaskValidationError)
    expect(await manager.listScheduled()).toEqual([])
    await expect(
      other.scheduleOnce(foreign, { args: ['x'], runAt: SCHEDULE_START }),
    ).rejects.toThrow(ScheduleOnceUnsupportedError)
    await expect(other.cancelScheduled('r')).rejects.toThrow(ScheduleOnceUnsupportedError)
    await expect(other.listScheduled()).rejects.toThrow(ScheduleOnceUnsupportedError)
    await manager.shutdown()
  })
})
