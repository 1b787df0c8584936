/**
 * The pace of the stream's relay of other instances' changes: one read of the change feed per
 * `relayInterval` while nothing happens, and the next read after 200 ms when a round found
 * another instance's changes (so a busy cluster's changes reach an open page at once).
 * Driven by fake timers over a scripted change feed: no real waiting.
 */
import { afterEach, describe, expect, it, vi } from 'vitest'
import { TaskStream } from '../../../src/tasks/admin/stream.js'
import type { TaskManager } from '../../../src/tasks/manager.js'
import type { DurableTaskStore, TaskChange } from '../../../src/tasks/stores/ports.js'
import { quietLogger } from '../helpers.js'

/**
 * A stream over a change feed that answers `script` round after round (then nothing), and
 * `readsAfter(ms)`: the feed's reads so far once the fake clock has moved on by `ms`.
 */
function pacedStream(script: TaskChange[][]) {
  let reads = 0
  let next = 0
  const store = {
    changes: {
      origin: 'here',
      read: () => {
        reads++
        const changes = script.shift() ?? []
        next += changes.length
        return Promise.resolve({ position: String(next), changes })
      },
    },
    records: { get: () => Promise.resolve(null) },
  } as unknown as DurableTaskStore
  const manager = {
    durableStore: store,
    subscribe: () => () => undefined,
    subscribeLogs: () => () => undefined,
  } as unknown as TaskManager
  const stream = new TaskStream({
    manager,
    displayFuncArgs: false,
    hub: {},
    relayInterval: 10,
    logger: quietLogger,
    sessionValid: () => Promise.resolve(true),
    now: () => Date.now(),
  })
  const readsAfter = async (ms: number) => {
    await vi.advanceTimersByTimeAsync(ms)
    return reads
  }
  return { stream, readsAfter }
}

const change = (id: string, origin: string): TaskChange => ({ id, origin, task_ids: [`t${id}`] })

afterEach(() => {
  vi.useRealTimers()
})

describe('relay pace', () => {
  it('reads every interval while idle, and again after 200 ms when others wrote', async () => {
    vi.useFakeTimers()
    // Round 1 (start): nothing; round 2: another instance's write; round 3: only our own.
    const { stream, readsAfter } = pacedStream([[], [change('1', 'there')], [change('2', 'here')]])
    stream.start()
    expect(await readsAfter(0)).toBe(1)
    expect(await readsAfter(9_999)).toBe(1)
    expect(await readsAfter(1)).toBe(2)
    // The round found another instance's change: the next one comes after 200 ms.
    expect(await readsAfter(200)).toBe(3)
    // Our own change is no reason to hurry: back to the interval.
    expect(await readsAfter(9_999)).toBe(3)
    expect(await readsAfter(1)).toBe(4)
    stream.close()
    // Closed: no more rounds.
    expect(await readsAfter(60_000)).toBe(4)
  })
})
