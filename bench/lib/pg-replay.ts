/**
 * Statements recorded on their way to PostgreSQL and sent again without the code that made
 * them. `recordPgWrite` records the store's write of one pending batch (through
 * `pending.enqueue`); each replay sends the same text with the same parameters, only the task
 * ids changed (one `replaceAll` per parameter). What the replay costs is the database's share of
 * an enqueue (parsing the JSON parameters, the rows, their indexes, the tag rows, the change-feed
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

/** One statement as the driver sent it. */
export interface Statement {
  text: string
  values: unknown[]
}

/**
 * The statements whose text `matches` that any `pg` client of this process sends while `run`
 * runs (the stores and pg-boss use this same `pg` module).
 */
export async function captureStatements(
  run: () => Promise<unknown>,
  matches: (text: string) => boolean,
): Promise<Statement[]> {
  const prototype = pg.Client.prototype
  // Taken off the prototype to be put back, and only ever called with a client as `this`.
  // eslint-disable-next-line @typescript-eslint/unbound-method
  const query = prototype.query
  const recorded: Statement[] = []
  prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const [text, values] = args
    if (typeof text === 'string' && matches(text) && Array.isArray(values))
      recorded.push({ text, values: [...(values as unknown[])] })
    return (query as (...all: unknown[]) => unknown).apply(this, args)
  } as typeof query
  try {
    await run()
  } finally {
    prototype.query = query
  }
  return recorded
}

/** A recorded write of the store that can be sent again under fresh task ids. */
export interface PgReplay {
  /** The recorded statement with new task ids (a new set on every call). */
  fresh(): Statement
  /** Sends the recorded batch once more, with new task ids, on the replay's own connection. */
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
  const tasks: StoredTask[] = Array.from({ length: batch }, (_, i) => {
    const task = benchTask(i)
    task.record.task_id = `${HEAD}${String(i).padStart(12, '0')}`
    return task
  })
  let recorded: Statement[]
  try {
    recorded = await captureStatements(
      () => store.pending.enqueue(tasks, { owner: 'bench', leaseUntil: Date.now() + 60_000 }),
      (text) => text.includes('json_to_recordset'),
    )
  } finally {
    await store.close()
  }
  const [write] = recorded
  if (recorded.length !== 1 || write === undefined)
    throw new Error(`expected one recorded write, got ${recorded.length}`)
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  if (options.dropIndexes) {
    // Every index of the task table but its primary key: the ones the list filters read.
    const { rows } = await client.query<{ name: string }>(
      `select c.relname as name from pg_index i join pg_class c on c.oid = i.indexrelid
       where i.indrelid = to_regclass($1) and not i.indisprimary`,
      [`"${prefix}tasks"`],
    )
    // Since schema 13 the list indexes are partial (the history only) and the failure indexes
    // were always partial: a pending batch enters only the status index of them all.
    if (rows.length === 0) throw new Error('expected the list indexes, found none')
    for (const { name } of rows) await client.query(`drop index "${name}"`)
  }
  const fresh = (): Statement => {
    const head = `${randomBytes(4).toString('hex')}-0000-4000-8000-`
    return {
      text: write.text,
      values: write.values.map((value) =>
        typeof value === 'string' ? value.replaceAll(HEAD, head) : value,
      ),
    }
  }
  return {
    fresh,
    async replay() {
      const { text, values } = fresh()
      await client.query(text, values)
    },
    close: () => client.end(),
  }
}
