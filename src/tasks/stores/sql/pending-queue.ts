/**
 * The pending queue on SQL (the `DurableTaskStore` claim operations; see the port for their
 * semantics). A claim is optimistic: pick candidates, then one `UPDATE ... WHERE <still free>`
 * that stamps a fresh claim token, then read back the rows carrying that token. Every database
 * re-checks the WHERE clause of an UPDATE under its row lock, so two racing instances can never
 * both stamp the same row.
 */
import { randomUUID } from 'node:crypto'
import type { ExpressionBuilder, Kysely } from 'kysely'
import type { TaskStatus } from '../../status.js'
import type { ClaimedTask, LeaseRequest } from '../ports.js'
import { checkLease, claimWanted, parseTask, toNumberOrNull } from '../rows.js'
import type { TaskDatabase } from './schema.js'

type Db = Kysely<TaskDatabase>

/**
 * Claims up to `request.limit` tasks of `status` that no live lease holds (of `funcNames` only,
 * when given), oldest first, for `request.owner` until `request.leaseUntil`.
 */
export async function claimTasks(
  db: Db,
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
  return rows.map((row) => ({
    task: parseTask(row.body),
    claimed_by: row.claimed_by ?? request.owner,
    lease_until: toNumberOrNull(row.lease_until) ?? request.leaseUntil,
  }))
}

/** `DurableTaskStore.renewLeases` on SQL: extends every live claim of `owner`. */
export async function renewLeases(db: Db, owner: string, leaseUntil: number): Promise<number> {
  checkLease(owner, leaseUntil)
  const result = await db
    .updateTable('tasks')
    .set({ lease_until: leaseUntil })
    .where('claimed_by', '=', owner)
    .where('status', 'in', ['pending', 'running'])
    .executeTakeFirst()
  return Number(result.numUpdatedRows)
}

/** `DurableTaskStore.releaseTasks` on SQL: drops `owner`'s claims on `taskIds`. */
export async function releaseTasks(
  db: Db,
  taskIds: readonly string[],
  owner: string,
): Promise<void> {
  if (taskIds.length === 0) return
  await db
    .updateTable('tasks')
    .set({ claimed_by: null, lease_until: null, claim_token: null })
    .where('task_id', 'in', taskIds)
    .where('claimed_by', '=', owner)
    .execute()
}
