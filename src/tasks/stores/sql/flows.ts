/**
 * Flows on SQL (the {@link TaskFlowStore} port; see it for the semantics). A flow node's row in
 * `task_flows` holds its flow, its parent and (on a parent) the counters; every counter change
 * is a statement guarded by the child's stored status, run in the transaction of the child's
 * record write and before it, so a write counts once however often it is repeated.
 */
import { randomUUID } from 'node:crypto'
import type { CompiledQuery, Kysely } from 'kysely'
import { sql } from './kysely.js'
import type { StoredTask } from '../../record.js'
import {
  FLOW_HOLD_LEASE,
  FLOW_HOLD_OWNER,
  flowEffectsOf,
  type FlowCounters,
  type FlowHold,
  type TaskFlowStore,
} from '../ports.js'
import { toNumber } from '../rows.js'
import type { OpenBackend, SqlTaskRecords } from './records.js'
import type { TaskDatabase } from './schema.js'

type Db = Kysely<TaskDatabase>

/** Attempts of a flow write that the database chose as a deadlock victim. */
const DEADLOCK_ATTEMPTS = 5

/** Whether `error` is a deadlock (MySQL/MariaDB 1213, PostgreSQL 40P01) or serialization failure. */
function isDeadlock(error: unknown): boolean {
  const { code, errno, sqlState } = (error ?? {}) as {
    code?: unknown
    errno?: unknown
    sqlState?: unknown
  }
  return (
    code === 'ER_LOCK_DEADLOCK' ||
    errno === 1213 ||
    sqlState === '40001' ||
    code === '40P01' ||
    code === '40001'
  )
}

/** Runs a flow write, again when the database chose it as a deadlock victim. */
async function retryDeadlocks<T>(write: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await write()
    } catch (error) {
      // A deadlock rolled the whole transaction back; its guarded statements may run again.
      if (attempt >= DEADLOCK_ATTEMPTS || !isDeadlock(error)) throw error
    }
  }
}

const LIVE = ['pending', 'running'] as const
const UNSUCCESSFUL = ['failed', 'cancelled', 'interrupted', 'expired', 'rejected'] as const

/** The counter statements of writing `task` (a node with a parent), to run before its row. */
function counterChanges(db: Db, task: StoredTask): CompiledQuery[] {
  const parent = task.record.parent_id ?? null
  if (parent === null) return []
  const id = task.record.task_id
  const status = task.record.status
  const childIn = (statuses: readonly string[]) =>
    sql<boolean>`exists (select 1 from ${sql.table('tasks')} where ${sql.ref('task_id')} = ${id} and ${sql.ref('status')} in (${sql.join(statuses)}))`
  const update = db.updateTable('task_flows').where('task_id', '=', parent)
  if (status === 'success') {
    return [
      update
        .set((eb) => ({ waiting: eb('waiting', '-', 1) }))
        .where(childIn(LIVE))
        .compile(),
    ]
  }
  if (status === 'running') return []
  if (status === 'pending') {
    if (task.record.retry_of !== null) {
      // A retry taking its failed original's place: counted once, when its row is new.
      return [
        update
          .set((eb) => ({ failed: eb('failed', '-', 1) }))
          .where(
            sql<boolean>`not exists (select 1 from ${sql.table('tasks')} where ${sql.ref('task_id')} = ${id})`,
          )
          .compile(),
      ]
    }
    if (task.flow_children !== undefined) {
      // A failed parent that waits again no longer counts as failed for its own parent.
      return [
        update
          .set((eb) => ({ failed: eb('failed', '-', 1) }))
          .where(childIn(UNSUCCESSFUL))
          .compile(),
      ]
    }
    return []
  }
  return [
    update
      .set((eb) => ({ failed: eb('failed', '+', 1) }))
      .where(childIn(LIVE))
      .compile(),
  ]
}

