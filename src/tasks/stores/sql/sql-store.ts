/**
 * The SQL task store: the durable task-store ports for SQLite, PostgreSQL and MySQL/MariaDB
 * through Kysely. Dialect differences are confined to upserts and insert-if-absent
 * (`ON CONFLICT` vs `ON DUPLICATE KEY` / `INSERT IGNORE`).
 *
 * Each port lives in a module of its own (records, pending queue, claims, one-offs, admin
 * data); this class ties them to one connection and its migrations.
 */
import { randomUUID } from 'node:crypto'
import type {
  DurableTaskStore,
  IdempotencyStore,
  OneOffScheduleStore,
  PendingQueueStore,
  ScheduleSlotStore,
  SessionRevocationStore,
  TaskAdminStore,
  TaskChangeFeed,
  TaskFlowStore,
  TaskGateStore,
  TaskMetricsStore,
  TaskWorkerStore,
} from '../ports.js'
import { openSqlBackend, type SqlBackend, type SqlConnectionSpec } from './backend.js'
import { sqlAdminData, sqlSessions } from './admin-data.js'
import { sqlChanges } from './changes.js'
import { sqlGates } from './gates.js'
import { sqlIdempotency, sqlScheduleSlots } from './claims.js'
import { CURRENT_SCHEMA_VERSION } from './migrations.js'
import { sqlMetrics } from './metrics.js'
import { sqlOneOffs } from './one-off.js'
import { sqlPendingQueue } from './pending-queue.js'
import { SqlTaskRecords } from './records.js'
import { sqlFlows } from './flows.js'
import { sqlWorkers } from './workers.js'
import { OpenOnce } from '../open-once.js'

/** Options shared by the SQL store factories. */
export interface SqlStoreOptions {
  /** Prefix of every table name (letters, digits, `_`); default `switchyard_`. */
  tablePrefix?: string
  /** Migrate only up to this schema version (for upgrade tests); default: the current one. */
  schemaVersion?: number
  /**
   * How long (ms) the total of a list query may be reused for the same filters; default 5000
   * (the cached backend read), 0 to count every time. Items are always read fresh: only
   * `total` may lag by up to this long. Counting a million rows costs tens of ms.
   */
  totalCacheMs?: number
  /** Current time for migration records; default `Date.now`. */
  now?: () => number
}

/** The durable task store over SQLite, PostgreSQL or MySQL/MariaDB. */
export class SqlTaskStore implements DurableTaskStore {
  readonly kind: string
  readonly records: SqlTaskRecords
  readonly pending: PendingQueueStore
  readonly idempotency: IdempotencyStore
  readonly slots: ScheduleSlotStore
  readonly oneOffs: OneOffScheduleStore
  readonly admin: TaskAdminStore
  readonly sessions: SessionRevocationStore
  readonly metrics: TaskMetricsStore
  readonly changes: TaskChangeFeed
  readonly workers: TaskWorkerStore
  readonly gates: TaskGateStore
  readonly flows: TaskFlowStore
  readonly #connection = new OpenOnce(async () => {
    const backend = await openSqlBackend(this.spec, this.#prefix)
    try {
      const now = (this.options.now ?? Date.now)()
      await backend.migrate(this.options.schemaVersion ?? CURRENT_SCHEMA_VERSION, now)
    } catch (error) {
      await backend.close().catch(() => undefined)
      throw error
    }
    return backend
  })
  readonly #prefix: string

  constructor(
    private readonly spec: SqlConnectionSpec,
    private readonly options: SqlStoreOptions = {},
  ) {
    this.kind = spec.dialect
    this.#prefix = options.tablePrefix ?? 'switchyard_'
    const open = () => this.#open()
    const origin = randomUUID()
    this.records = new SqlTaskRecords(open, options.totalCacheMs ?? 5000, origin)
    this.flows = sqlFlows(open, this.records)
    this.pending = sqlPendingQueue(open, this.records, this.flows)
    this.idempotency = sqlIdempotency(open)
    this.slots = sqlScheduleSlots(open)
    this.oneOffs = sqlOneOffs(open)
    this.admin = sqlAdminData(open)
    this.sessions = sqlSessions(open)
    this.metrics = sqlMetrics(open)
    this.changes = sqlChanges(open, origin)
    this.workers = sqlWorkers(open)
    this.gates = sqlGates(open)
  }

  async init(): Promise<void> {
    await this.#open()
  }

  #open(): Promise<SqlBackend> {
    return this.#connection.get()
  }

  async close(): Promise<void> {
    const backend = await this.#connection.release()
    if (backend !== null) await backend.close()
  }
}
