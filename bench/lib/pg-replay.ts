/**
 * The store's own PostgreSQL write of a pending batch, replayed with nothing of the store around
 * it: one batch is written through `pending.enqueue` while the statement and its parameters are
 * recorded, and each replay sends the same text with the same parameters, only the task ids
 * changed (one `replaceAll` per parameter). What the replay costs is the database's share of an
 * enqueue (parsing the JSON parameters, the rows, their indexes, the tag rows, the change-feed
 * row, the round trip); what the store costs beyond it is its own JavaScript. With `dropIndexes`
 * the five list indexes of the task table are dropped first, so the difference is what they
 * cost to maintain.
 */
import { randomBytes } from 'node:crypto'
import pg from 'pg'
import type { StoredTask } from '../../src/tasks/record.js'
import { postgresStore } from '../../src/tasks/stores/index.js'
import { benchTask } from './task-history.js'

/** The part of every recorded task id that a replay swaps (24 characters, the UUID's head). */
const HEAD = 'cafe0000-0000-4000-8000-'

/** The indexes the list filters read (the primary key and the tag table's stay). */
const LIST_INDEXES = [
  'tasks_created',
  'tasks_status',
  'tasks_func',
  'tasks_queue',
  'tasks_finished',
]

/** A recorded statement that can be sent again under fresh task ids. */
export interface PgReplay {
  /** Sends the recorded batch once more, with new task ids. */
  replay(): Promise<void>
  close(): Promise<void>
}

/** Records the store's write of one `batch`-task pending batch in tables under `prefix`. */
export async function recordPgWrite(
  url: string,
  prefix: string,
  batch: number,
  options: { dropIndexes: boolean },
): Promise<PgReplay> {
  const store = postgresStore({ connectionString: url }, { tablePrefix: prefix })
  await store.init()
  const recorded: { text: string; values: unknown[] }[] = []
  const prototype = pg.Client.prototype
  // Taken off the prototype to be put back, and only ever called with a client as `this`.
  // eslint-disable-next-line @typescript-eslint/unbound-method
  const query = prototype.query
  // The store's driver is this same `pg` module, so its queries pass through here while recording.
  prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const [text, values] = args
    if (typeof text === 'string' && text.includes('json_to_recordset') && Array.isArray(values))
      recorded.push({ text, values: [...(values as unknown[])] })
    return (query as (...all: unknown[]) => unknown).apply(this, args)
  } as typeof query
  try {
    const tasks: StoredTask[] = Array.from({ length: batch }, (_, i) => {
      const task = benchTask(i)
      task.record.task_id = `${HEAD}${String(i).padStart(12, '0')}`
      return task
    })
    await store.pending.enqueue(tasks, { owner: 'bench', leaseUntil: Date.now() + 60_000 })
  } finally {
    prototype.query = query
    await store.close()
  }
  const [write] = recorded
  if (recorded.length !== 1 || write === undefined)
    throw new Error(`expected one recorded write, got ${recorded.length}`)
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  if (options.dropIndexes)
    for (const name of LIST_INDEXES) await client.query(`drop index "${prefix}${name}"`)
  return {
    async replay() {
      const head = `${randomBytes(4).toString('hex')}-0000-4000-8000-`
      const values = write.values.map((value) =>
        typeof value === 'string' ? value.replaceAll(HEAD, head) : value,
      )
      await client.query(write.text, values)
    },
    close: () => client.end(),
  }
}
