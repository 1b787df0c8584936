/**
 * `manager.schedule`: periodic runs driven by a fake clock and a fake timer; invalid triggers
 * rejected at registration; two managers sharing one SQLite file fire each slot exactly once.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { ScheduleError, TaskManager, toIso, type TaskRecord } from '../../src/tasks/index.js'
import { sqliteStore } from '../../src/tasks/stores/index.js'
import { fakeClock, fakeTimer, quietLogger, SCHEDULE_START, until } from './helpers.js'

const dir = mkdtempSync(join(tmpdir(), 'sy-schedule-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

async function scheduled(manager: TaskManager): Promise<TaskRecord[]> {
  const page = await manager.listTasks({ perPage: 500 })
  return page.items.filter((record) => record.source === 'scheduled').reverse()
}

describe('manager.schedule', () => {
  it('refuses a trigger with both every and cron or with unknown keys; nothing is registered', () => {
    const manager = new TaskManager({ logger: quietLogger })
    const job = (): void => undefined
    expect(() =>
      manager.schedule({ every: 5, cron: '* * * * *' } as never, job, { name: 'both' }),
    ).toThrow(/Give either every or cron, not both/)
    expect(() => manager.schedule({ evry: 5 } as never, job, { name: 'typo' })).toThrow(
      /Unknown trigger key "evry"/,
    )
    expect(() =>
      manager.schedule({ cron: '0 9 * * *', tz: 'Europe/Paris' } as never, job, { name: 'tz' }),
    ).toThrow(ScheduleError)
    expect(manager.listSchedules()).toEqual([])
    expect(manager.getRegisteredTask('both')).toBeUndefined()
    expect(manager.getRegisteredTask('typo')).toBeUndefined()
    expect(manager.getRegisteredTask('tz')).toBeUndefined()
  })

  it('fires every slot as a scheduled record, and runOnStartup once at startup', async () => {
    const clock = fakeClock(SCHEDULE_START)
    const timer = fakeTimer()
    const manager = new TaskManager({ clock, timer, logger: quietLogger })
    let runs = 0
    manager.schedule(
      { every: 2 },
      function heartbeat() {
        runs++
      },
      { runOnStartup: true, retries: 1 },
    )
    expect(manager.listSchedules()).toEqual([
      {
        name: 'heartbeat',
        trigger: 'every 2s',
        next_run: SCHEDULE_START + 2000,
        last_lag_seconds: null,
        paused: false,
      },
    ])
    await manager.startup()
    await expect.poll(() => runs).toBe(1)
    for (let second = 1; second <= 6; second++) {
      clock.advance(1000)
      timer.fire()
      await expect
        .poll(async () => (await scheduled(manager)).length)
        .toBe(1 + Math.floor(second / 2))
    }
    await expect.poll(() => runs).toBe(4)
    const records = await scheduled(manager)
    expect(records.every((record) => record.func_name === 'heartbeat')).toBe(true)
    expect(records.map((record) => record.tags.slot).filter(Boolean)).toEqual([
      toIso(SCHEDULE_START + 2000),
      toIso(SCHEDULE_START + 4000),
      toIso(SCHEDULE_START + 6000),
    ])
    await manager.shutdown()
  })

  it('rejects invalid triggers and duplicate names, registering nothing', () => {
    const manager = new TaskManager({ logger: quietLogger })
    const job = (): void => undefined
    expect(() => manager.schedule({ cron: '61 * * * *' }, job, { name: 'a' })).toThrow(
      ScheduleError,
    )
    expect(() => manager.schedule({ cron: '* * *' }, job, { name: 'a' })).toThrow(ScheduleError)
    expect(() =>
      manager.schedule({ cron: '0 9 * * *', timezone: 'Mars/Olympus' }, job, { name: 'a' }),
    ).toThrow(ScheduleError)
    expect(() => manager.schedule({ every: 0 }, job, { name: 'a' })).toThrow(ScheduleError)
    expect(manager.registeredTasks()).toHaveLength(0)
    expect(manager.listSchedules()).toEqual([])
    manager.schedule({ cron: '0 9 * * 1', timezone: 'Europe/Paris' }, job, { name: 'a' })
    expect(() => manager.schedule({ every: 5 }, job, { name: 'a' })).toThrow(ScheduleError)
    expect(manager.registeredTasks()).toHaveLength(1)
  })

  it('two managers on one SQLite file fire a 1-second schedule once per slot', async () => {
    const path = join(dir, 'slots.db')
    const clock = fakeClock(SCHEDULE_START)
    const timers = [fakeTimer(), fakeTimer()]
    const managers = timers.map(
      (timer) => new TaskManager({ store: path, clock, timer, logger: quietLogger }),
    )
    for (const manager of managers) {
      manager.schedule({ every: 1 }, () => undefined, { name: 'tick' })
    }
    for (const manager of managers) await manager.startup()
    for (let second = 1; second <= 10; second++) {
      clock.advance(1000)
      // Both instances' records are in the shared store: one list shows them all. The timers
      // fire again while waiting: a tick still busy with the last slot lets a fire pass.
      await until(async () => {
        for (const timer of timers) timer.fire()
        return (await scheduled(managers[0]!)).length === second
      })
    }
    const slots = (await scheduled(managers[1]!)).map((record) => record.tags.slot)
    expect(slots.sort()).toEqual(
      Array.from({ length: 10 }, (_, i) => toIso(SCHEDULE_START + (i + 1) * 1000)),
    )
    for (const manager of managers) await manager.shutdown()
  })

  it('a slot enqueued by an instance that died before confirming it is not enqueued again', async () => {
    const path = join(dir, 'takeover.db')
    const clock = fakeClock(SCHEDULE_START)
    // Instance A enqueues its slots but every confirmation is lost, as if it died right after
    // each enqueue; instance B takes the stale claims over once the lease has passed.
    const lossy = sqliteStore(path)
    lossy.slots.confirm = () => Promise.resolve()
    const timers = [fakeTimer(), fakeTimer()]
    const runs: string[] = []
    const managers = [lossy, path].map(
      (store, i) => new TaskManager({ store, clock, timer: timers[i], logger: quietLogger }),
    )
    for (const manager of managers) {
      manager.schedule(
        { every: 1 },
        function tick() {
          runs.push(toIso(clock.now()))
        },
        { name: 'tick' },
      )
    }
    for (const manager of managers) await manager.startup()
    // Only A ticks for the first slot: it claims and enqueues it, and never confirms.
    clock.advance(1000)
    timers[0]!.fire()
    await expect.poll(async () => (await scheduled(managers[0]!)).length).toBe(1)
    const first = (await scheduled(managers[0]!))[0]!
    await managers[0]!.shutdown()
    // B now ticks alone, past the 30-second slot lease: it takes A's claim over and finds its
    // task.
    for (let second = 2; second <= 35; second++) {
      clock.advance(1000)
      await until(async () => {
        timers[1]!.fire()
        return (await scheduled(managers[1]!)).length === second
      })
    }
    const records = await scheduled(managers[1]!)
    const slots = records.map((record) => record.tags.slot)
    expect(new Set(slots).size).toBe(slots.length)
    expect(slots.filter((slot) => slot === first.tags.slot)).toHaveLength(1)
    expect(records.filter((record) => record.task_id === first.task_id)).toHaveLength(1)
    expect(runs.filter((at) => at === first.tags.slot)).toHaveLength(1)
    expect(runs).toHaveLength(35)
    await managers[1]!.shutdown()
  })
})
