/**
 * Flows on SQL (the {@link TaskFlowStore} port; see it for the semantics). A flow node's row in
 * `task_flows` holds its flow, its parent and (on a parent) the counters; the counter changes
 * of a write are one statement per parent, counting only the children whose stored status
 * allows it, run in the transaction of the children's record write and before it, so a write
 * counts once however often it is repeated.
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
import { parseTask, toNumber } from '../rows.js'
import type { PreparedRows } from './backend.js'
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

/** How writing a child changes its parent's counters. */
type CounterChange = 'succeeded' | 'failed' | 'retried' | 'rewaited'

/**
 * Values the statements below are compiled with once, and replaced by each write's own: a
 * batch of a thousand children's writes builds no query (building one costs far more than
 * SQLite takes to run it).
 */
const PARENT = '\u0000parent'
const CHILD = '\u0000child'
const FLOW = '\u0000flow'
const WAITING = '\u0000waiting'
const IDS = '\u0000ids'

/** The parameters of `template` with each placeholder above replaced by its value in `values`. */
function bind(template: CompiledQuery, values: ReadonlyMap<string, unknown>): unknown[] {
  return template.parameters.map((value) =>
    typeof value === 'string' && values.has(value) ? values.get(value) : value,
  )
}

/**
 * Sizes the child lists of a counter change are padded to (by repeating their last id, which
 * counts once in `in (...)`): a few statement texts only, so SQLite's prepared-statement cache
 * keeps them.
 */
const LIST_SIZES = [1, 8, 64, 500] as const

/**
 * One counter change of `parent` for all of `children` (distinct ids, at most 500), guarded by
 * each child's stored status: the parent's row changes once per batch, not once per child.
 */
function counterChange(
  db: Db,
  change: CounterChange,
  parent: string,
  children: readonly string[],
): CompiledQuery {
  const size = LIST_SIZES.find((n) => n >= children.length) ?? children.length
  const last = children.at(-1) as string
  const ids = [...children, ...Array.from({ length: size - children.length }, () => last)]
  const counted = (statuses: readonly string[] | null) =>
    sql<number>`(select count(*) from ${sql.table('tasks')} where ${sql.ref('task_id')} in (${sql.join(ids)})${
      statuses === null ? sql`` : sql` and ${sql.ref('status')} in (${sql.join(statuses)})`
    })`
  const update = db.updateTable('task_flows').where('task_id', '=', parent)
  switch (change) {
    case 'succeeded':
      return update
        .set({ waiting: sql<number>`${sql.ref('waiting')} - ${counted(LIVE)}` })
        .compile()
    case 'failed':
      return update.set({ failed: sql<number>`${sql.ref('failed')} + ${counted(LIVE)}` }).compile()
    case 'retried':
      // A retry taking its failed original's place: counted once, when its row is new.
      return update
        .set({
          failed: sql<number>`${sql.ref('failed')} - (${children.length} - ${counted(null)})`,
        })
        .compile()
    case 'rewaited':
      // A failed parent that waits again no longer counts as failed for its own parent.
      return update
        .set({ failed: sql<number>`${sql.ref('failed')} - ${counted(UNSUCCESSFUL)}` })
        .compile()
  }
}

/** A single-row insert-if-absent of a node's row (SQLite runs it prepared, once per node). */
function compileNodeInsert(db: Db): CompiledQuery {
  return db
    .insertInto('task_flows')
    .values({
      task_id: CHILD,
      flow_id: FLOW,
      parent_id: PARENT,
      waiting: WAITING as unknown as number,
      failed: 0,
    })
    .onConflict((oc) => oc.column('task_id').doNothing())
    .compile()
}

/**
 * The insert-if-absent of the rows of a parent's leaves (SQLite), their ids one JSON array:
 * one statement run per parent instead of one per leaf, which halves what a node's row costs.
 * (`where true`: SQLite's grammar needs a WHERE before an upsert's ON CONFLICT after a SELECT.)
 */
function compileLeavesInsert(db: Db): CompiledQuery {
  return sql`insert into ${sql.table('task_flows')} (task_id, flow_id, parent_id, waiting, failed)
    select value, ${FLOW}, ${PARENT}, 0, 0 from json_each(${IDS}) where true
    on conflict (task_id) do nothing`.compile(db)
}

/** The statements compiled once per database handle. */
interface Compiled {
  nodeInsert: CompiledQuery | null
  leavesInsert: CompiledQuery | null
}
const compiledByDb = new WeakMap<Db, Compiled>()

function compiledFor(db: Db): Compiled {
  let compiled = compiledByDb.get(db)
  if (compiled === undefined) {
    compiled = { nodeInsert: null, leavesInsert: null }
    compiledByDb.set(db, compiled)
  }
  return compiled
}

/** The counter change of writing `task` (a node with a parent), or null. */
function counterChangeOf(task: StoredTask): CounterChange | null {
  const status = task.record.status
  if (status === 'success') return 'succeeded'
  if (status === 'running') return null
  if (status === 'pending') {
    if (task.record.retry_of !== null) return 'retried'
    return task.flow_children !== undefined ? 'rewaited' : null
  }
  return 'failed'
}

/**
 * The counter statements of writing `tasks`, to run before their rows: one per parent and kind
 * of change (per 500 children), each child counted once however often it appears.
 */
