import { describe, expect, it } from 'vitest'
import { slotTaskId } from '../../src/tasks/slot-task-id.js'
import { newTaskId } from '../../src/tasks/task-id.js'

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

describe('task ids', () => {
  it('are distinct version 4 UUIDs across several batches', () => {
    const ids = Array.from({ length: 1000 }, () => newTaskId())
    for (const id of ids) expect(id).toMatch(UUID_V4)
    expect(new Set(ids).size).toBe(ids.length)
  })

  it('use every hex digit in the random positions', () => {
    const digits = new Set<string>()
    for (let index = 0; index < 200; index++) {
      for (const char of newTaskId().slice(0, 8)) digits.add(char)
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
