import { describe, expect, it } from 'vitest'
import {
  OneOffNextRunError,
  PeriodicTrigger,
  ScheduledEntry,
  ScheduleError,
} from '../../../src/tasks/scheduling/index.js'

const T0 = Date.parse('2026-11-21T12:00:00.300Z')

describe('periodic triggers', () => {
  it('aligns interval slots to the epoch so every instance computes the same ones', () => {
    const trigger = new PeriodicTrigger({ every: 5 })
    expect(trigger.nextSlot(T0)).toBe(Date.parse('2026-11-21T12:00:05Z'))
    expect(trigger.slotsBetween(T0, T0 + 12_000, 100)).toEqual([
      Date.parse('2026-11-21T12:00:05Z'),
      Date.parse('2026-11-21T12:00:10Z'),
    ])
    expect(new PeriodicTrigger({ every: 1.5 }).slotsBetween(0, 4500, 10)).toEqual([
      1500, 3000, 4500,
    ])
    expect(trigger.slotsBetween(T0, T0 + 60_000, 3)).toHaveLength(3)
  })

  it('computes cron slots in a timezone', () => {
    const utc = new PeriodicTrigger({ cron: '*/15 * * * *' })
    expect(utc.nextSlot(T0)).toBe(Date.parse('2026-11-21T12:15:00Z'))
    const paris = new PeriodicTrigger({ cron: '0 9 * * *', timezone: 'Europe/Paris' })
    expect(paris.nextSlot(T0)).toBe(Date.parse('2026-11-22T08:00:00Z'))
    expect(paris.description).toBe('cron 0 9 * * * (Europe/Paris)')
  })

  it('rejects invalid triggers with a clear ScheduleError', () => {
    for (const every of [0, 0.5, -1, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => new PeriodicTrigger({ every })).toThrow(ScheduleError)
    }
    expect(() => new PeriodicTrigger({ cron: 'every minute' })).toThrow(/five-field/)
    expect(() => new PeriodicTrigger({ cron: '* * * * * *' })).toThrow(/five-field/)
    expect(() => new PeriodicTrigger({ cron: '61 * * * *' })).toThrow(ScheduleError)
    expect(() => new PeriodicTrigger({ cron: '0 9 * * *', timezone: 'Mars/Olympus' })).toThrow(
      ScheduleError,
    )
  })
})

describe('scheduled entries', () => {
  it('periodic entries recur and compute their next run', () => {
    const entry = new ScheduledEntry('tick', new PeriodicTrigger({ every: 60 }), false)
    expect(entry.recurring).toBe(true)
    expect(entry.nextRun(0)).toBe(60_000)
  })

  it('next run of a one-off entry is a clear error', () => {
    const entry = new ScheduledEntry('report-42', null, true)
    expect(entry.recurring).toBe(false)
    expect(entry.cancelled).toBe(false)
    expect(() => entry.nextRun(T0)).toThrow(OneOffNextRunError)
    expect(() => entry.nextRun(T0)).toThrow(/one-off entry "report-42" has no next run/)
  })
})

describe('strict trigger objects', () => {
  it('refuses every and cron together', () => {
    const both = { every: 5, cron: '* * * * *' } as never
    expect(() => new PeriodicTrigger(both)).toThrow(ScheduleError)
    expect(() => new PeriodicTrigger(both)).toThrow('Give either every or cron, not both.')
  })

  it('refuses unknown keys, naming them and the allowed ones', () => {
    let error: unknown
    try {
      new PeriodicTrigger({ evry: 5 } as never)
    } catch (caught) {
      error = caught
    }
    expect(error).toBeInstanceOf(ScheduleError)
    expect((error as ScheduleError).code).toBe('INVALID_SCHEDULE')
    expect((error as ScheduleError).message).toBe(
      'Unknown trigger key "evry": a trigger takes every, or cron with an optional timezone.',
    )
    expect((error as ScheduleError).toJSON().error).toMatchObject({
      unknown_keys: ['evry'],
      allowed_keys: ['every', 'cron', 'timezone'],
    })
    expect(() => new PeriodicTrigger({ cron: '0 9 * * *', tz: 'Europe/Paris' } as never)).toThrow(
      /Unknown trigger key "tz"/,
    )
    expect(() => new PeriodicTrigger({ every: 5, a: 1, b: 2 } as never)).toThrow(
      /Unknown trigger keys "a", "b"/,
    )
  })

  it('refuses a timezone on an every trigger, an empty trigger and a non-object', () => {
    expect(() => new PeriodicTrigger({ every: 5, timezone: 'UTC' } as never)).toThrow(
      /timezone applies to cron triggers only/,
    )
    expect(() => new PeriodicTrigger({} as never)).toThrow(/needs every .* or cron/)
    expect(() => new PeriodicTrigger(null as never)).toThrow(ScheduleError)
    expect(() => new PeriodicTrigger([] as never)).toThrow(ScheduleError)
  })
})