function counterChanges(db: Db, tasks: readonly StoredTask[]): CompiledQuery[] {
  const groups = new Map<string, { parent: string; change: CounterChange; children: Set<string> }>()
  for (const task of tasks) {
    const parent = task.record.parent_id ?? null
    if (parent === null) continue
    const change = counterChangeOf(task)
    if (change === null) continue
    const key = `${change}\u0000${parent}`
    let group = groups.get(key)
    if (group === undefined) {
      group = { parent, change, children: new Set() }
      groups.set(key, group)
    }
    group.children.add(task.record.task_id)
  }
  const queries: CompiledQuery[] = []
  for (const { parent, change, children } of groups.values()) {
    const ids = [...children]
    for (let i = 0; i < ids.length; i += 500) {
      queries.push(counterChange(db, change, parent, ids.slice(i, i + 500)))
    }
  }
  return queries
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
      const before: CompiledQuery[] = counterChanges(db, tasks)
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
      const rows: PreparedRows[] = []
      if (dialect === 'sqlite') {
        // Prepared statements run with the nodes' own values, so no per-node query object is
        // built: a parent's row alone (it carries its counter), the rows of the nodes without
        // a counter one statement per flow and parent.
        const compiled = compiledFor(db)
        const single = (compiled.nodeInsert ??= compileNodeInsert(db))
        const grouped = (compiled.leavesInsert ??= compileLeavesInsert(db))
        const singles: unknown[][] = []
        const groups = new Map<string, { flow: string; parent: string; ids: string[] }>()
        for (const node of nodes) {
          if (node.waiting === 0 && node.parent_id !== null) {
            const key = `${node.flow_id}\u0000${node.parent_id}`
            let group = groups.get(key)
            if (group === undefined) {
              group = { flow: node.flow_id, parent: node.parent_id, ids: [] }
              groups.set(key, group)
            }
            group.ids.push(node.task_id)
            continue
          }
          singles.push(
            bind(
              single,
              new Map<string, unknown>([
                [CHILD, node.task_id],
                [FLOW, node.flow_id],
                [PARENT, node.parent_id],
                [WAITING, node.waiting],
              ]),
            ),
          )
        }
        if (singles.length > 0) rows.push({ text: single.sql, rows: singles })
        if (groups.size > 0) {
          rows.push({
            text: grouped.sql,
            rows: [...groups.values()].map(({ flow, parent, ids }) =>
              bind(
                grouped,
                new Map([
                  [FLOW, flow],
                  [PARENT, parent],
                  [IDS, JSON.stringify(ids)],
                ]),
              ),
            ),
          })
        }
      } else {
        // A server takes many rows per statement (one round trip each).
        for (let i = 0; i < nodes.length; i += 500) {
          const insert = db.insertInto('task_flows').values(nodes.slice(i, i + 500))
          before.push(
            (dialect === 'mysql'
              ? insert.ignore()
              : insert.onConflict((oc) => oc.column('task_id').doNothing())
            ).compile(),
          )
        }
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
      // A parent that waits again is released in this same write when its children already
      // succeeded. Its counter row is locked first: a child's success committing concurrently
      // (whose own release found the parent still failed) is then either done before this
      // write reads the counters, or waits for this write and finds the parent held.
      const rewaited = holds.filter((hold) => hold.children === null).map((hold) => hold.task_id)
      if (rewaited.length > 0) {
        before.unshift(
          db
            .updateTable('task_flows')
            .set({ waiting: sql<number>`${sql.ref('waiting')}` })
            .where('task_id', 'in', rewaited)
            .compile(),
        )
      }
      const effects = flowEffectsOf(tasks)
      for (const parent of new Set([...effects.released, ...rewaited])) {
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
      await retryDeadlocks(() =>
        records.write(tasks, options.claim ?? null, { before, after, rows }),
      )
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
        records.write([task], null, { before: counterChanges(db, [task]), after, guard }),
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

    async results(flowId, parents) {
      const results = new Map<string, string | null>()
      if (parents.length === 0) return results
      const { db, dialect } = await open()
      // The flow index narrows to the flow's nodes; only succeeded children are read. SQLite and
      // PostgreSQL take the result out of the body themselves (a thousand children's bodies are
      // not parsed here); MySQL's JSON functions turn a JSON null into text, so it sends bodies.
      const query = db
        .selectFrom('task_flows')
        .innerJoin('tasks', 'tasks.task_id', 'task_flows.task_id')
        .where('task_flows.flow_id', '=', flowId)
        .where('task_flows.parent_id', 'in', [...parents])
        .where('tasks.status', '=', 'success')
      if (dialect === 'mysql') {
        const rows = await query.select(['tasks.task_id', 'tasks.body']).execute()
        for (const row of rows) results.set(row.task_id, parseTask(row.body).flow_result ?? null)
        return results
      }
      const result =
        dialect === 'sqlite'
          ? sql<string | null>`json_extract(${sql.ref('tasks.body')}, '$.flow_result')`
          : sql<string | null>`(${sql.ref('tasks.body')}::json ->> 'flow_result')`
      const rows = await query.select(['tasks.task_id', result.as('result')]).execute()
      for (const row of rows) results.set(row.task_id, row.result ?? null)
      return results
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
