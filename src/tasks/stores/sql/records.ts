/**
 * Task records on SQL (the {@link TaskRecordStore} port; see it for the semantics), and the
 * row writer the pending queue shares: an upsert by `task_id` that overwrites the record
 * columns and, for claimed writes, the claim columns.
 *
 * One write is one transaction holding the rows, the metric increments of the records that
 * became terminal, the tags of the records (insert-if-absent) and one change-feed row. Which
 * terminal rows are newly terminal is read just before (a record is written by the instance
 * that runs it, one write at a time, so nobody else changes it in between). The metric and tag
 * statements of a write are built in ./metric-increments.ts and ./tag-rows.ts.
 */
import type {
  CompiledQuery,
  ExpressionBuilder,
  InsertQueryBuilder,
  InsertResult,
  Kysely,
} from 'kysely'
import { TaskValidationError } from '../../errors.js'
import type { StoredTask } from '../../record.js'
import { TERMINAL_STATUSES, type TaskStatus } from '../../status.js'
import { StoreError } from '../errors.js'
import { durationBin, MINUTE_MS, minuteOf, TOTAL_MINUTE } from '../metrics-model.js'
import { GroupTally, groupOfBody } from '../group-counts.js'
import {
  GROUP_SCAN_LIMIT,
  PRUNABLE_STATUSES,
  type GroupCounts,
  type MetricCell,
  type TaskListQuery,
  type TaskPage,
  type TaskRecordStore,
} from '../ports.js'
import {
  checkListQuery,
  lastOfEach,
  parseTask,
  taskColumns,
  toNumber,
  type TaskColumns,
} from '../rows.js'
import { INSERT_CHUNK, type PreparedRows, type SqlBackend } from './backend.js'
import { pruneChanges } from './changes.js'
import { kysely, sql } from './kysely.js'
import { cellOf, CELL_KEYS, sums } from './metric-sums.js'
import { ListTotals } from './list-totals.js'
import { listRecords } from './list-query.js'
import { HOUR_GRAIN, hourOfMinute, MINUTE_GRAIN } from './migrations.js'
import { compileTagInsert, tagInserts, tagRows } from './tag-rows.js'
import {
  compileCountUpsert,
  countIncrements,
  countParams,
  metricIncrements,
  rollupIncrements,
  rollupRows,
  type CountedTable,
} from './metric-increments.js'
import { pgWriteQuery, pgWriteTexts, type Claim } from './pg-write.js'
import type { TaskDatabase, TaskMetricsTable } from './schema.js'

/** Columns an upsert overwrites on an existing row (the claim columns only with a claim). */
export const RECORD_COLUMNS = [
  'func_name',
  'status',
  'queue',
  'created_ms',
  'finished_ms',
  'duration',
  'progress',
  'progress_message',
  'body',
  'retried_as',
] as const
/** The claim columns an upsert with a claim overwrites too. */
export const CLAIM_COLUMNS = ['claimed_by', 'lease_until'] as const
/**
 * The record columns that change over a task's life: what the upsert overwrites when the stored
 * row already has the task's function, queue and creation time. Leaving those three out keeps
 * SQLite from rewriting the creation, function and queue index entries of every finished task
 * (~20 % of a terminal save's CPU on the row).
 */
const CHANGING_COLUMNS = RECORD_COLUMNS.filter(
  (column) => column !== 'func_name' && column !== 'queue' && column !== 'created_ms',
)

/** Columns of a task row, in the order of the prepared single-row upsert's parameters. */
const TASK_COLUMNS = ['task_id', ...RECORD_COLUMNS, ...CLAIM_COLUMNS, 'claim_token'] as const

/**
 * The parameters of the prepared row upsert, in {@link TASK_COLUMNS} order, written out rather
 * than mapped over the names: this runs once per row on the hottest write path.
 */
function upsertParams(row: TaskColumns, claim: Claim): unknown[] {
  return [
    row.task_id,
    row.func_name,
    row.status,
    row.queue,
    row.created_ms,
    row.finished_ms,
    row.duration,
    row.progress,
    row.progress_message,
    row.body,
    row.retried_as,
    claim === null ? null : claim.owner,
    claim === null ? null : claim.leaseUntil,
    null,
  ]
}

/** Every this many writes, the change feed is cut back to its most recent rows. */
const PRUNE_CHANGES_EVERY = 100

type Db = Kysely<TaskDatabase>

