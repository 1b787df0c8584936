/**
 * The change feed on SQL (the {@link TaskChangeFeed} port): one `task_changes` row per write,
 * with an auto-increment id. Ids are assigned when a row is inserted but become visible when
 * its transaction commits, so a reader that saw id 12 may later find id 11; each read starts
 * a little before the position (`LOOKBACK` ids) and the reader drops the ids it has seen.
 *
 * A cancel request is a change row whose origin ends in {@link CANCEL_MARK}: marking the origin
 * keeps the table's shape, and a version that does not know the mark just relays the record.
 * An announcement of operator controls is a row whose origin ends in {@link CONTROLS_MARK} and
 * that names no task (an older version reads it as a write of nothing).
 */
import type { CompiledQuery, Kysely } from 'kysely'
import type { TaskChangeFeed } from '../ports.js'
import { toNumber } from '../rows.js'
import { sql } from './kysely.js'
import type { OpenBackend } from './records.js'
import type { TaskDatabase } from './schema.js'

/** Ids read again before the position, for transactions that committed out of id order. */
const LOOKBACK = 100
/** Suffix of the origin of a cancel-request row. */
const CANCEL_MARK = '#cancel'
/** Suffix of the origin of a row announcing that operator controls changed. */
const CONTROLS_MARK = '#controls'
/** Rows the feed keeps (older ones are pruned by the writers). */
export const CHANGES_KEPT = 10_000

/** The statement that cuts the feed back to its last {@link CHANGES_KEPT} rows (none if short). */
export async function pruneChanges(db: Kysely<TaskDatabase>): Promise<CompiledQuery[]> {
  const row = await db
    .selectFrom('task_changes')
    .select((eb) => eb.fn.max('id').as('top'))
    .executeTakeFirst()
  const top = toNumber(row?.top ?? 0)
  if (!(top > CHANGES_KEPT)) return []
  return [
    db
      .deleteFrom('task_changes')
      .where('id', '<=', top - CHANGES_KEPT)
      .compile(),
  ]
}

/**
 * The task ids of a change row. A row this version cannot read (written by hand, or by a newer
 * version in another shape) names no task: throwing would stop the feed at that row for good,
 * since every later read starts before it.
 */
export function changedTaskIds(text: string): string[] {
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    return []
  }
  return Array.isArray(parsed) ? parsed.filter((id): id is string => typeof id === 'string') : []
}

/** The change feed on SQL. */
export function sqlChanges(open: OpenBackend, origin: string): TaskChangeFeed {
  return {
    origin,
    async read(after, limit) {
      const { db } = await open()
      if (after === null) {
        const row = await db
          .selectFrom('task_changes')
          .select((eb) => eb.fn.max('id').as('top'))
          .executeTakeFirst()
        return { position: String(toNumber(row?.top ?? 0) || 0), changes: [] }
      }
      const from = Math.max(0, Number(after) - LOOKBACK)
      const rows = await db
        .selectFrom('task_changes')
        .select(['id', 'origin', 'task_ids'])
        .where('id', '>', from)
        .orderBy('id')
        .limit(limit + LOOKBACK)
        .execute()
      let position = Number(after)
      const changes = rows.map((row) => {
        const id = toNumber(row.id)
        position = Math.max(position, id)
        const cancel = row.origin.endsWith(CANCEL_MARK)
        const controls = row.origin.endsWith(CONTROLS_MARK)
        const mark = cancel ? CANCEL_MARK.length : controls ? CONTROLS_MARK.length : 0
        return {
          id: String(id),
          origin: mark === 0 ? row.origin : row.origin.slice(0, -mark),
          task_ids: changedTaskIds(row.task_ids),
          ...(cancel ? { cancel } : {}),
          ...(controls ? { controls } : {}),
        }
      })
      return { position: String(position), changes }
    },
    async requestCancel(taskId) {
      const { db } = await open()
      // One INSERT … SELECT: the row is written only if the record is live at that instant.
      // The time is a number literal: a bare parameter in a select list has no type on
      // PostgreSQL and would be read as text.
      const result = await db
        .insertInto('task_changes')
        .columns(['origin', 'task_ids', 'changed_ms'])
        .expression(
          db
            .selectFrom('tasks')
            .select([
              sql<string>`${origin + CANCEL_MARK}`.as('origin'),
              sql<string>`${JSON.stringify([taskId])}`.as('task_ids'),
              sql.lit(Date.now()).as('changed_ms'),
            ])
            .where('task_id', '=', taskId)
            .where('status', 'in', ['pending', 'running']),
        )
        .executeTakeFirst()
      return Number(result.numInsertedOrUpdatedRows ?? 0) > 0
    },
    async announceControls() {
      const { db } = await open()
      await db
        .insertInto('task_changes')
        .values({ origin: origin + CONTROLS_MARK, task_ids: '[]', changed_ms: Date.now() })
        .execute()
    },
  }
}
