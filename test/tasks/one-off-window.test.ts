/**
 * The one-off scheduler's window options, `oneOffHorizon` and `oneOffRefillInterval`: how far
 * ahead the window reaches and how often it is read from the store, and their validation.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import {
  TaskManager,
  TaskValidationError,
  sqliteStore,
  type TaskManagerOptions,
} from '../../src/tasks/index.js'
import { fakeClock, fakeTimer, quietLogger, SCHEDULE_START, type FakeClock } from './helpers.js'

const dir = mkdtempSync(join(tmpdir(), 'sy-one-off-window-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** A manager on `path` whose reads of the one-off window are recorded (`now`, `until`). */
function instance(path: string, clock: FakeClock, options: Partial<TaskManagerOptions> = {}) {
  const store = sqliteStore(path)
  const reads: Array<{ now: number; until: number }> = []
  let settled = 0
  const fetchWindow = store.oneOffs.fetchWindow.bind(store.oneOffs)
  store.oneOffs.fetchWindow = async (until, now, limit) => {
    reads.push({ now, until })
    try {
      return await fetchWindow(until, now, limit)
    } finally {
      settled++
    }
  }
  const timer = fakeTimer()
  const manager = new TaskManager({ store, clock, timer, logger: quietLogger, ...options })
  const seen: string[] = []
  const remind = manager.task({ name: 'remind' }, (who: string) => {
    seen.push(who)
  })
  /** One scheduler tick, waiting for its read of the window (if it made one) to finish. */
  const tick = async () => {
    timer.fire()
    await expect.poll(() => settled).toBe(reads.length)
  }
  return { manager, remind, seen, reads, tick }
}

describe('one-off window options', () => {
  it('the window reaches oneOffHorizon ahead and is read every oneOffRefillInterval', async () => {
    const path = join(dir, 'window.db')
    const clock = fakeClock(SCHEDULE_START)
    const b = instance(path, clock, { oneOffHorizon: 60, oneOffRefillInterval: 10 })
    // Another instance stores the entry; its own scheduler never ticks.
    const a = instance(path, clock)
    await b.manager.startup()
    await a.manager.startup()
    await b.tick()
    await a.manager.scheduleOnce(a.remind, {
      args: ['ada'],
      runAt: SCHEDULE_START + 30_000,
      runKey: 'later',
    })
    for (let second = 5; second <= 30; second += 5) {
      clock.advance(5000)
      await b.tick()
    }
    // Read every 10 s (the default, 150 s, would not have read it again before it was due).
    expect(b.reads.map((read) => read.now - SCHEDULE_START)).toEqual([0, 10_000, 20_000, 30_000])
    expect(b.reads.every((read) => read.until - read.now === 60_000)).toBe(true)
    await expect.poll(() => b.seen).toEqual(['ada'])
    expect(a.seen).toEqual([])
    await a.manager.shutdown()
    await b.manager.shutdown()
  })

  it('defaults: a 300 s window read every 150 s; a refill interval alone is half the horizon', async () => {
    const clock = fakeClock(SCHEDULE_START)
    const plain = instance(join(dir, 'defaults.db'), clock)
    const short = instance(join(dir, 'short.db'), clock, { oneOffHorizon: 20 })
    await plain.manager.startup()
    await short.manager.startup()
    for (let second = 0; second <= 150; second += 10) {
      if (second > 0) clock.advance(10_000)
      await plain.tick()
      await short.tick()
    }
    expect(plain.reads.map((read) => read.now - SCHEDULE_START)).toEqual([0, 150_000])
    expect(plain.reads[0]!.until - plain.reads[0]!.now).toBe(300_000)
    // horizon 20 s: read every 10 s
    expect(short.reads).toHaveLength(16)
    expect(short.reads[0]!.until - short.reads[0]!.now).toBe(20_000)
    await plain.manager.shutdown()
    await short.manager.shutdown()
  })

  it('refuses a non-positive or non-numeric value and a refill interval above the horizon', () => {
    const bad: Array<[Partial<TaskManagerOptions>, RegExp]> = [
      [{ oneOffHorizon: 0 }, /oneOffHorizon must be a positive number of seconds/],
      [{ oneOffHorizon: -5 }, /oneOffHorizon must be a positive number of seconds/],
      [{ oneOffHorizon: Number.NaN }, /oneOffHorizon must be a positive number of seconds/],
      [
        { oneOffHorizon: '300' as unknown as number },
        /oneOffHorizon must be a positive number of seconds/,
      ],
      [{ oneOffRefillInterval: 0 }, /oneOffRefillInterval must be a positive number of seconds/],
      [
        { oneOffRefillInterval: Number.POSITIVE_INFINITY },
        /oneOffRefillInterval must be a positive number of seconds/,
      ],
      [
        { oneOffHorizon: 60, oneOffRefillInterval: 61 },
        /oneOffRefillInterval \(61 s\) must not exceed oneOffHorizon \(60 s\)/,
      ],
      [{ oneOffRefillInterval: 301 }, /must not exceed oneOffHorizon \(300 s\)/],
    ]
    for (const [options, message] of bad) {
      let thrown: unknown
      try {
        new TaskManager({ logger: quietLogger, ...options })
      } catch (error) {
        thrown = error
      }
      expect(thrown, JSON.stringify(options)).toBeInstanceOf(TaskValidationError)
      expect((thrown as Error).message).toMatch(message)
    }
    // the horizon itself is a valid refill interval
    expect(
      () => new TaskManager({ logger: quietLogger, oneOffHorizon: 30, oneOffRefillInterval: 30 }),
    ).not.toThrow()
  })
})