/** Opens the store's backend (connecting and migrating on first use). */
export type OpenBackend = () => Promise<SqlBackend>

/**
 * `insert` made an upsert on `task_id` in the dialect's form (`ON DUPLICATE KEY UPDATE` on MySQL,
 * `ON CONFLICT ... DO UPDATE` elsewhere), overwriting the record columns and, `withClaim`, the
 * claim columns with the inserted values.
 */
function taskUpsert(
  insert: InsertQueryBuilder<TaskDatabase, 'tasks', InsertResult>,
  dialect: SqlBackend['dialect'],
  withClaim: boolean,
  overwritten: readonly (typeof RECORD_COLUMNS)[number][] = RECORD_COLUMNS,
): InsertQueryBuilder<TaskDatabase, 'tasks', InsertResult> {
  const columns = withClaim ? [...overwritten, ...CLAIM_COLUMNS] : overwritten
  if (dialect === 'mysql') {
    return insert.onDuplicateKeyUpdate(
      Object.fromEntries(columns.map((column) => [column, sql`values(${sql.ref(column)})`])),
    )
  }
  return insert.onConflict((oc) =>
    oc
      .column('task_id')
      .doUpdateSet((eb) =>
        Object.fromEntries(columns.map((column) => [column, eb.ref(`excluded.${column}`)])),
      ),
  )
}

/** Task records on SQL. */
export class SqlTaskRecords implements TaskRecordStore {
  /** Prepared single-row upserts: [without claim, with claim]. */
  readonly #rowUpserts: [string | null, string | null] = [null, null]
  /** The same, overwriting only {@link CHANGING_COLUMNS} of an existing row. */
  readonly #changeUpserts: [string | null, string | null] = [null, null]
  /** Prepared single-row insert-if-absent of a tag row. */
  #tagInsert: string | null = null
  /** Prepared single-row add-to-count upserts of the metric tables. */
  readonly #countUpserts = new Map<CountedTable, string>()
  /** Prepared lookup of one task id's status, function, queue and creation time. */
  #identityLookup: string | null = null
  /** PostgreSQL's one-statement writes: [without claim, with claim]. */
  #pgWrites: [string, string] | null = null
  /** Totals of recent list queries by filter (the cached backend read). */
  readonly #totals: ListTotals
  #writes = 0

  constructor(
    private readonly open: OpenBackend,
    /** How long (ms) a list total may be reused for the same filters (longer for slow counts). */
    totalCacheMs: number,
    /** The change feed's origin of this store instance. */
    private readonly origin: string,
  ) {
    this.#totals = new ListTotals(totalCacheMs)
  }

  async save(tasks: readonly StoredTask[]): Promise<void> {
    await this.write(tasks, null)
  }

