/**
 * The SQL task store: one implementation of {@link DurableTaskStore} for SQLite, PostgreSQL and
 * MySQL/MariaDB through Kysely. Dialect differences are confined to upserts and
 * insert-if-absent (`ON CONFLICT` vs `ON DUPLICATE KEY` / `INSERT IGNORE`).
 *
 * The pending queue's claims (`pending-queue.ts`), the one-off schedules (`one-off.ts`) and the
 * admin data (`admin-data.ts`) live in modules of their own; this class ties them to one
 * connection and its migrations.
 */
import {
  sql,
  type CompiledQuery,
  type ExpressionBuilder,
  type InsertQueryBuilder,
  type InsertResult,
  type Kysely,
} from 'kysely'
import type { StoredTask } from '../../record.js'
import { TaskValidationError } from '../../errors.js'
import type { TaskStatus } from '../../status.js'
import {
  PRUNABLE_STATUSES,
  type AuditPage,
  type ClaimedOneOff,
  type ClaimedTask,
  type ClaimPendingRequest,
  type DurableTaskStore,
  type LeaseRequest,
  type OneOffEntry,
  type StoredQueueConfig,
  type TaskAggregate,
  type TaskAuditEntry,
  type TaskListQuery,
  type TaskPage,
} from '../ports.js'
import { checkPendingBatch, checkListQuery, parseTask, taskColumns, toNumber } from '../rows.js'
import { openSqlBackend, type SqlBackend, type SqlConnectionSpec } from './backend.js'
import * as adminData from './admin-data.js'
import { CURRENT_SCHEMA_VERSION } from './migrations.js'
import * as oneOff from './one-off.js'
import * as pendingQueue from './pending-queue.js'
import { StoreError } from '../errors.js'
import type { TaskDatabase } from './schema.js'

/** Options shared by the SQL store factories. */
export interface SqlStoreOptions {
  /** Prefix of every table name (letters, digits, `_`); default `switchyard_`. */
  tablePrefix?: string
  /** Migrate only up to this schema version (for upgrade tests); default: the current one. */
  schemaVersion?: number
  /**
   * How long (ms) the total of a list query may be reused for the same filters; default 5000
   * (the spec's cached backend read), 0 to count every time. Items are always read fresh:
   * only `total` may lag by up to this long. Counting a million rows costs tens of ms.
   */
  totalCacheMs?: number
  /** Current time for migration records; default `Date.now`. */
  now?: () => number
}

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

/** Rows per multi-row INSERT (well under every dialect's bound-parameter limit). */
const INSERT_CHUNK = 400

type Db = Kysely<TaskDatabase>

/** A {@link DurableTaskStore} over SQLite, PostgreSQL or MySQL/MariaDB. */
export class SqlTaskStore implements DurableTaskStore {
  readonly kind: string
  readonly supportsOneOff = true
  #backend: SqlBackend | null = null
  /** Prepared single-row upserts: [without claim, with claim]. */
  readonly #rowUpserts: [string | null, string | null] = [null, null]
  /** Totals of recent list queries by filter (the spec's cached backend read). */
  readonly #totals = new Map<string, { total: number; at: number }>()
  #opening: Promise<SqlBackend> | null = null
  readonly #prefix: string

  constructor(
    private readonly spec: SqlConnectionSpec,
    private readonly options: SqlStoreOptions = {},
  ) {
    this.kind = spec.dialect
    this.#prefix = options.tablePrefix ?? 'switchyard_'
  }

  async init(): Promise<void> {
    await this.#open()
  }

