import { describe, expect, it } from 'vitest'
import { createEngine, ManualClock } from '../../src/index.js'

describe('ManualClock', () => {
  it('starts where told, moves only forward, and formats offsets', () => {
    const clock = new ManualClock('2026-11-21T12:00:00Z')
    expect(clock.now()).toBe(Date.parse('2026-11-21T12:00:00Z'))
    clock.advance(60_000)
    expect(clock.iso()).toBe('2026-11-21T12:01:00.000Z')
    expect(clock.iso(1000)).toBe('2026-11-21T12:01:01.000Z')
    expect(() => clock.advance(-1)).toThrow(RangeError)
    expect(() => new ManualClock('not a date')).toThrow(RangeError)
    expect(clock.now()).toBe(Date.parse('2026-11-21T12:01:00Z'))
  })

  it('drives a maintenance window of the engine without waiting', async () => {
    const clock = new ManualClock('2026-11-21T12:00:00Z')
    const engine = createEngine({ clock, store: 'memory' })
    engine.registerRoute('GET', '/payments')
    await engine.start()
    try {
      await engine.schedule('GET:/payments', {
        start: clock.iso(3_600_000),
        end: clock.iso(7_200_000),
      })
      clock.advance(3_600_000)
      await engine.runDue()
      expect(engine.getState('GET:/payments')[0]?.status).toBe('maintenance')
      clock.advance(3_600_000)
      await engine.runDue()
      expect(engine.getState('GET:/payments')[0]?.status).toBe('active')
    } finally {
      await engine.close()
    }
  })
})
