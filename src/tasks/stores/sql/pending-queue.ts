/**
 * The pending queue on SQL (the {@link PendingQueueStore} port; see it for the semantics). A claim is optimistic: pick candidates, then one `UPDATE ... WHERE <still free>`
 * that stamps a fresh claim token, then read back the rows carrying that token. Every database
 * re-checks the WHERE clause of an UPDATE under its row lock, so two racing instances can never
 * both stamp the same row. PostgreSQL does it in one statement instead: an UPDATE of the rows
 * a `FOR UPDATE SKIP LOCKED` subquery picks, RETURNING them (racing claimers skip each other's
 * rows instead of waiting, and a row changed meanwhile is re-checked under its lock).
 */
import { randomUUID } from 'node:crypto'
import type { ExpressionBuilder, Kysely } from 'kysely'
import { splitExpired } from '../../expiry.js'
import type { TaskStatus } from '../../status.js'
import { saveExpired } from '../expired-claims.js'
import type {
  ClaimedTask,
  ClaimPendingRequest,
  LeaseRequest,
  PendingQueueStore,
  TaskFlowStore,
} from '../ports.js'
import {
  checkLease,
  checkPendingBatch,
  claimWanted,
  parseTask,
  toNumber,
  toNumberOrNull,
} from '../rows.js'
import type { SqlDialectName } from './migrations.js'
import type { OpenBackend, SqlTaskRecords } from './records.js'
import type { TaskDatabase } from './schema.js'

type Db = Kysely<TaskDatabase>

/**
 * Claims up to `request.limit` tasks of `status` that no live lease holds (of `funcNames` only,
 * when given), oldest first, for `request.owner` until `request.leaseUntil`.
 */
async function claimTasks(
  db: Db,
  dialect: SqlDialectName,
  status: TaskStatus,
  request: LeaseRequest & { limit: number },
  funcNames: readonly string[] | null,
): Promise<ClaimedTask[]> {
  if (!claimWanted(request)) return []
  const free = (eb: ExpressionBuilder<TaskDatabase, 'tasks'>) =>
    eb.and([
      eb('status', '=', status),
      eb.or([eb('claimed_by', 'is', null), eb('lease_until', '<', request.now)]),
      ...(funcNames === null ? [] : [eb('func_name', 'in', funcNames)]),
    ])
  if (dialect === 'postgres') {
    const claimed = await db
      .updateTable('tasks')
      .set({ claimed_by: request.owner, lease_until: request.leaseUntil, claim_token: null })
      .where('task_id', 'in', (eb) =>
        eb
          .selectFrom('tasks')
          .select('task_id')
          .where(free)
          .orderBy('created_ms')
          .limit(request.limit)
          .forUpdate()
          .skipLocked(),
      )
      .returning(['body', 'claimed_by', 'lease_until', 'created_ms'])
      .execute()
    claimed.sort((a, b) => toNumber(a.created_ms) - toNumber(b.created_ms))
    return claimed.map((row) => claimedTask(row, request))
  }
  const candidates = await db
    .selectFrom('tasks')
    .select('task_id')
    .where(free)
    .orderBy('created_ms')
    .limit(request.limit)
    .execute()
  if (candidates.length === 0) return []
  const ids = candidates.map((row) => row.task_id)
  const token = randomUUID()
  await db
    .updateTable('tasks')
    .set({ claimed_by: request.owner, lease_until: request.leaseUntil, claim_token: token })
    .where('task_id', 'in', ids)
    .where(free)
    .execute()
  const rows = await db
    .selectFrom('tasks')
    .select(['body', 'claimed_by', 'lease_until'])
    .where('task_id', 'in', ids)
    .where('claim_token', '=', token)
    .orderBy('created_ms')
    .execute()
  return rows.map((row) => claimedTask(row, request))
}

/** A claimed row as the port returns it. */
function claimedTask(
  row: { body: string; claimed_by: string | null; lease_until: number | null },
  request: LeaseRequest,
): ClaimedTask {
  return {
    task: parseTask(row.body),
    claimed_by: row.claimed_by ?? request.owner,
    lease_until: toNumberOrNull(row.lease_until) ?? request.leaseUntil,
  }
}

/** Extends every live claim of `owner`. */
async function renewLeases(db: Db, owner: string, leaseUntil: number): Promise<number> {
  checkLease(owner, leaseUntil)
  const result = await db
    .updateTable('tasks')
    .set({ lease_until: leaseUntil })
    .where('claimed_by', '=', owner)
    .where('status', 'in', ['pending', 'running'])
    .executeTakeFirst()
  return Number(result.numUpdatedRows)
}

/** Drops `owner`'s claims on `taskIds`. */
async function releaseTasks(db: Db, taskIds: readonly string[], owner: string): Promise<void> {
  if (taskIds.length === 0) return
  await db
    .updateTable('tasks')
    .set({ claimed_by: null, lease_until: null, claim_token: null })
    .where('task_id', 'in', taskIds)
    .where('claimed_by', '=', owner)
    .execute()
}

/**
 * The pending queue on SQL; enqueued records are written by the record store's upsert, expired
 * flow nodes through `flows`.
 */
export function sqlPendingQueue(
  open: OpenBackend,
  records: SqlTaskRecords,
  flows: TaskFlowStore,
): PendingQueueStore {
  const db = async (): Promise<Db> => (await open()).db
  return {
    async enqueue(tasks, lease) {
      checkPendingBatch(tasks, lease)
      await records.write(tasks, { owner: lease.owner, leaseUntil: lease.leaseUntil })
    },
    async create(task, lease) {
      checkPendingBatch([task], lease)
      return records.create(task, { owner: lease.owner, leaseUntil: lease.leaseUntil })
    },
    async claim(request: ClaimPendingRequest) {
      if (request.funcNames.length === 0) return []
      const backend = await open()
      const claimed = await claimTasks(
        backend.db,
        backend.dialect,
        'pending',
        request,
        request.funcNames,
      )
      const { live, expired } = splitExpired(
        claimed.map((c) => c.task),
        request.now,
      )
      if (expired.length === 0) return claimed
      // The claim makes this caller the only writer of these records: it ends them here.
      await saveExpired(expired, request, (tasks) => records.write(tasks, null), flows)
      const kept = new Set(live)
      return claimed.filter((c) => kept.has(c.task))
    },
    async claimOrphans(request) {
      const backend = await open()
      return claimTasks(backend.db, backend.dialect, 'running', request, null)
    },
    async renewLeases(owner, leaseUntil) {
      return renewLeases(await db(), owner, leaseUntil)
    },
    async release(taskIds, owner) {
      await releaseTasks(await db(), taskIds, owner)
    },
  }
}
