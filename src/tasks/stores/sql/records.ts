/**
 * Task records on SQL (the {@link TaskRecordStore} port; see it for the semantics), and the
 * row writer the pending queue shares: an upsert by `task_id` that overwrites the record
 * columns and, for claimed writes, the claim columns.
 */
import {
  sql,
  type CompiledQuery,
  type ExpressionBuilder,
  type InsertQueryBuilder,
  type InsertResult,
  type Kysely,
} from 'kysely'
import { TaskValidationError } from '../../errors.js'
import type { StoredTask } from '../../record.js'
import type { TaskStatus } from '../../status.js'
import { StoreError } from '../errors.js'
import {
  PRUNABLE_STATUSES,
  type TaskAggregate,
  type TaskListQuery,
  type TaskPage,
  type TaskRecordStore,
} from '../ports.js'
import { checkListQuery, parseTask, taskColumns, toNumber } from '../rows.js'
import type { SqlBackend } from './backend.js'
import type { TaskDatabase } from './schema.js'

/** Columns an upsert overwrites on an existing row (the claim columns only with a claim). */
const RECORD_COLUMNS = [
  'func_name',
  'status',
  'queue',
  'created_ms',
  'finished_ms',
  'duration',
  'body',
] as const
const CLAIM_COLUMNS = ['claimed_by', 'lease_until'] as const

/** Columns of a task row, in the order of the prepared single-row upsert's parameters. */
const TASK_COLUMNS = ['task_id', ...RECORD_COLUMNS, ...CLAIM_COLUMNS, 'claim_token'] as const

/** Rows per multi-row INSERT (well under every dialect's bound-parameter limit). */
const INSERT_CHUNK = 400

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
): InsertQueryBuilder<TaskDatabase, 'tasks', InsertResult> {
  const columns = withClaim ? [...RECORD_COLUMNS, ...CLAIM_COLUMNS] : RECORD_COLUMNS
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
  /** Totals of recent list queries by filter (the cached backend read). */
  readonly #totals = new Map<string, { total: number; at: number }>()

  constructor(
    private readonly open: OpenBackend,
    /** How long (ms) a list total may be reused for the same filters. */
    private readonly totalCacheMs: number,
  ) {}

  save(tasks: readonly StoredTask[]): Promise<void> {
    return this.write(tasks, null)
  }

  /** Upserts `tasks`, taking `claim` when given (the pending queue's enqueue). */
  async write(
    tasks: readonly StoredTask[],
    claim: { owner: string; leaseUntil: number } | null,
  ): Promise<void> {
    if (tasks.length === 0) return
    const rows = tasks.map((task) => ({
      ...taskColumns(task),
      claimed_by: claim?.owner ?? null,
      lease_until: claim?.leaseUntil ?? null,
      claim_token: null,
    }))
    const backend = await this.open()
    const db = backend.db
    if (backend.batchRows !== undefined) {
      // One prepared single-row upsert per row in one native transaction: no per-batch SQL
      // building, which is what keeps SQLite near its raw write rate.
      const variant = claim === null ? 0 : 1
      const text = (this.#rowUpserts[variant] ??= compileRowUpsert(db, claim !== null))
      await backend.batchRows(
        text,
        rows.map((row) => TASK_COLUMNS.map((column) => row[column])),
      )
      return
    }
    const queries: CompiledQuery[] = []
    for (let i = 0; i < rows.length; i += INSERT_CHUNK) {
      const insert = db.insertInto('tasks').values(rows.slice(i, i + INSERT_CHUNK))
      queries.push(taskUpsert(insert, backend.dialect, claim !== null).compile())
    }
    await backend.batch(queries)
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
    const { db } = await this.open()
    const filtered = (eb: ExpressionBuilder<TaskDatabase, 'tasks'>) => {
      const parts = []
      if (query.status !== undefined) parts.push(eb('status', '=', query.status))
      if (query.funcName !== undefined) parts.push(eb('func_name', '=', query.funcName))
      if (query.queue !== undefined) parts.push(eb('queue', '=', query.queue))
      if (query.since !== undefined) parts.push(eb('created_ms', '>=', query.since))
      return eb.and(parts)
    }
    const totalKey = JSON.stringify([query.status, query.funcName, query.queue, query.since])
    const cached = this.#totals.get(totalKey)
    const now = Date.now()
    const fresh = cached !== undefined && now - cached.at < this.totalCacheMs
    const [rows, count] = await Promise.all([
      db
        .selectFrom('tasks')
        .select('body')
        .where(filtered)
        .orderBy('created_ms', 'desc')
        .orderBy('task_id', 'desc')
        .limit(query.perPage)
        .offset((query.page - 1) * query.perPage)
        .execute(),
      fresh
        ? cached.total
        : db
            .selectFrom('tasks')
            .select((eb) => eb.fn.countAll().as('n'))
            .where(filtered)
            .executeTakeFirstOrThrow()
            .then((row) => toNumber(row.n)),
    ])
    if (this.totalCacheMs > 0 && !fresh) {
      if (this.#totals.size > 1000) this.#totals.clear()
      this.#totals.set(totalKey, { total: count, at: now })
    }
    return {
      items: rows.map((row) => parseTask(row.body)),
      total: count,
      page: query.page,
      per_page: query.perPage,
    }
  }

  async loadAll(): Promise<StoredTask[]> {
    const { db } = await this.open()
    const rows = await db.selectFrom('tasks').select('body').orderBy('created_ms').execute()
    return rows.map((row) => parseTask(row.body))
  }

  async aggregate(): Promise<TaskAggregate[]> {
    const { db } = await this.open()
    const rows = await db
      .selectFrom('tasks')
      .select((eb) => [
        'func_name',
        'status',
        eb.fn.countAll().as('n'),
        eb.fn.sum<number>('duration').as('total'),
      ])
      .groupBy(['func_name', 'status'])
      .execute()
    return rows.map((row) => ({
      func_name: row.func_name,
      status: row.status as TaskStatus,
      count: toNumber(row.n),
      total_duration: toNumber(row.total),
    }))
  }

  async deleteTerminalBefore(cutoff: number): Promise<number> {
    if (!Number.isFinite(cutoff)) throw new TaskValidationError('cutoff must be epoch ms.')
    const { db } = await this.open()
    const result = await db
      .deleteFrom('tasks')
      .where('status', 'in', PRUNABLE_STATUSES)
      .where('finished_ms', '<', cutoff)
      .executeTakeFirst()
    return Number(result.numDeletedRows)
  }
}

function compileRowUpsert(db: Db, withClaim: boolean): string {
  const template = Object.fromEntries(TASK_COLUMNS.map((column) => [column, null])) as never
  const insert = db.insertInto('tasks').values(template)
  const compiled = taskUpsert(insert, 'sqlite', withClaim).compile()
  if (compiled.parameters.length !== TASK_COLUMNS.length) {
    throw new StoreError('Unexpected shape of the compiled task upsert.')
  }
  return compiled.sql
}
