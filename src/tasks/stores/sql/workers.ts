/**
 * The workers registry ({@link TaskWorkerStore}) on SQL: table `workers`, one row per instance
 * keyed by its id, replaced by each heartbeat; see the ports for the semantics.
 */
import type { StoredWorker, TaskWorkerStore } from '../ports.js'
import { toNumber } from '../rows.js'
import { checkWorker, checkWorkerQuery, parseWorker, workerBody } from '../worker-rows.js'
import type { SqlBackend } from './backend.js'
import type { OpenBackend } from './records.js'

async function heartbeat(backend: SqlBackend, worker: StoredWorker): Promise<void> {
  checkWorker(worker)
  const values = { id: worker.id, last_seen_ms: worker.last_seen, body: workerBody(worker) }
  const update = { last_seen_ms: values.last_seen_ms, body: values.body }
  const insert = backend.db.insertInto('workers').values(values)
  if (backend.dialect === 'mysql') await insert.onDuplicateKeyUpdate(update).execute()
  else await insert.onConflict((oc) => oc.column('id').doUpdateSet(update)).execute()
}

async function list(backend: SqlBackend, since: number, limit: number): Promise<StoredWorker[]> {
  checkWorkerQuery(since, limit)
  const rows = await backend.db
    .selectFrom('workers')
    .select('body')
    .where('last_seen_ms', '>=', since)
    .orderBy('last_seen_ms', 'desc')
    .orderBy('id')
    .limit(limit)
    .execute()
  return rows.map((row) => parseWorker(row.body))
}

async function prune(backend: SqlBackend, before: number, keep: number): Promise<number> {
  checkWorkerQuery(before, keep)
  const db = backend.db
  // The last_seen of the first row past the `keep` most recent: it and everything older go.
  const cut = await db
    .selectFrom('workers')
    .select('last_seen_ms')
    .orderBy('last_seen_ms', 'desc')
    .offset(keep)
    .limit(1)
    .executeTakeFirst()
  const bound = cut === undefined ? before : Math.max(before, toNumber(cut.last_seen_ms) + 1)
  const result = await db.deleteFrom('workers').where('last_seen_ms', '<', bound).executeTakeFirst()
  return Number(result.numDeletedRows)
}

/** The workers registry on SQL. */
export function sqlWorkers(open: OpenBackend): TaskWorkerStore {
  return {
    heartbeat: async (worker) => heartbeat(await open(), worker),
    list: async (since, limit) => list(await open(), since, limit),
    prune: async (before, keep) => prune(await open(), before, keep),
  }
}