  #open(): Promise<SqlBackend> {
    if (this.#backend !== null) return Promise.resolve(this.#backend)
    this.#opening ??= (async () => {
      const backend = await openSqlBackend(this.spec, this.#prefix)
      try {
        const now = (this.options.now ?? Date.now)()
        await backend.migrate(this.options.schemaVersion ?? CURRENT_SCHEMA_VERSION, now)
      } catch (error) {
        await backend.close().catch(() => undefined)
        throw error
      }
      this.#backend = backend
      return backend
    })().finally(() => {
      this.#opening = null
    })
    return this.#opening
  }

  async #db(): Promise<Db> {
    return (await this.#open()).db
  }

  // ---- records -------------------------------------------------------------------------

  async saveTasks(tasks: readonly StoredTask[]): Promise<void> {
    await this.#writeTasks(tasks, null)
  }

  async #writeTasks(
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
    const backend = await this.#open()
    const db = backend.db
    if (backend.batchRows !== undefined) {
      // One prepared single-row upsert per row in one native transaction: no per-batch SQL
      // building, which is what keeps SQLite near its raw write rate.
      const variant = claim === null ? 0 : 1
      const text = (this.#rowUpserts[variant] ??= this.#compileRowUpsert(db, claim !== null))
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

  #compileRowUpsert(db: Db, withClaim: boolean): string {
    const template = Object.fromEntries(TASK_COLUMNS.map((column) => [column, null])) as never
    const insert = db.insertInto('tasks').values(template)
    const compiled = taskUpsert(insert, 'sqlite', withClaim).compile()
    if (compiled.parameters.length !== TASK_COLUMNS.length) {
      throw new StoreError('Unexpected shape of the compiled task upsert.')
    }
    return compiled.sql
  }

  async loadTasks(): Promise<StoredTask[]> {
    const db = await this.#db()
    const rows = await db.selectFrom('tasks').select('body').orderBy('created_ms').execute()
    return rows.map((row) => parseTask(row.body))
  }

  async getTask(taskId: string): Promise<StoredTask | null> {
    const db = await this.#db()
    const row = await db
      .selectFrom('tasks')
      .select('body')
      .where('task_id', '=', taskId)
      .executeTakeFirst()
    return row === undefined ? null : parseTask(row.body)
  }

  async listTasks(query: TaskListQuery): Promise<TaskPage> {
    checkListQuery(query)
    const db = await this.#db()
    const filtered = (eb: ExpressionBuilder<TaskDatabase, 'tasks'>) => {
      const parts = []
      if (query.status !== undefined) parts.push(eb('status', '=', query.status))
      if (query.funcName !== undefined) parts.push(eb('func_name', '=', query.funcName))
      if (query.queue !== undefined) parts.push(eb('queue', '=', query.queue))
      if (query.since !== undefined) parts.push(eb('created_ms', '>=', query.since))
      return eb.and(parts)
    }
    const totalKey = JSON.stringify([query.status, query.funcName, query.queue, query.since])
    const cacheMs = this.options.totalCacheMs ?? 5000
    const cached = this.#totals.get(totalKey)
    const now = Date.now()
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
      cached !== undefined && now - cached.at < cacheMs
        ? cached.total
        : db
            .selectFrom('tasks')
            .select((eb) => eb.fn.countAll().as('n'))
            .where(filtered)
            .executeTakeFirstOrThrow()
            .then((row) => toNumber(row.n)),
    ])
    if (cacheMs > 0 && (cached === undefined || now - cached.at >= cacheMs)) {
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

  async aggregateTasks(): Promise<TaskAggregate[]> {
    const db = await this.#db()
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
    const db = await this.#db()
    const result = await db
      .deleteFrom('tasks')
      .where('status', 'in', PRUNABLE_STATUSES)
      .where('finished_ms', '<', cutoff)
      .executeTakeFirst()
    return Number(result.numDeletedRows)
  }

  // ---- the pending queue ---------------------------------------------------------------

  async enqueuePending(
    tasks: readonly StoredTask[],
    lease: Omit<LeaseRequest, 'now'>,
  ): Promise<void> {
    checkPendingBatch(tasks, lease)
    await this.#writeTasks(tasks, { owner: lease.owner, leaseUntil: lease.leaseUntil })
  }

  claimPending(request: ClaimPendingRequest): Promise<ClaimedTask[]> {
    if (request.funcNames.length === 0) return Promise.resolve([])
    return this.#db().then((db) =>
      pendingQueue.claimTasks(db, 'pending', request, request.funcNames),
    )
  }

  claimOrphans(request: LeaseRequest & { limit: number }): Promise<ClaimedTask[]> {
    return this.#db().then((db) => pendingQueue.claimTasks(db, 'running', request, null))
  }

  async renewLeases(owner: string, leaseUntil: number): Promise<number> {
    return pendingQueue.renewLeases(await this.#db(), owner, leaseUntil)
  }

  async releaseTasks(taskIds: readonly string[], owner: string): Promise<void> {
    await pendingQueue.releaseTasks(await this.#db(), taskIds, owner)
  }

  // ---- idempotency -----------------------------------------------------------------------

  async claimIdempotencyKey(key: string, taskId: string): Promise<string | null> {
    const backend = await this.#open()
    for (let attempt = 0; attempt < 5; attempt++) {
      if (
        await this.#insertIfAbsent(backend, 'idempotency_keys', { idem_key: key, task_id: taskId })
      ) {
        return null
      }
      const holder = await backend.db
        .selectFrom('idempotency_keys')
        .select('task_id')
        .where('idem_key', '=', key)
        .executeTakeFirst()
      // The holder released the key between our insert and our read: try again.
      if (holder !== undefined) return holder.task_id
    }
    throw new TaskValidationError(`The idempotency key "${key}" is contended; try again.`)
  }

  async #insertIfAbsent<T extends 'idempotency_keys' | 'schedule_slots'>(
    backend: SqlBackend,
    table: T,
    values: TaskDatabase[T],
  ): Promise<boolean> {
    const insert = backend.db.insertInto(table).values(values as never)
    const result =
      backend.dialect === 'mysql'
        ? await insert.ignore().executeTakeFirst()
        : await insert.onConflict((oc) => oc.doNothing()).executeTakeFirst()
    return Number(result.numInsertedOrUpdatedRows ?? 0n) > 0
  }

  async releaseIdempotencyKey(key: string, taskId: string): Promise<void> {
    const db = await this.#db()
    await db
      .deleteFrom('idempotency_keys')
      .where('idem_key', '=', key)
      .where('task_id', '=', taskId)
      .execute()
  }

  // ---- periodic schedule slots -----------------------------------------------------------

  async claimScheduleSlot(scheduleName: string, slotTime: number, owner: string): Promise<boolean> {
    if (!Number.isSafeInteger(slotTime)) {
      throw new TaskValidationError('slotTime must be epoch milliseconds (an integer).')
    }
    const backend = await this.#open()
    return this.#insertIfAbsent(backend, 'schedule_slots', {
      schedule_name: scheduleName,
      slot_ms: slotTime,
      claimed_by: owner,
    })
  }

  async pruneScheduleSlots(before: number): Promise<number> {
    const db = await this.#db()
    const result = await db
      .deleteFrom('schedule_slots')
      .where('slot_ms', '<', before)
      .executeTakeFirst()
    return Number(result.numDeletedRows)
  }

  // ---- one-off schedules -------------------------------------------------------------------
  async upsertOneOff(entry: OneOffEntry): Promise<void> {
    return oneOff.upsertOneOff(await this.#open(), entry)
  }

  async cancelOneOff(runKey: string): Promise<boolean> {
    return oneOff.cancelOneOff(await this.#open(), runKey)
  }

  async listOneOff(before?: number): Promise<OneOffEntry[]> {
    return oneOff.listOneOff(await this.#open(), before)
  }

  async countOneOff(): Promise<number> {
    return oneOff.countOneOff(await this.#open())
  }

  async fetchOneOffWindow(until: number, now: number, limit: number): Promise<OneOffEntry[]> {
    return oneOff.fetchOneOffWindow(await this.#open(), until, now, limit)
  }

  async claimOneOff(runKey: string, lease: LeaseRequest): Promise<ClaimedOneOff | null> {
    return oneOff.claimOneOff(await this.#open(), runKey, lease)
  }

  async completeOneOff(runKey: string, claimToken: string): Promise<boolean> {
    return oneOff.completeOneOff(await this.#open(), runKey, claimToken)
  }

  // ---- queue configs, audit, revocations -------------------------------------------------
  async getQueueConfigs(): Promise<StoredQueueConfig[]> {
    return adminData.getQueueConfigs(await this.#open())
  }

  async putQueueConfig(config: StoredQueueConfig): Promise<void> {
    return adminData.putQueueConfig(await this.#open(), config)
  }

  async appendAudit(entry: Omit<TaskAuditEntry, 'id'>): Promise<TaskAuditEntry> {
    return adminData.appendAudit(await this.#open(), entry)
  }

  async listAudit(page: number, perPage: number): Promise<AuditPage> {
    return adminData.listAudit(await this.#open(), page, perPage)
  }

  async revokeSession(tokenId: string, expiresAt: number): Promise<void> {
    return adminData.revokeSession(await this.#open(), tokenId, expiresAt)
  }

  async isSessionRevoked(tokenId: string, now: number): Promise<boolean> {
    return adminData.isSessionRevoked(await this.#open(), tokenId, now)
  }

  async close(): Promise<void> {
    const opening = this.#opening
    if (opening !== null) await opening.catch(() => undefined)
    const backend = this.#backend
    this.#backend = null
    if (backend !== null) await backend.close()
  }
}
