import { describe, expect, it } from 'vitest'
import { slotTaskId } from '../../src/tasks/slot-task-id.js'
import { newTaskId } from '../../src/tasks/task-id.js'

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

/** The milliseconds a version 7 UUID starts with. */
const timeOf = (id: string) => Number.parseInt(id.slice(0, 8) + id.slice(9, 13), 16)

describe('task ids', () => {
  it('are distinct version 7 UUIDs across several batches', () => {
    const ids = Array.from({ length: 1000 }, () => newTaskId())
    for (const id of ids) expect(id).toMatch(UUID_V7)
    expect(new Set(ids).size).toBe(ids.length)
  })

  it('start with the time they were made, so later ids sort after earlier ones', () => {
    const before = Date.now()
    const id = newTaskId()
    expect(timeOf(id)).toBeGreaterThanOrEqual(before)
    expect(timeOf(id)).toBeLessThanOrEqual(Date.now())
    expect(timeOf(newTaskId(Date.parse('2026-11-28T17:00:00Z')))).toBe(
      Date.parse('2026-11-28T17:00:00Z'),
    )
    // Each made at a later millisecond than the one before: in order as strings too.
    const ids = [0, 1, 2, 256, 65_535, 65_536, 2 ** 40].map((ms) =>
      newTaskId(1_700_000_000_000 + ms),
    )
    expect([...ids].sort()).toEqual(ids)
    expect(ids.map(timeOf)).toEqual(
      ids.map((_, i) => 1_700_000_000_000 + [0, 1, 2, 256, 65_535, 65_536, 2 ** 40][i]!),
    )
  })

  it('use every hex digit in the random positions', () => {
    const digits = new Set<string>()
    for (let index = 0; index < 200; index++) {
      for (const char of newTaskId().slice(24)) digits.add(char)
    }
    expect([...digits].sort().join('')).toBe('0123456789abcdef')
  })
})

describe('slot task ids', () => {
  const UUID_V8 = /^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

  it('are the same for the same schedule and slot, on any instance', () => {
    expect(slotTaskId('report', 1_700_000_000_000)).toBe(slotTaskId('report', 1_700_000_000_000))
    expect(slotTaskId('report', 1_700_000_000_000)).toMatch(UUID_V8)
  })

  it('differ between slots and between schedules, even when name and time could run together', () => {
    const ids = [
      slotTaskId('report', 1_700_000_000_000),
      slotTaskId('report', 1_700_000_001_000),
      slotTaskId('digest', 1_700_000_000_000),
      slotTaskId('report1', 700_000_000_000),
    ]
    expect(new Set(ids).size).toBe(ids.length)
  })
})