  /**
   * Upserts `tasks`, taking `claim` when given (the pending queue's enqueue). `around` adds
   * statements to the same transaction, before and after the rows (the flows' counters), and
   * optionally a `guard` run first: when it changes no row nothing is written and the write
   * resolves false. A guarded write takes the general batch path; an unguarded one with
   * `around` takes the prepared path on SQLite and the general batch path on a server.
   */
  async write(
    tasks: readonly StoredTask[],
    claim: Claim,
    around?: {
      before: readonly CompiledQuery[]
      after: readonly CompiledQuery[]
      guard?: CompiledQuery
      /** Rows of one prepared statement each, written after the records and before `after`. */
      rows?: readonly PreparedRows[]
    },
  ): Promise<boolean> {
    if (tasks.length === 0) return true
    const rows = tasks.map(taskColumns)
    const backend = await this.open()
    const db = backend.db
    // Only a terminal row may need a metric count; the hot path (pending enqueues) reads nothing.
    const terminalIds = rows
      .filter((row) => TERMINAL_STATUSES.has(row.status))
      .map((row) => row.task_id)
    const stored =
      backend.lookupRows === undefined || terminalIds.length === 0
        ? null
        : this.#storedRows(db, backend.lookupRows.bind(backend), terminalIds)
    const before =
      stored === null
        ? await this.#statuses(backend, terminalIds)
        : new Map([...stored].map(([id, row]) => [id, row.status]))
    const tags = tagRows(tasks, rows, before)
    const cells = newlyTerminal(rows, before)
    const rollups = rollupRows(cells, true)
    if (backend.dialect === 'postgres' && around === undefined) {
      const texts = (this.#pgWrites ??= pgWriteTexts(backend.prefix))
      const change = {
        origin: this.origin,
        task_ids: JSON.stringify(rows.map((row) => row.task_id)),
        changed_ms: Date.now(),
      }
      const write = { rows, claim, tags, cells, ...rollups, change }
      await db.executeQuery(pgWriteQuery(texts, write))
      // Pruning the feed needs no atomicity with the write (readers tolerate gaps).
      if (++this.#writes % PRUNE_CHANGES_EVERY === 0) await backend.batch(await pruneChanges(db))
      return true
    }
    const prepared = backend.batchRows !== undefined && around?.guard === undefined
    const extra = [
      ...(prepared
        ? []
        : [
            ...metricIncrements(db, backend.dialect, cells),
            ...countIncrements(db, backend.dialect, 'task_metric_counts', rollups.counts),
            ...countIncrements(db, backend.dialect, 'task_metric_hours', rollups.hours),
            ...tagInserts(db, backend.dialect, tags),
          ]),
      db
        .insertInto('task_changes')
        .values({
          origin: this.origin,
          task_ids: JSON.stringify(rows.map((row) => row.task_id)),
          changed_ms: Date.now(),
        })
        .compile(),
    ]
    if (++this.#writes % PRUNE_CHANGES_EVERY === 0) extra.push(...(await pruneChanges(db)))
    if (prepared && backend.batchRows !== undefined) {
      // One prepared single-row upsert per row in one native transaction: no per-batch SQL
      // building, which is what keeps SQLite near its raw write rate.
      const variant = claim === null ? 0 : 1
      const upsert = (this.#rowUpserts[variant] ??= compileRowUpsert(db, claim !== null))
      const { full, changing } = splitByStoredIdentity(rows, stored)
      const changeUpsert = (this.#changeUpserts[variant] ??= compileRowUpsert(
        db,
        claim !== null,
        CHANGING_COLUMNS,
      ))
      const tagInsert = (this.#tagInsert ??= compileTagInsert(db))
      const counted = <T extends CountedTable>(table: T, countRows: readonly TaskDatabase[T][]) => {
        let text = this.#countUpserts.get(table)
        if (text === undefined) {
          text = compileCountUpsert(db, table)
          this.#countUpserts.set(table, text)
        }
        return { text, rows: countParams(table, countRows) }
      }
      await backend.batchRows(
        [
          { text: upsert, rows: full.map((row) => upsertParams(row, claim)) },
          { text: changeUpsert, rows: changing.map((row) => upsertParams(row, claim)) },
          { text: tagInsert, rows: tags.map((tag) => [tag.tag_hash, tag.created_ms, tag.task_id]) },
          counted('task_metrics', cells),
          counted('task_metric_counts', rollups.counts),
          counted('task_metric_hours', rollups.hours),
          ...(around?.rows ?? []),
        ],
        [...extra, ...(around?.after ?? [])],
        around?.before,
      )
      return true
    }
    const claimed = rows.map((row) => ({
      ...row,
      claimed_by: claim?.owner ?? null,
      lease_until: claim?.leaseUntil ?? null,
      claim_token: null,
    }))
    const queries: CompiledQuery[] = []
    for (let i = 0; i < claimed.length; i += INSERT_CHUNK) {
      const insert = db.insertInto('tasks').values(claimed.slice(i, i + INSERT_CHUNK))
      queries.push(taskUpsert(insert, backend.dialect, claim !== null).compile())
    }
    const rowQueries = (around?.rows ?? []).flatMap((set) =>
      set.rows.map((params) => kysely().CompiledQuery.raw(set.text, params)),
    )
    return backend.batch(
      [...(around?.before ?? []), ...queries, ...extra, ...rowQueries, ...(around?.after ?? [])],
      around?.guard,
    )
  }

  /**
   * Writes the pending `task` with `claim` (its row, tags and change-feed entry, as
   * {@link write} does) only when no row has its id; true when this call wrote it. The row's
   * insert-if-absent decides, and the rest follows it in the same statement (PostgreSQL: one
   * statement of data-modifying CTEs, a round trip) or transaction (the insert is the guard).
   * A pending record counts in no metric, so there is nothing else to write.
   */
  async create(task: StoredTask, claim: NonNullable<Claim>): Promise<boolean> {
    const backend = await this.open()
    const { db, dialect } = backend
    const row = taskColumns(task)
    const values = {
      ...row,
      claimed_by: claim.owner,
      lease_until: claim.leaseUntil,
      claim_token: null,
    }
    const change = {
      origin: this.origin,
      task_ids: JSON.stringify([row.task_id]),
      changed_ms: Date.now(),
    }
    const tags = tagRows([task], [row], new Map())
    if (dialect === 'postgres') {
      // Every CTE inserts from `created`: nothing when the row existed.
      let query = db.with('created', (qb) =>
        qb
          .insertInto('tasks')
          .values(values)
          .onConflict((oc) => oc.column('task_id').doNothing())
          .returning('task_id'),
      )
      tags.forEach((tag, index) => {
        // Typed as `created` only so the chain keeps one type; each CTE has its own name.
        query = query.with(`tag${String(index)}` as 'created', (qb) =>
          qb
            .insertInto('task_tags')
            .columns(['tag_hash', 'created_ms', 'task_id'])
            .expression((eb) =>
              eb
                .selectFrom('created')
                .select([
                  eb.val(tag.tag_hash).as('tag_hash'),
                  eb.val(tag.created_ms).as('created_ms'),
                  'created.task_id',
                ]),
            )
            .onConflict((oc) => oc.doNothing())
            .returning('task_id'),
        )
      })
      const result = await query
        .insertInto('task_changes')
        .columns(['origin', 'task_ids', 'changed_ms'])
        .expression((eb) =>
          eb
            .selectFrom('created')
            .select([
              eb.val(change.origin).as('origin'),
              eb.val(change.task_ids).as('task_ids'),
              eb.val(change.changed_ms).as('changed_ms'),
            ]),
        )
        .executeTakeFirst()
      return Number(result.numInsertedOrUpdatedRows ?? 0n) > 0
    }
    const insert = db.insertInto('tasks').values(values)
    const guard =
      dialect === 'mysql'
        ? insert.ignore()
        : insert.onConflict((oc) => oc.column('task_id').doNothing())
    return backend.batch(
      [...tagInserts(db, dialect, tags), db.insertInto('task_changes').values(change).compile()],
      guard.compile(),
    )
  }

  /**
   * SQLite: the status and the never-changing columns of each of `ids` that has a row, in one
   * prepared statement over the ids as a JSON array (half the time of a lookup per id, which
   * pays the driver's call per row).
   */
  #storedRows(
    db: Db,
    lookupRows: NonNullable<SqlBackend['lookupRows']>,
    ids: readonly string[],
  ): Map<string, StoredIdentity> {
    const text = (this.#identityLookup ??=
      sql`select t.task_id, t.status, t.func_name, t.queue, t.created_ms
      from json_each(${''}) as j join ${sql.table('tasks')} as t on t.task_id = j.value`.compile(
        db,
      ).sql)
    const rows = lookupRows(text, [[JSON.stringify(ids)]]) as (StoredIdentity & {
      task_id: string
    })[]
    return new Map(rows.map((row) => [row.task_id, row]))
  }

  /**
   * The current status of each of `ids` that has a row, on the servers (SQLite reads them with
   * the never-changing columns, `#storedRows`).
   */
  async #statuses(backend: SqlBackend, ids: readonly string[]): Promise<Map<string, TaskStatus>> {
    if (ids.length === 0) return new Map()
    if (backend.dialect === 'postgres') {
      // One array parameter for any number of ids (no IN list to build and parse).
      const rows = await backend.db
        .selectFrom('tasks')
        .select(['task_id', 'status'])
        .where(sql<boolean>`task_id = any(${[...ids]})`)
        .execute()
      return new Map(rows.map((row) => [row.task_id, row.status as TaskStatus]))
    }
    return statuses(backend.db, ids)
  }

  async get(taskId: string): Promise<StoredTask | null> {
    const { db } = await this.open()
    const row = await db
      .selectFrom('tasks')
      .select('body')
      .where('task_id', '=', taskId)
      .executeTakeFirst()
    return row === undefined ? null : parseTask(row.body)
  }

  async list(query: TaskListQuery): Promise<TaskPage> {
    checkListQuery(query)
    const { db, dialect } = await this.open()
    return listRecords(db, dialect, query, this.#totals)
  }

  async loadAll(): Promise<StoredTask[]> {
    const { db } = await this.open()
    const rows = await db.selectFrom('tasks').select('body').orderBy('created_ms').execute()
    return rows.map((row) => parseTask(row.body))
  }

  async groupCounts(queue: string, limit: number): Promise<GroupCounts> {
    const { db, dialect } = await this.open()
    const tally = new GroupTally()
    let partial = false
    for (const status of ['pending', 'running'] as const) {
      // By the status index (the live records are few next to the history); SQLite is told
      // not to use the queue index, which would walk the queue's whole history.
      const rows = await db
        .selectFrom('tasks')
        .select('body')
        .where('status', '=', status)
        .where(dialect === 'sqlite' ? sql.raw<string>('+queue') : sql.ref('queue'), '=', queue)
        .orderBy('created_ms')
        .limit(GROUP_SCAN_LIMIT + 1)
        .execute()
      if (rows.length > GROUP_SCAN_LIMIT) partial = true
      for (const row of rows.slice(0, GROUP_SCAN_LIMIT)) tally.add(groupOfBody(row.body), status)
    }
    return tally.result(limit, partial)
  }

  async deleteTerminal(taskIds: readonly string[]): Promise<number> {
    if (taskIds.length === 0) return 0
    const backend = await this.open()
    const db = backend.db
    const found = await db
      .selectFrom('tasks')
      .select('task_id')
      .where('task_id', 'in', taskIds)
      .where('status', 'in', PRUNABLE_STATUSES)
      .execute()
    if (found.length === 0) return 0
    const ids = found.map((row) => row.task_id)
    // The status is checked again by the deletion itself: a terminal record never leaves its
    // terminal status, so the count read above is what goes.
    await backend.batch([
      db.deleteFrom('task_tags').where('task_id', 'in', ids).compile(),
      db.deleteFrom('task_flows').where('task_id', 'in', ids).compile(),
      db.deleteFrom('idempotency_keys').where('task_id', 'in', ids).compile(),
      db
        .deleteFrom('tasks')
        .where('task_id', 'in', ids)
        .where('status', 'in', PRUNABLE_STATUSES)
        .compile(),
    ])
    this.#totals.clear()
    return ids.length
  }

  async deleteTerminalBefore(cutoff: number): Promise<number> {
    if (!Number.isFinite(cutoff)) throw new TaskValidationError('cutoff must be epoch ms.')
    const backend = await this.open()
    const db = backend.db
    const doomed = (eb: ExpressionBuilder<TaskDatabase, 'tasks'>) =>
      eb.and([eb('status', 'in', PRUNABLE_STATUSES), eb('finished_ms', '<', cutoff)])
    const lastMinute = cutoff - MINUTE_MS
    const [count, minutes, hours] = await Promise.all([
      db
        .selectFrom('tasks')
        .select((eb) => eb.fn.countAll().as('n'))
        .where(doomed)
        .executeTakeFirstOrThrow(),
      db
        .selectFrom('task_metrics')
        .select([...CELL_KEYS, ...sums()])
        .where('minute_ms', '>=', 0)
        .where('minute_ms', '<=', lastMinute)
        .groupBy([...CELL_KEYS])
        .execute(),
      // The same minutes by hour: what leaves the hourly roll-ups.
      db
        .selectFrom('task_metrics')
        .select([hourOfMinute().as('h'), ...CELL_KEYS, ...sums()])
        .where('minute_ms', '>=', 0)
        .where('minute_ms', '<=', lastMinute)
        .groupBy(sql`1, 2, 3, 4`)
        .execute(),
    ])
    // Increments that take the summed cells back out, at `minute_ms`.
    const removal = (cell: MetricCell, minute_ms: number) => ({
      ...cell,
      minute_ms,
      count: -cell.count,
      duration_sum: -cell.duration_sum,
    })
    const leftHours = hours.map((row) => removal(cellOf(row), toNumber(row.h)))
    const taken = minutes.map((row) => removal(cellOf(row), TOTAL_MINUTE))
    const doomedIds = db.selectFrom('tasks').select('tasks.task_id').where(doomed)
    await backend.batch([
      ...metricIncrements(db, backend.dialect, taken),
      db
        .deleteFrom('task_metrics')
        .where('minute_ms', '>=', 0)
        .where('minute_ms', '<=', lastMinute)
        .compile(),
      db
        .deleteFrom('task_metrics')
        .where('minute_ms', '=', TOTAL_MINUTE)
        .where('count', '<=', 0)
        .compile(),
      ...rollupIncrements(db, backend.dialect, leftHours, false),
      db
        .deleteFrom('task_metric_counts')
        .where('grain_ms', '=', MINUTE_GRAIN)
        .where('period_ms', '<=', lastMinute)
        .compile(),
      db
        .deleteFrom('task_metric_counts')
        .where('grain_ms', '=', HOUR_GRAIN)
        .where('period_ms', '<=', lastMinute)
        .where('count', '<=', 0)
        .compile(),
      db
        .deleteFrom('task_metric_hours')
        .where('hour_ms', '<=', lastMinute)
        .where('count', '<=', 0)
        .compile(),
      db.deleteFrom('task_tags').where('task_id', 'in', doomedIds).compile(),
      db.deleteFrom('task_flows').where('task_id', 'in', doomedIds).compile(),
      db.deleteFrom('idempotency_keys').where('task_id', 'in', doomedIds).compile(),
      db.deleteFrom('tasks').where(doomed).compile(),
    ])
    this.#totals.clear()
    return toNumber(count.n)
  }
}

/** The current status of each of `ids` that has a row, through `IN (...)` queries. */
async function statuses(db: Db, ids: readonly string[]): Promise<Map<string, TaskStatus>> {
  const found = new Map<string, TaskStatus>()
  for (let i = 0; i < ids.length; i += INSERT_CHUNK) {
    const rows = await db
      .selectFrom('tasks')
      .select(['task_id', 'status'])
      .where('task_id', 'in', ids.slice(i, i + INSERT_CHUNK))
      .execute()
    for (const row of rows) found.set(row.task_id, row.status as TaskStatus)
  }
  return found
}

/** What a write needs to know of a stored row: its status and its never-changing columns. */
interface StoredIdentity {
  status: TaskStatus
  func_name: string
  queue: string
  created_ms: number
}

/**
 * The rows whose stored row has the same function, queue and creation time (`changing`: only
 * the changing columns need writing) and the others (`full`). A batch naming a task twice goes
 * out whole as `full`, so its writes keep their order.
 */
function splitByStoredIdentity(
  rows: readonly TaskColumns[],
  stored: ReadonlyMap<string, StoredIdentity> | null,
): { full: readonly TaskColumns[]; changing: readonly TaskColumns[] } {
  if (stored === null || stored.size === 0) return { full: rows, changing: [] }
  if (lastOfEach(rows, (row) => row.task_id) !== rows) return { full: rows, changing: [] }
  const full: TaskColumns[] = []
  const changing: TaskColumns[] = []
  for (const row of rows) {
    const previous = stored.get(row.task_id)
    const same =
      previous !== undefined &&
      previous.func_name === row.func_name &&
      previous.queue === row.queue &&
      toNumber(previous.created_ms) === row.created_ms
    ;(same ? changing : full).push(row)
  }
  return { full, changing }
}

/** Metric rows (minute and totals) of the rows that become terminal with this write. */
function newlyTerminal(
  rows: readonly ReturnType<typeof taskColumns>[],
  before: ReadonlyMap<string, TaskStatus>,
): TaskMetricsTable[] {
  const cells = new Map<string, TaskMetricsTable>()
  const add = (row: ReturnType<typeof taskColumns>, minute: number) => {
    const bin = durationBin(row.duration)
    const key = `${row.func_name}\n${String(minute)}\n${row.status}\n${String(bin)}`
    const cell = cells.get(key)
    if (cell === undefined) {
      cells.set(key, {
        func_name: row.func_name,
        minute_ms: minute,
        status: row.status,
        bin,
        count: 1,
        duration_sum: row.duration,
      })
    } else {
      cell.count++
      cell.duration_sum += row.duration
    }
  }
  for (const row of rows) {
    const previous = before.get(row.task_id)
    if (!TERMINAL_STATUSES.has(row.status) || row.finished_ms === null) continue
    if (previous !== undefined && TERMINAL_STATUSES.has(previous)) continue
    add(row, minuteOf(row.finished_ms))
    add(row, TOTAL_MINUTE)
  }
  return [...cells.values()]
}

function compileRowUpsert(
  db: Db,
  withClaim: boolean,
  overwritten: readonly (typeof RECORD_COLUMNS)[number][] = RECORD_COLUMNS,
): string {
  const template = Object.fromEntries(TASK_COLUMNS.map((column) => [column, null])) as never
  const insert = db.insertInto('tasks').values(template)
  const compiled = taskUpsert(insert, 'sqlite', withClaim, overwritten).compile()
  if (compiled.parameters.length !== TASK_COLUMNS.length) {
    throw new StoreError('Unexpected shape of the compiled task upsert.')
  }
  return compiled.sql
}
