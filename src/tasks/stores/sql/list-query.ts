/**
 * The task list on SQL (`records.list`): one page of records, newest first, and the number of
 * records matching the filters.
 *
 * On SQLite and PostgreSQL the indexes on creation time, function and queue hold the history
 * only (every status but pending and running; schema version 13): a pending task costs an enqueue
 * the row, its primary key and the status index. So a list is read in parts, each served by an
 * index: the pending records and the running records by the status index, the history by the
 * history indexes (its queries state the history condition as the indexes do, the form SQLite
 * needs to use a partial index). A filter on one status reads one part; without one, the three
 * parts are read newest first (each at most the page's end), merged by the database, and
 * counted apart and added. MySQL has no partial indexes: its indexes hold every record and a
 * list is one query.
 */
import type { Expression, ExpressionBuilder, Kysely, SqlBool } from 'kysely'
import type { TaskStatus } from '../../status.js'
import type { TaskListQuery, TaskPage } from '../ports.js'
import { parseTask, tagHash, toNumber } from '../rows.js'
import { sql } from './kysely.js'
import type { ListTotals } from './list-totals.js'
import {
  FAILURE_STATUSES,
  failureCondition,
  historyCondition,
  QUEUED_STATUSES,
  type SqlDialectName,
} from './migrations.js'
import type { TaskDatabase } from './schema.js'

type Db = Kysely<TaskDatabase>
type Eb = ExpressionBuilder<TaskDatabase, 'tasks'>
/** The status condition of one part of a list (null: any status). */
type StatusPart = ((eb: Eb) => Expression<SqlBool>) | null

/** Escapes `%`, `_` and the escape character `!` for a LIKE pattern (`... ESCAPE '!'`). */
function likePrefix(text: string): string {
  return `${text.replace(/[!%_]/g, (c) => `!${c}`)}%`
}

/**
 * Below this many characters a task-id prefix matches too many records for the primary key to
 * help a page (sorting them all by time costs more than scanning the time index for the 50
 * newest that match); a count still reads them from the primary key. A task id's first 13
 * characters are its creation time (`tttttttt-tttt`), so a shorter prefix names a window of time
 * that can hold any number of records.
 */
const INDEXED_PREFIX = 13

/**
 * A task-id prefix match on SQLite: GLOB (case-sensitive like the other stores' prefix
 * matches, and, unlike LIKE, served by the primary key: a full id is found at once instead of
 * by a scan of the history), with `*`, `?` and `[` made literal. For a page (`ordered`), a
 * short prefix keeps off that index (the unary `+`) so the planner walks the time index.
 */
function sqlitePrefix(text: string, ordered: boolean) {
  const pattern = `${text.replace(/[*?[]/g, (c) => `[${c}]`)}*`
  return ordered && text.length < INDEXED_PREFIX
    ? sql<boolean>`+${sql.ref('task_id')} glob ${pattern}`
    : sql<boolean>`${sql.ref('task_id')} glob ${pattern}`
}

const isQueued = (status: TaskStatus) => (QUEUED_STATUSES as readonly string[]).includes(status)

/**
 * The parts a list with this status filter reads: one, unless no status is given (then pending,
 * running and, last, the history).
 */
function statusParts(status: TaskStatus | undefined, dialect: SqlDialectName): StatusPart[] {
  if (dialect === 'mysql') return [status === undefined ? null : (eb) => eb('status', '=', status)]
  if (status !== undefined) {
    return isQueued(status)
      ? [(eb) => eb('status', '=', status)]
      : [(eb) => eb.and([eb('status', '=', status), historyCondition()])]
  }
  return [
    ...QUEUED_STATUSES.map(
      (queued): StatusPart =>
        (eb) =>
          eb('status', '=', queued),
    ),
    () => historyCondition(),
  ]
}

/** The filters of `query` but its status, for one part; `ordered`: for a page, else a count. */
function filterOf(
  query: TaskListQuery,
  dialect: SqlDialectName,
  part: StatusPart,
  ordered: boolean,
) {
  return (eb: Eb) => {
    const parts: Expression<SqlBool>[] = []
    if (part !== null) parts.push(part(eb))
    if (query.funcName !== undefined) parts.push(eb('func_name', '=', query.funcName))
    if (query.queue !== undefined) parts.push(eb('queue', '=', query.queue))
    if (
      (query.queue !== undefined || query.retried === false) &&
      dialect !== 'mysql' &&
      (FAILURE_STATUSES as readonly string[]).includes(query.status ?? '')
    ) {
      // Implied by the status; stated so that the failures index (with a queue) or the dead
      // letters index (failures not retried) may serve the filter.
      parts.push(failureCondition(dialect))
    }
    if (query.since !== undefined) parts.push(eb('created_ms', '>=', query.since))
    if (query.retried !== undefined) {
      parts.push(eb('retried_as', query.retried ? 'is not' : 'is', null))
    }
    if (query.flow !== undefined) {
      parts.push(
        eb(
          'task_id',
          'in',
          eb
            .selectFrom('task_flows')
            .select('task_flows.task_id')
            .where('task_flows.flow_id', '=', query.flow),
        ),
      )
    }
    if (query.q !== undefined) {
      parts.push(
        eb.or([
          dialect === 'sqlite'
            ? sqlitePrefix(query.q, ordered)
            : sql<boolean>`${sql.ref('task_id')} like ${likePrefix(query.q)} escape '!'`,
          eb('func_name', '=', query.q),
        ]),
      )
    }
    for (const [key, value] of query.tags ?? []) {
      parts.push(
        eb(
          'task_id',
          'in',
          eb
            .selectFrom('task_tags')
            .select('task_tags.task_id')
            .where('tag_hash', '=', tagHash(key, value)),
        ),
      )
    }
    return eb.and(parts)
  }
}

