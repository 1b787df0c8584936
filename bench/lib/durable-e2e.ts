/**
 * Durable tasks end to end through switchyard's TaskManager on a server store (PostgreSQL or
 * Redis), the shape the queue peers are measured in: add no-op persistent tasks, run them all,
 * and stop the clock once every record is stored as `success` (shutdown has flushed the
 * write-behind). Each round gets a fresh table or key prefix, removed afterwards.
 */
import { randomUUID } from 'node:crypto'
import pg from 'pg'
import { TaskManager } from '../../src/tasks/index.js'
import { postgresStore, redisStore, type DurableTaskStore } from '../../src/tasks/stores/index.js'
import { TASK_TABLES } from '../../src/tasks/stores/sql/schema.js'
import { deleteRedisKeys } from '../../support/servers.js'

/** A fresh store for one round, and how to remove what it wrote. */
export interface StoreFactory {
  open(): DurableTaskStore
  /** A second handle on the same tables or keys (to check the stored outcome). */
  reopen(): DurableTaskStore
  cleanup(): Promise<void>
}

/** PostgreSQL tables under a fresh prefix. */
export function postgresFactory(url: string): StoreFactory {
  const prefix = `bench_${randomUUID().slice(0, 8)}_`
  const open = () => postgresStore({ connectionString: url }, { tablePrefix: prefix })
  return { open, reopen: open, cleanup: () => dropPostgresTables(url, prefix) }
}

/** Redis keys under a fresh prefix. */
export function redisFactory(url: string): StoreFactory {
  const prefix = `sy-bench:${randomUUID().slice(0, 8)}:`
  const open = () => redisStore({ url }, { prefix })
  return { open, reopen: open, cleanup: () => deleteRedisKeys(url, prefix) }
}

/** Drops the store tables under `prefix`. */
export async function dropPostgresTables(url: string, prefix: string): Promise<void> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  for (const table of TASK_TABLES) await client.query(`drop table if exists "${prefix}${table}"`)
  await client.end()
}

/**
 * Throws unless `store` holds exactly `count` success records (a bench that lost records
 * measured nothing); closes the store either way.
 */
export async function checkSuccessRecords(store: DurableTaskStore, count: number): Promise<void> {
  try {
    const page = await store.records.list({ status: 'success', page: 1, perPage: 1 })
    if (page.total !== count) {
      throw new Error(`expected ${String(count)} success records, found ${String(page.total)}`)
    }
  } finally {
    await store.close()
  }
}

const quietLogger = {
  warn: () => undefined,
  error: (fields: object | string, message?: string) => console.error(message ?? fields, fields),
}

/** Called when a measured part starts and when it ends (to count only that part). */
export interface Marks {
  start(): void
  stop(): void
}

/**
 * `count` persistent no-op tasks added in a loop to a manager on a fresh store (queue
 * concurrency 50): ms from the first add until shutdown has flushed every record. With
 * `groups`, the queue has `groupConcurrency: 1` and task `i` is in group `i % groups`.
 */
export async function managerEndToEnd(
  factory: StoreFactory,
  count: number,
  marks?: Marks,
  groups = 0,
): Promise<number> {
  const manager = new TaskManager({
    store: factory.open(),
    queues: {
      default: groups > 0 ? { concurrency: 50, groupConcurrency: 1 } : { concurrency: 50 },
    },
    logger: quietLogger,
  })
  const noop = manager.task({ name: 'noop', persist: true }, async () => {})
  await manager.startup()
  try {
    marks?.start()
    const started = performance.now()
    const adds: Promise<string>[] = []
    for (let index = 0; index < count; index++) {
      const options = groups > 0 ? { group: `g${String(index % groups)}` } : {}
      adds.push(manager.addTask(noop, [], options))
    }
    await Promise.all(adds)
    while ((manager.queueStats()[0]?.finished ?? 0) < count) {
      await new Promise((resolve) => setImmediate(resolve))
    }
    await manager.shutdown()
    const elapsed = performance.now() - started
    marks?.stop()
    await checkSuccessRecords(factory.reopen(), count)
    return elapsed
  } finally {
    await factory.cleanup()
  }
}
