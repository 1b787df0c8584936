/**
 * A stored-config load that was read before a local pause or resume must not undo it: the
 * operator's `resumeQueue` answers and keeps `paused: false` even when a load started while
 * the queue was paused finishes after the resume.
 */
import { describe, expect, it } from 'vitest'
import { memoryGates } from '../../src/tasks/groups/memory-gates.js'
import { QueueConfigSync } from '../../src/tasks/queues/queue-configs.js'
import { QueueSet } from '../../src/tasks/queues/queue-set.js'
import type { DurableTaskStore, StoredQueueConfig } from '../../src/tasks/stores/ports.js'

/** A store whose config reads answer when the test says, with what was stored when sent. */
function heldStore() {
  const stored = new Map<string, StoredQueueConfig>()
  const reads: (() => void)[] = []
  let announced = 0
  const store = {
    admin: {
      queueConfigs: () => {
        const snapshot = [...stored.values()].map((config) => ({ ...config }))
        return new Promise<StoredQueueConfig[]>((resolve) => reads.push(() => resolve(snapshot)))
      },
      putQueueConfig: (config: StoredQueueConfig) => {
        stored.set(config.name, { ...config })
        return Promise.resolve()
      },
    },
    changes: {
      announceControls: () => {
        announced++
        return Promise.resolve()
      },
    },
  }
  return {
    store: store as unknown as DurableTaskStore,
    stored,
    answerRead: () => reads.shift()?.(),
    pendingReads: () => reads.length,
    announced: () => announced,
  }
}

function queueSet(): QueueSet {
  return new QueueSet({
    queues: { work: {} },
    warn: () => undefined,
    gates: { gates: memoryGates(), now: () => Date.now(), leaseMs: 1000, error: () => undefined },
  })
}

/** A sync over `held` that counts the fresh loads it asks for. */
function countingSync(queues: QueueSet, held: ReturnType<typeof heldStore>) {
  let reloads = 0
  const sync = new QueueConfigSync(
    queues,
    held.store,
    () => undefined,
    () => {
      reloads++
      return Promise.resolve()
    },
  )
  return { sync, reloads: () => reloads }
}

const settle = () => new Promise((resolve) => setImmediate(resolve))

describe('QueueConfigSync', () => {
  it('a load read before a resume does not pause the queue again', async () => {
    const held = heldStore()
    const queues = queueSet()
    const { sync, reloads } = countingSync(queues, held)
    // Paused and stored; then a load is sent while the store still says paused.
    const paused = sync.setPaused('work', true)
    await paused
    const stale = sync.load()
    await settle()
    expect(held.pendingReads()).toBe(1)

    const resumed = await sync.setPaused('work', false)
    expect(resumed.paused).toBe(false)
    held.answerRead()
    await stale
    expect(queues.named('work').held).toBe(false)
    expect(held.stored.get('work')?.paused).toBe(false)
    // The resume was stored whole after anything that read could hold: nothing to read again.
    expect(reloads()).toBe(0)
  })

  it('a load sent while a local change is being written skips that queue and asks for a fresh one', async () => {
    const held = heldStore()
    const queues = queueSet()
    let releaseWrite: () => void = () => undefined
    const writes = held.store.admin.putQueueConfig.bind(held.store.admin)
    held.store.admin.putQueueConfig = (config) =>
      new Promise<void>((resolve) => {
        releaseWrite = () => void writes(config).then(resolve)
      })
    held.stored.set('work', {
      name: 'work',
      concurrency: null,
      max_size: null,
      paused: true,
      gating: null,
    })
    const { sync, reloads } = countingSync(queues, held)

    const resume = sync.setPaused('work', false)
    const load = sync.load()
    await settle()
    held.answerRead()
    await load
    // The stored pause predates the resume being written: not applied.
    expect(queues.named('work').held).toBe(false)
    releaseWrite()
    expect((await resume).paused).toBe(false)
    await settle()
    expect(reloads()).toBe(1)
    expect(held.announced()).toBe(1)
  })

  it('a load that sees no local change applies the stored pause', async () => {
    const held = heldStore()
    const queues = queueSet()
    held.stored.set('work', {
      name: 'work',
      concurrency: 2,
      max_size: null,
      paused: true,
      gating: null,
    })
    const sync = new QueueConfigSync(queues, held.store, () => undefined)
    const load = sync.load()
    await settle()
    held.answerRead()
    await load
    expect(queues.named('work').held).toBe(true)
    expect(queues.named('work').config.concurrency).toBe(2)
  })
})
