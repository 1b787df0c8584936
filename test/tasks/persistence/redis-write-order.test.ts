/**
 * Finished records sent ahead of their batch. On one Redis connection writes commit in the
 * order they are sent, so the store offers `records.saveInOrder` (sent before it returns) and
 * the manager's write-behind uses it for a burst of quick tasks: their finished records leave
 * as they finish, not all at the next turn of the event loop. These tests hold the store to
 * the order of its calls, the manager to writing each finished record once, and the manager
 * to never sending a finished record ahead of an earlier batch still unsent (it would be
 * overwritten by the older state).
 */
import { afterAll, describe, expect, it } from 'vitest'
import { TaskManager } from '../../../src/tasks/index.js'
import type { StoredTask } from '../../../src/tasks/record.js'
import { redisStore, type DurableTaskStore } from '../../../src/tasks/stores/index.js'
import { deleteKeys } from '../../helpers/redis.js'
import { finished, makeTask, REDIS_URL, serverEnabled, uniquePrefix } from './helpers.js'

const enabled = await serverEnabled(REDIS_URL, 'redis-write-order.test.ts')
const prefixes: string[] = []

afterAll(async () => {
  if (!enabled) return
  for (const prefix of prefixes) await deleteKeys(prefix, REDIS_URL)
})

function freshPrefix(): string {
  const prefix = `sy-test:${uniquePrefix('order')}`
  prefixes.push(prefix)
  return prefix
}

function freshStore(prefix = freshPrefix()): DurableTaskStore {
  return redisStore({ url: REDIS_URL, prefix })
}

/** `task` running since its creation (a copy). */
function running(task: StoredTask): StoredTask {
  return {
    ...task,
    record: { ...task.record, status: 'running', start_time: task.record.created_at },
  }
}

const quietLogger = { warn: () => undefined, error: () => undefined }

/** The store's writes of records, by method, counted per record (and per call: `method calls`). */
function countWrites(store: DurableTaskStore): Map<string, number> {
  const counts = new Map<string, number>()
  const tally = (method: string, tasks: readonly StoredTask[]) => {
    counts.set(method, (counts.get(method) ?? 0) + tasks.length)
    counts.set(`${method} calls`, (counts.get(`${method} calls`) ?? 0) + 1)
  }
  const { records, pending } = store
  const save = records.save.bind(records)
  records.save = (tasks) => (tally('save', tasks), save(tasks))
  const inOrder = records.saveInOrder?.bind(records)
  if (inOrder !== undefined) {
    records.saveInOrder = (tasks) => {
      const sending = inOrder(tasks)
      if (sending !== null) tally('saveInOrder', tasks)
      return sending
    }
  }
  const enqueue = pending.enqueue.bind(pending)
  pending.enqueue = (tasks, lease) => (tally('enqueue', tasks), enqueue(tasks, lease))
  return counts
}

describe.skipIf(!enabled)('Redis writes in the order they are sent', () => {
  it('sends nothing before the connection is open, then commits calls in their order', async () => {
    const store = freshStore()
    try {
      const task = makeTask()
      expect(store.records.saveInOrder?.([finished(task, 'success')])).toBeNull()
      await store.init()
      expect(await store.records.get(task.record.task_id)).toBeNull()
      // Three chunks of records each, the second call's state sent without waiting for the
      // first's reply: the later call wins for every record.
      const tasks = Array.from({ length: 300 }, () => makeTask())
      const first = store.records.saveInOrder?.(tasks.map((t) => finished(t, 'success')))
      const second = store.records.saveInOrder?.(tasks.map(running))
      await Promise.all([first, second])
      const page = await store.records.list({ status: 'running', page: 1, perPage: 1 })
      expect(page.total).toBe(300)
      expect((await store.records.list({ status: 'success', page: 1, perPage: 1 })).total).toBe(0)
    } finally {
      await store.close()
    }
  })

  it('is not offered on a cluster, whose client may resend a command after later ones', async () => {
    const store = redisStore({ cluster: ['127.0.0.1:7000'] })
    expect('saveInOrder' in store.records).toBe(false)
    await store.close()
    const single = freshStore()
    expect(typeof single.records.saveInOrder).toBe('function')
    await single.close()
  })

  it('sends a burst of quick tasks as they finish, each finished record once', async () => {
    const prefix = freshPrefix()
    const store = freshStore(prefix)
    const counts = countWrites(store)
    const manager = new TaskManager({
      store,
      queues: { default: { concurrency: 50 } },
      logger: quietLogger,
    })
    const quick = manager.task({ name: 'quick', persist: true }, (n: number) => Promise.resolve(n))
    await manager.startup()
    const ids = await Promise.all(
      Array.from({ length: 2000 }, (_, n) => manager.addTask(quick, [n])),
    )
    await manager.shutdown()
    // Every task finished before the event loop turned: four sends of 500 wrote them all,
    // and no pending record was written for a task that had already finished.
    expect(Object.fromEntries(counts)).toEqual({ saveInOrder: 2000, 'saveInOrder calls': 4 })
    const reader = freshStore(prefix)
    try {
      const stored = await reader.records.list({ status: 'success', page: 1, perPage: 1 })
      expect(stored.total).toBe(2000)
      const last = await reader.records.get(ids[1999] as string)
      expect(last?.record.status).toBe('success')
      expect(last?.result).toBe('1999')
    } finally {
      await reader.close()
    }
  })

  it('sends nothing ahead while an earlier batch is still to be written', async () => {
    const prefix = freshPrefix()
    const store = freshStore(prefix)
    // The batch of pending records waits here before it is sent.
    let releaseStore = (): void => undefined
    const storeGate = new Promise<void>((resolve) => {
      releaseStore = resolve
    })
    const enqueue = store.pending.enqueue.bind(store.pending)
    store.pending.enqueue = async (tasks, lease) => {
      await storeGate
      return enqueue(tasks, lease)
    }
    const counts = countWrites(store)
    let releaseTasks = (): void => undefined
    const taskGate = new Promise<void>((resolve) => {
      releaseTasks = resolve
    })
    const manager = new TaskManager({
      store,
      queues: { default: { concurrency: 1000 } },
      logger: quietLogger,
    })
    const held = manager.task({ name: 'held', persist: true }, async () => {
      await taskGate
      return 'done'
    })
    await manager.startup()
    const adds = Array.from({ length: 600 }, () => manager.addTask(held, []))
    // The batch of 600 pending records is on the chain, not sent; the tasks are running. Each
    // task started as it was added, yet the pending records go in one call, not one per task.
    await expect.poll(() => counts.get('enqueue') ?? 0).toBe(600)
    expect(counts.get('enqueue calls')).toBe(1)
    releaseTasks()
    await expect.poll(() => manager.queueStats()[0]?.finished ?? 0).toBe(600)
    // 600 finished tasks, more than one send's worth, and none was sent ahead of the batch.
    expect(counts.get('saveInOrder') ?? 0).toBe(0)
    releaseStore()
    const ids = await Promise.all(adds)
    await manager.shutdown()
    const reader = freshStore(prefix)
    try {
      const stored = await reader.records.list({ status: 'success', page: 1, perPage: 1 })
      expect(stored.total).toBe(600)
      expect((await reader.records.get(ids[0] as string))?.record.status).toBe('success')
    } finally {
      await reader.close()
    }
  })
})
