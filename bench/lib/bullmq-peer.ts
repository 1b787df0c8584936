/**
 * BullMQ as the Redis peer of the durable task store: enqueue with `addBulk` (one MULTI of
 * add-job scripts per call) and end to end with a `Worker` running a no-op processor. Every
 * queue is new and obliterated afterwards, under a key prefix of its own.
 */
import { randomUUID } from 'node:crypto'
import { Queue, Worker } from 'bullmq'
import { Redis } from 'ioredis'
import type { StoredTask } from '../../src/tasks/record.js'
import type { Marks } from './durable-e2e.js'

/** Jobs a BullMQ worker runs at once (the no-op processor). */
const CONCURRENCY = 50

/** BullMQ on one Redis connection, under a fresh prefix. */
export interface BullmqPeer {
  /** Adds `tasks` to a queue kept for enqueue rounds, `batch` jobs per `addBulk`. */
  enqueue(tasks: readonly StoredTask[], batch: number): Promise<void>
  /**
   * Adds `tasks` while a ready worker runs them; resolves with the ms from the first add to the
   * last job completed.
   */
  endToEnd(tasks: readonly StoredTask[], batch: number, marks?: Marks): Promise<number>
  /** Obliterates the queues and disconnects. */
  close(): Promise<void>
}

const add = async (queue: Queue, tasks: readonly StoredTask[], batch: number): Promise<void> => {
  for (let i = 0; i < tasks.length; i += batch) {
    await queue.addBulk(
      tasks.slice(i, i + batch).map((task) => ({ name: 'noop', data: { args: task.args } })),
    )
  }
}

/** BullMQ on the Redis at `url`. */
export function startBullmq(url: string): BullmqPeer {
  // BullMQ's workers block on their connection: it wants maxRetriesPerRequest null.
  const connection = new Redis(url, { maxRetriesPerRequest: null })
  const prefix = `sy-bench-bull-${randomUUID().slice(0, 8)}`
  const enqueueQueue = new Queue('enqueue', { connection, prefix })
  return {
    enqueue: (tasks, batch) => add(enqueueQueue, tasks, batch),
    async endToEnd(tasks, batch, marks) {
      const queue = new Queue(`e2e-${randomUUID().slice(0, 8)}`, { connection, prefix })
      let done = 0
      let finished!: () => void
      const allDone = new Promise<void>((resolve) => (finished = resolve))
      const worker = new Worker(queue.name, async () => {}, {
        connection,
        prefix,
        concurrency: CONCURRENCY,
      })
      // Emitted once the job is moved to completed in Redis.
      worker.on('completed', () => {
        if (++done === tasks.length) finished()
      })
      await worker.waitUntilReady()
      marks?.start()
      const started = performance.now()
      await add(queue, tasks, batch)
      await allDone
      const elapsed = performance.now() - started
      marks?.stop()
      await worker.close()
      await queue.obliterate({ force: true })
      await queue.close()
      return elapsed
    },
    async close() {
      await enqueueQueue.obliterate({ force: true })
      await enqueueQueue.close()
      connection.disconnect()
    },
  }
}
