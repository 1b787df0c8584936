/**
 * pg-boss (10.x, the last line that runs on Node 20) as the PostgreSQL peer of the durable task
 * store: enqueue with `insert` (its bulk API: one statement per array of jobs) and end to end
 * with `work` handlers fetching batches. Every instance lives in its own schema, dropped by
 * `close`, so runs never meet each other or switchyard's tables.
 */
import { randomUUID } from 'node:crypto'
import pg from 'pg'
import PgBoss from 'pg-boss'
import type { StoredTask } from '../../src/tasks/record.js'

/**
 * Jobs fetched per `work` call (pg-boss's batch mode: the handler receives an array). 2,000
 * was tried first: with 8 workers, pg-boss's completions of 2,000 ids each (sent without
 * waiting) then ran concurrently and took ~8 s each on this machine, 20,000 jobs ending at
 * ~2k/s; 500 per fetch was the fastest of 250, 500, 1,000 and 2,000 (~2× the 2,000 rate).
 */
const WORK_BATCH = 500
/** Concurrent `work` loops (several workers on one queue, for throughput). */
const WORKERS = 8

/** A pg-boss instance in a fresh schema. */
export interface PgBossPeer {
  boss: PgBoss
  /** Inserts `tasks` as jobs of `queue`, `batch` jobs per `insert` call. */
  enqueue(queue: string, tasks: readonly StoredTask[], batch: number): Promise<void>
  /**
   * Enqueues `tasks` while workers run a no-op handler; resolves with the ms from the first
   * insert to the last job stored as completed.
   */
  endToEnd(tasks: readonly StoredTask[], batch: number): Promise<number>
  /** Stops pg-boss and drops its schema. */
  close(): Promise<void>
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

/** Starts pg-boss at `url` in a schema of its own, with queue `queue` created. */
export async function startPgBoss(url: string, queue: string): Promise<PgBossPeer> {
  const schema = `bench_boss_${randomUUID().slice(0, 8)}`
  // No maintenance or cron loops: only the job traffic is measured.
  const boss = new PgBoss({
    connectionString: url,
    schema,
    max: 10,
    supervise: false,
    schedule: false,
  })
  boss.on('error', (error) => console.error('pg-boss:', error))
  await boss.start()
  await boss.createQueue(queue)
  const admin = new pg.Client({ connectionString: url })
  await admin.connect()
  const completed = async (name: string): Promise<number> => {
    const result = await admin.query<{ n: string }>(
      `select count(*) as n from ${schema}.job where name = $1 and state = 'completed'`,
      [name],
    )
    return Number(result.rows[0]?.n ?? 0)
  }
  const enqueue = async (name: string, tasks: readonly StoredTask[], batch: number) => {
    for (let i = 0; i < tasks.length; i += batch) {
      await boss.insert(
        tasks.slice(i, i + batch).map((task) => ({ name, data: { args: task.args } })),
      )
    }
  }
  return {
    boss,
    enqueue,
    async endToEnd(tasks, batch) {
      const name = `e2e_${randomUUID().slice(0, 8)}`
      await boss.createQueue(name)
      let handled = 0
      const workers: string[] = []
      for (let i = 0; i < WORKERS; i++) {
        workers.push(
          await boss.work(
            name,
            { batchSize: WORK_BATCH, pollingIntervalSeconds: 0.5 },
            (jobs: PgBoss.Job[]) => {
              handled += jobs.length
              return Promise.resolve()
            },
          ),
        )
      }
      const started = performance.now()
      await enqueue(name, tasks, batch)
      // Done when every job is stored as completed (pg-boss completes a batch after its
      // handler resolves, without waiting for it: count the rows, not the handler calls).
      // (Counted every 25 ms: counting the partition costs the server too.)
      while (handled < tasks.length) await sleep(5)
      while ((await completed(name)) < tasks.length) await sleep(25)
      const elapsed = performance.now() - started
      // (The queue stays: pg-boss 10.4's deleteQueue fails while its partition holds jobs; the
      // schema is dropped at close.)
      for (const id of workers) await boss.offWork({ id })
      return elapsed
    },
    async close() {
      await boss.stop({ graceful: false, wait: true })
      await admin.query(`drop schema if exists ${schema} cascade`)
      await admin.end()
    },
  }
}