/** Flows on SQL, writing records through the store's record writer. */
export function sqlFlows(open: OpenBackend, records: SqlTaskRecords): TaskFlowStore {
  return {
    async save(tasks, options = {}) {
      if (tasks.length === 0) return { released: [], failing: [], unfailing: [] }
      const { db, dialect } = await open()
      const holds: readonly FlowHold[] = options.holds ?? []
      const fresh = new Map<string, number>()
      for (const hold of holds) if (hold.children !== null) fresh.set(hold.task_id, hold.children)
      const before: CompiledQuery[] = tasks.flatMap((task) => counterChanges(db, task))
      // Every new node gets its row (insert-if-absent: a repeated enqueue changes nothing).
      const nodes = tasks
        .filter((task) => task.record.status === 'pending' && (task.flow_id ?? null) !== null)
        .map((task) => ({
          task_id: task.record.task_id,
          flow_id: task.flow_id as string,
          parent_id: task.record.parent_id ?? null,
          waiting: fresh.get(task.record.task_id) ?? 0,
          failed: 0,
        }))
      for (let i = 0; i < nodes.length; i += 500) {
        const insert = db.insertInto('task_flows').values(nodes.slice(i, i + 500))
        before.push(
          (dialect === 'mysql'
            ? insert.ignore()
            : insert.onConflict((oc) => oc.column('task_id').doNothing())
          ).compile(),
        )
      }
      const after: CompiledQuery[] = []
      if (holds.length > 0) {
        after.push(
          db
            .updateTable('tasks')
            .set({ claimed_by: FLOW_HOLD_OWNER, lease_until: FLOW_HOLD_LEASE })
            .where(
              'task_id',
              'in',
              holds.map((hold) => hold.task_id),
            )
            .compile(),
        )
      }
      const effects = flowEffectsOf(tasks)
      for (const parent of new Set(effects.released)) {
        // The last child's success releases the held parent: claimable by any instance.
        after.push(
          db
            .updateTable('tasks')
            .set({ claimed_by: null, lease_until: null })
            .where('task_id', '=', parent)
            .where('status', '=', 'pending')
            .where('claimed_by', '=', FLOW_HOLD_OWNER)
            .where((eb) =>
              eb.exists(
                eb
                  .selectFrom('task_flows')
                  .select('task_flows.task_id')
                  .where('task_flows.task_id', '=', parent)
                  .where('task_flows.waiting', '<=', 0)
                  .where('task_flows.failed', '<=', 0),
              ),
            )
            .compile(),
        )
      }
      await retryDeadlocks(() => records.write(tasks, options.claim ?? null, { before, after }))
      return effects
    },

    async endWaiting(task) {
      const { db } = await open()
      const id = task.record.task_id
      // The compare-and-set: the parent is still pending and no instance claimed it. A fresh
      // token makes the guard change its row on every dialect (MySQL counts changed rows only).
      const token = randomUUID()
      const guard = db
        .updateTable('tasks')
        .set({ claimed_by: null, lease_until: null, claim_token: token })
        .where('task_id', '=', id)
        .where('status', '=', 'pending')
        .where((eb) =>
          eb.or([eb('claimed_by', '=', FLOW_HOLD_OWNER), eb('claimed_by', 'is', null)]),
        )
        .compile()
      const after = [
        db
          .updateTable('tasks')
          .set({ claim_token: null })
          .where('task_id', '=', id)
          .where('claim_token', '=', token)
          .compile(),
      ]
      const written = await retryDeadlocks(() =>
        records.write([task], null, { before: counterChanges(db, task), after, guard }),
      )
      return written ? flowEffectsOf([task]) : null
    },

    async counters(parentId): Promise<FlowCounters | null> {
      const { db } = await open()
      const row = await db
        .selectFrom('task_flows')
        .select(['waiting', 'failed'])
        .where('task_id', '=', parentId)
        .executeTakeFirst()
      return row === undefined
        ? null
        : { waiting: toNumber(row.waiting), failed: toNumber(row.failed) }
    },

    async stalled(limit) {
      const { db } = await open()
      const rows = await db
        .selectFrom('task_flows')
        .innerJoin('tasks', 'tasks.task_id', 'task_flows.task_id')
        .select('task_flows.task_id')
        .where('task_flows.failed', '>', 0)
        .where('tasks.status', '=', 'pending')
        .limit(limit)
        .execute()
      return rows.map((row) => row.task_id)
    },
  }
}
