/**
 * The in-memory one-off store (debounced tasks of a manager without a durable store) passes the
 * one-off and debounce conformance suites, and is bounded.
 */
import { describe, expect, it } from 'vitest'
import { StoreError } from '../../../src/tasks/stores/errors.js'
import { memoryOneOffs } from '../../../src/tasks/stores/memory-one-offs.js'
import type { DurableTaskStore } from '../../../src/tasks/stores/ports.js'
import { oneOff, T0 } from '../persistence/conformance/context.js'
import { debounceSuite, oneOffSuite } from '../persistence/conformance/one-offs.js'

const shared = memoryOneOffs()
// The suites only use the one-off port; both "instances" share the one map, as one process does.
const store = { oneOffs: shared } as unknown as DurableTaskStore
const context = { a: () => store, b: () => store, test: it }

describe('memory one-off store', () => {
  describe('one-off schedules', () => oneOffSuite(context))
  describe('debounced entries', () => debounceSuite(context))

  it('refuses an entry beyond its bound and keeps the others', async () => {
    const small = memoryOneOffs(2)
    await small.upsert(oneOff('one', T0))
    expect(await small.debounce(oneOff('two', T0, { task_id: 't2' }))).toBe('t2')
    await expect(small.upsert(oneOff('three', T0))).rejects.toThrow(StoreError)
    await expect(small.debounce(oneOff('three', T0, { task_id: 't3' }))).rejects.toThrow(StoreError)
    // Replacing an entry already there is not a new one.
    expect(await small.debounce(oneOff('two', T0 + 5, { task_id: 't4' }))).toBe('t2')
    expect(await small.count()).toBe(2)
  })
})