/** The cache key of a filter's total. */
function totalKey(query: TaskListQuery): string {
  return JSON.stringify([
    query.status,
    query.funcName,
    query.queue,
    query.since,
    query.q,
    query.tags,
    query.flow,
    query.retried,
  ])
}

/** The total key of a list with no filter. */
const NO_FILTER = totalKey({ page: 1, perPage: 1 })

/** The bodies of the page's records, newest first. */
async function pageBodies(
  db: Db,
  query: TaskListQuery,
  dialect: SqlDialectName,
  parts: readonly StatusPart[],
): Promise<string[]> {
  const offset = (query.page - 1) * query.perPage
  const newestFirst = (part: StatusPart) =>
    db
      .selectFrom('tasks')
      .where(filterOf(query, dialect, part, true))
      .orderBy('created_ms', 'desc')
      .orderBy('task_id', 'desc')
  if (parts.length === 1) {
    const rows = await newestFirst(parts[0] ?? null)
      .select('body')
      .limit(query.perPage)
      .offset(offset)
      .execute()
    return rows.map((row) => row.body)
  }
  // The keys of each part up to the page's end (a subquery, so each keeps its own order and
  // limit; read from the part's index alone), the page's ids from their union, then those
  // records' bodies: a page reads as many rows as it shows.
  const end = offset + query.perPage
  const keys = (part: StatusPart) =>
    db
      .selectFrom(newestFirst(part).select(['created_ms', 'task_id']).limit(end).as('part'))
      .select(['created_ms', 'task_id'])
  let union = keys(parts[0] ?? null)
  for (const part of parts.slice(1)) union = union.unionAll(keys(part))
  const pageIds = db
    .selectFrom(union.as('merged'))
    .select('merged.task_id')
    .orderBy('merged.created_ms', 'desc')
    .orderBy('merged.task_id', 'desc')
    .limit(query.perPage)
    .offset(offset)
  const rows = await db
    .selectFrom('tasks')
    .select('body')
    .where('task_id', 'in', pageIds)
    .orderBy('created_ms', 'desc')
    .orderBy('task_id', 'desc')
    .execute()
  return rows.map((row) => row.body)
}

/** The number of records in one part matching the filters, counting at most `limit` + 1. */
async function countPart(
  db: Db,
  query: TaskListQuery,
  dialect: SqlDialectName,
  part: StatusPart,
  limit: number | undefined,
): Promise<number> {
  const filtered = filterOf(query, dialect, part, false)
  if (limit === undefined) {
    const row = await db
      .selectFrom('tasks')
      .select((eb) => eb.fn.countAll().as('n'))
      .where(filtered)
      .executeTakeFirstOrThrow()
    return toNumber(row.n)
  }
  // One past the limit, from a subquery: the count stops there, whatever the history. On
  // SQLite in the list's order, so that the planner walks the index a page of this part reads
  // (it would otherwise scan the status index past every queued record for the history's first
  // matches); not with an id prefix, which the primary key serves.
  const ordered = dialect === 'sqlite' && query.q === undefined
  const row = await db
    .selectFrom((eb) => {
      const matching = eb
        .selectFrom('tasks')
        .select(sql<number>`1`.as('one'))
        .where(filtered)
        .limit(limit + 1)
      return (
        ordered ? matching.orderBy('created_ms', 'desc').orderBy('task_id', 'desc') : matching
      ).as('matching')
    })
    .select((eb) => eb.fn.countAll().as('n'))
    .executeTakeFirstOrThrow()
  return toNumber(row.n)
}

/**
 * One page of records matching `query` (already checked), newest first, with their total:
 * counted up to `query.countLimit` when given, else served by `totals`.
 */
export async function listRecords(
  db: Db,
  dialect: SqlDialectName,
  query: TaskListQuery,
  totals: ListTotals,
): Promise<TaskPage> {
  const parts = statusParts(query.status, dialect)
  const key = totalKey(query)
  const count = async (limit: number | undefined) => {
    if (limit === undefined) {
      // No filter at all: one count of the table, which the database answers from its smallest
      // B-tree without a condition to test per entry.
      if (parts.length > 1 && key === NO_FILTER) {
        return countPart(db, query, dialect, null, undefined)
      }
      const counts = await Promise.all(
        parts.map((part) => countPart(db, query, dialect, part, undefined)),
      )
      return counts.reduce((sum, n) => sum + n, 0)
    }
    // A capped count stops once past the limit, across the parts: each counts at most what is
    // left of it. The history first: it is the largest part and has an index per filter, so a
    // busy filter reaches the limit there without walking the queued records.
    let counted = 0
    for (const part of [...parts].reverse()) {
      counted += await countPart(db, query, dialect, part, limit - counted)
      if (counted > limit) break
    }
    return counted
  }
  const bodies = pageBodies(db, query, dialect, parts)
  const limit = query.countLimit
  if (limit !== undefined) {
    const [rows, n] = await Promise.all([bodies, count(limit)])
    return {
      items: rows.map((body) => parseTask(body)),
      total: Math.min(n, limit),
      total_capped: n > limit,
      page: query.page,
      per_page: query.perPage,
    }
  }
  const [rows, total] = await Promise.all([bodies, totals.get(key, () => count(undefined))])
  return {
    items: rows.map((body) => parseTask(body)),
    total,
    page: query.page,
    per_page: query.perPage,
  }
}
