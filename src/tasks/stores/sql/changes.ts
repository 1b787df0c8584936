/**
 * The change feed on SQL (the {@link TaskChangeFeed} port): one `task_changes` row per write,
 * with an auto-increment id. Ids are assigned when a row is inserted but become visible when
 * its transaction commits, so a reader that saw id 12 may later find id 11; each read starts
 * a little before the position (`LOOKBACK` ids) and the reader drops the ids it has seen.
 */
import type { CompiledQuery, Kysely } from 'kysely'
import type { TaskChangeFeed } from '../ports.js'
import { toNumber } from '../rows.js'
import type { OpenBackend } from './records.js'
import type { TaskDatabase } from './schema.js'

/** Ids read again before the position, for transactions that committed out of id order. */
const LOOKBACK = 100
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
        return {
          id: String(id),
          origin: row.origin,
          task_ids: changedTaskIds(row.task_ids),
        }
      })
      return { position: String(position), changes }
    },
  }
}
