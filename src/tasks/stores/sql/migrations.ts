/**
 * Numbered, additive schema migrations. Each one builds its statements with Kysely's schema
 * builder for the store's dialect; the runner applies the missing ones in order, under a
 * database-wide lock, and records them in `task_migrations`. Never edit a released migration:
 * add the next number.
 */
import type { CompiledQuery, Kysely } from 'kysely'
import { sql } from './kysely.js'
import { CELL_KEYS, sums } from './metric-sums.js'
import type { TaskDatabase } from './schema.js'

/** The SQL dialects of the stores. */
export type SqlDialectName = 'sqlite' | 'postgres' | 'mysql'

/** One schema migration. */
export interface TaskMigration {
  version: number
  name: string
  /** The statements, compiled for `dialect`; index names carry `prefix`. */
  statements(db: Kysely<TaskDatabase>, dialect: SqlDialectName, prefix: string): CompiledQuery[]
}

function types(dialect: SqlDialectName) {
  return {
    key: sql`varchar(255)`,
    ms: sql`bigint`,
    real: dialect === 'mysql' ? sql`double` : sql`double precision`,
    body: dialect === 'mysql' ? sql`longtext` : sql`text`,
  }
}

/**
 * Version 1: records, pending queue columns, idempotency, slots, queues, audit, revocations.
 * The list indexes end in `task_id` so "newest first, then by id" is read straight from the
 * index; lease renewal goes through the status index (pending and running rows are few).
 */
const v1: TaskMigration = {
  version: 1,
  name: 'initial',
  statements(db, dialect, prefix) {
    const t = types(dialect)
    const schema = db.schema
    const audit = schema.createTable('task_audit')
    const auditWithId =
      dialect === 'sqlite'
        ? audit.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
        : dialect === 'postgres'
          ? audit.addColumn('id', 'bigserial', (c) => c.primaryKey())
          : audit.addColumn('id', 'bigint', (c) => c.primaryKey().autoIncrement())
    return [
      schema
        .createTable('tasks')
        .addColumn('task_id', t.key, (c) => c.primaryKey())
        .addColumn('func_name', t.key, (c) => c.notNull())
        .addColumn('status', sql`varchar(16)`, (c) => c.notNull())
        .addColumn('queue', t.key, (c) => c.notNull())
        .addColumn('created_ms', t.ms, (c) => c.notNull())
        .addColumn('finished_ms', t.ms)
        .addColumn('duration', t.real, (c) => c.notNull().defaultTo(0))
        .addColumn('claimed_by', t.key)
        .addColumn('lease_until', t.ms)
        .addColumn('claim_token', sql`varchar(64)`)
        .addColumn('body', t.body, (c) => c.notNull())
        .compile(),
      schema
        .createIndex(`${prefix}tasks_created`)
        .on('tasks')
        .columns(['created_ms', 'task_id'])
        .compile(),
      schema
        .createIndex(`${prefix}tasks_status`)
        .on('tasks')
        .columns(['status', 'created_ms', 'task_id'])
        .compile(),
      schema
        .createIndex(`${prefix}tasks_func`)
        .on('tasks')
        .columns(['func_name', 'created_ms', 'task_id'])
        .compile(),
      schema
        .createIndex(`${prefix}tasks_queue`)
        .on('tasks')
        .columns(['queue', 'created_ms', 'task_id'])
        .compile(),
      schema.createIndex(`${prefix}tasks_finished`).on('tasks').columns(['finished_ms']).compile(),
      schema
        .createTable('idempotency_keys')
        .addColumn('idem_key', t.key, (c) => c.primaryKey())
        .addColumn('task_id', t.key, (c) => c.notNull())
        .compile(),
      schema
        .createTable('schedule_slots')
        .addColumn('schedule_name', t.key, (c) => c.notNull())
        .addColumn('slot_ms', t.ms, (c) => c.notNull())
        .addColumn('claimed_by', t.key, (c) => c.notNull())
        .addPrimaryKeyConstraint(`${prefix}schedule_slots_pk`, ['schedule_name', 'slot_ms'])
        .compile(),
      schema
        .createTable('queue_configs')
        .addColumn('name', t.key, (c) => c.primaryKey())
        .addColumn('concurrency', 'integer')
        .addColumn('max_size', 'integer')
        .compile(),
      auditWithId
        .addColumn('timestamp_ms', t.ms, (c) => c.notNull())
        .addColumn('action', sql`varchar(64)`, (c) => c.notNull())
        .addColumn('task_id', t.key)
        .addColumn('actor', t.key, (c) => c.notNull())
        .addColumn('detail', t.body, (c) => c.notNull())
        .compile(),
      schema
        .createTable('revoked_sessions')
        .addColumn('token_id', t.key, (c) => c.primaryKey())
        .addColumn('expires_ms', t.ms, (c) => c.notNull())
        .compile(),
    ]
  },
}

/** Version 2 (additive: upgrading needs no action): one-off schedules. */
const v2: TaskMigration = {
  version: 2,
  name: 'one-off schedules',
  statements(db, dialect, prefix) {
    const t = types(dialect)
    return [
      db.schema
        .createTable('one_off_schedules')
        .addColumn('run_key', t.key, (c) => c.primaryKey())
        .addColumn('func_name', t.key, (c) => c.notNull())
        .addColumn('run_at_ms', t.ms, (c) => c.notNull())
        .addColumn('created_ms', t.ms, (c) => c.notNull())
        .addColumn('claimed_by', t.key)
        .addColumn('lease_until', t.ms)
        .addColumn('claim_token', sql`varchar(64)`)
        .addColumn('body', t.body, (c) => c.notNull())
        .compile(),
      db.schema
        .createIndex(`${prefix}one_off_run_at`)
        .on('one_off_schedules')
        .columns(['run_at_ms'])
        .compile(),
    ]
  },
}

/**
 * The duration bin of a row in SQL, the same as `durationBin` in metrics-model.ts:
 * 0 below a microsecond, else `1 + floor(ln(µs) / ln(1.01))`.
 */
const binOf = () =>
  sql<number>`case when ${sql.ref('duration')} * 1000000 >= 1 then 1 + floor(ln(${sql.ref('duration')} * 1000000) / ln(1.01) + 0.000000001) else 0 end`
const minuteOfFinished = () => sql<number>`floor(${sql.ref('finished_ms')} / 60000) * 60000`

/**
 * Version 3 (additive): the task admin's data. Progress columns on `tasks` (null until a task
 * reports progress), `task_tags` (one row per tag, by a hash of key and value, for exact tag
 * search), `task_metrics` (per function, minute, status and duration bin: a count and a
 * duration sum; minute -1 holds the all-time totals) filled from the existing terminal records,
 * and `task_changes` (the change feed other instances read).
 */
const v3: TaskMigration = {
  version: 3,
  name: 'task admin: progress, tags, metrics, changes',
  statements(db, dialect, prefix) {
    const t = types(dialect)
    const changes = db.schema.createTable('task_changes')
    const changesWithId =
      dialect === 'sqlite'
        ? changes.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
        : dialect === 'postgres'
          ? changes.addColumn('id', 'bigserial', (c) => c.primaryKey())
          : changes.addColumn('id', 'bigint', (c) => c.primaryKey().autoIncrement())
    const terminal = ['success', 'failed', 'cancelled', 'interrupted', 'rejected']
    const backfill = (minute: ReturnType<typeof minuteOfFinished> | number) =>
      db
        .insertInto('task_metrics')
        .columns(['func_name', 'minute_ms', 'status', 'bin', 'count', 'duration_sum'])
        .expression(
          db
            .selectFrom('tasks')
            .select((eb) => [
              'func_name',
              (typeof minute === 'number' ? sql<number>`${sql.lit(minute)}` : minute).as('m'),
              'status',
              binOf().as('b'),
              eb.fn.countAll<number>().as('n'),
              eb.fn.sum<number>('duration').as('d'),
            ])
            .where('status', 'in', terminal)
            .where('finished_ms', 'is not', null)
            .groupBy(sql`1, 2, 3, 4`),
        )
        .compile()
    return [
      db.schema.alterTable('tasks').addColumn('progress', t.real).compile(),
      db.schema.alterTable('tasks').addColumn('progress_message', t.body).compile(),
      // One B-tree per tag row, ordered for the search (a tag, newest first); deleting by
      // task id scans it, which only retention does.
      db.schema
        .createTable('task_tags')
        .addColumn('tag_hash', sql`char(32)`, (c) => c.notNull())
        .addColumn('created_ms', t.ms, (c) => c.notNull())
        .addColumn('task_id', t.key, (c) => c.notNull())
        .addPrimaryKeyConstraint(`${prefix}task_tags_pk`, ['tag_hash', 'created_ms', 'task_id'])
        .$call((table) => (dialect === 'sqlite' ? table.modifyEnd(sql`without rowid`) : table))
        .compile(),
      db.schema
        .createTable('task_metrics')
        .addColumn('func_name', t.key, (c) => c.notNull())
        .addColumn('minute_ms', t.ms, (c) => c.notNull())
        .addColumn('status', sql`varchar(16)`, (c) => c.notNull())
        .addColumn('bin', 'integer', (c) => c.notNull())
        .addColumn('count', t.ms, (c) => c.notNull())
        .addColumn('duration_sum', t.real, (c) => c.notNull())
        .addPrimaryKeyConstraint(`${prefix}task_metrics_pk`, [
          'func_name',
          'minute_ms',
          'status',
          'bin',
        ])
        .compile(),
      db.schema
        .createIndex(`${prefix}task_metrics_minute`)
        .on('task_metrics')
        .columns(['minute_ms'])
        .compile(),
      backfill(minuteOfFinished()),
      backfill(-1),
      changesWithId
        .addColumn('origin', sql`varchar(64)`, (c) => c.notNull())
        .addColumn('task_ids', t.body, (c) => c.notNull())
        .addColumn('changed_ms', t.ms, (c) => c.notNull())
        .compile(),
    ]
  },
}

/** The two grains of `task_metric_counts`. */
export const MINUTE_GRAIN = 60_000
export const HOUR_GRAIN = 3_600_000

/**
 * The hour of a `task_metrics` row: `minute_ms - minute_ms % 3600000` in every dialect
 * (MySQL's `/` is not integral).
 */
export const hourOfMinute = () =>
  sql<number>`${sql.ref('minute_ms')} - ${sql.ref('minute_ms')} % ${sql.lit(HOUR_GRAIN)}`

/**
 * Version 4 (additive): metric roll-ups, so a dashboard reads a range in O(hours) rows rather
 * than every minute's histogram. `task_metric_counts` holds counts per minute and per hour
 * without duration bins; `task_metric_hours` the hourly duration histogram of the timed
 * statuses. Both are filled from the existing minute cells.
 */
const v4: TaskMigration = {
  version: 4,
  name: 'task metric roll-ups',
  statements(db, dialect, prefix) {
    const t = types(dialect)
    const counts = (grain: number) =>
      db
        .insertInto('task_metric_counts')
        .columns(['grain_ms', 'period_ms', 'func_name', 'status', 'count', 'duration_sum'])
        .expression(
          db
            .selectFrom('task_metrics')
            .select([
              sql<number>`${sql.lit(grain)}`.as('g'),
              (grain === HOUR_GRAIN ? hourOfMinute() : sql<number>`${sql.ref('minute_ms')}`).as(
                'p',
              ),
              'func_name',
              'status',
              ...sums(),
            ])
            .where('minute_ms', '>=', 0)
            .groupBy(sql`1, 2, 3, 4`),
        )
        .compile()
    return [
      db.schema
        .createTable('task_metric_counts')
        .addColumn('grain_ms', t.ms, (c) => c.notNull())
        .addColumn('period_ms', t.ms, (c) => c.notNull())
        .addColumn('func_name', t.key, (c) => c.notNull())
        .addColumn('status', sql`varchar(16)`, (c) => c.notNull())
        .addColumn('count', t.ms, (c) => c.notNull())
        .addColumn('duration_sum', t.real, (c) => c.notNull())
        .addPrimaryKeyConstraint(`${prefix}task_metric_counts_pk`, [
          'grain_ms',
          'period_ms',
          'func_name',
          'status',
        ])
        .compile(),
      db.schema
        .createTable('task_metric_hours')
        .addColumn('hour_ms', t.ms, (c) => c.notNull())
        .addColumn('func_name', t.key, (c) => c.notNull())
        .addColumn('status', sql`varchar(16)`, (c) => c.notNull())
        .addColumn('bin', 'integer', (c) => c.notNull())
        .addColumn('count', t.ms, (c) => c.notNull())
        .addColumn('duration_sum', t.real, (c) => c.notNull())
        .addPrimaryKeyConstraint(`${prefix}task_metric_hours_pk`, [
          'hour_ms',
          'func_name',
          'status',
          'bin',
        ])
        .compile(),
      counts(MINUTE_GRAIN),
      counts(HOUR_GRAIN),
      db
        .insertInto('task_metric_hours')
        .columns(['hour_ms', 'func_name', 'status', 'bin', 'count', 'duration_sum'])
        .expression(
          db
            .selectFrom('task_metrics')
            .select([hourOfMinute().as('h'), ...CELL_KEYS, ...sums()])
            .where('minute_ms', '>=', 0)
            .where('status', 'in', ['success', 'failed'])
            .groupBy(sql`1, 2, 3, 4`),
        )
        .compile(),
    ]
  },
}

/**
 * Version 5 (additive): slot claims record when they were made and whether their task is
 * enqueued, so a claim whose instance died before enqueueing is taken over. Existing rows are
 * confirmed (their tasks were enqueued or are long gone). The index serves the per-schedule
 * look-up of stale unconfirmed claims.
 */
const v5: TaskMigration = {
  version: 5,
  name: 'schedule slot confirmation',
  statements(db, dialect, prefix) {
    const t = types(dialect)
    return [
      db.schema
        .alterTable('schedule_slots')
        .addColumn('claimed_ms', t.ms, (c) => c.notNull().defaultTo(0))
        .compile(),
      db.schema
        .alterTable('schedule_slots')
        .addColumn('confirmed', 'integer', (c) => c.notNull().defaultTo(1))
        .compile(),
      db.schema
        .createIndex(`${prefix}schedule_slots_unconfirmed`)
        .on('schedule_slots')
        .columns(['schedule_name', 'confirmed', 'claimed_ms'])
        .compile(),
    ]
  },
}

/**
 * Version 6 (additive): operator pauses. `queue_configs.paused` (0 or 1; existing rows are not
 * paused) stops every instance from starting the queue's tasks; `schedule_controls` holds one
 * row per schedule an operator paused or resumed (`paused` 0 or 1, `updated_ms` when), and a
 * paused schedule fires no slot on any instance. Schedules without a row run.
 */
const v6: TaskMigration = {
  version: 6,
  name: 'queue and schedule pauses',
  statements(db, dialect) {
    const t = types(dialect)
    return [
      db.schema
        .alterTable('queue_configs')
        .addColumn('paused', 'integer', (c) => c.notNull().defaultTo(0))
        .compile(),
      db.schema
        .createTable('schedule_controls')
        .addColumn('name', t.key, (c) => c.primaryKey())
        .addColumn('paused', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('updated_ms', t.ms, (c) => c.notNull())
        .compile(),
    ]
  },
}

/**
 * Version 7 (additive): the workers registry, one row per task-manager instance holding its
 * last heartbeat. The index serves "recently seen, newest first" and the pruning of old rows.
 */
const v7: TaskMigration = {
  version: 7,
  name: 'workers registry',
  statements(db, dialect, prefix) {
    const t = types(dialect)
    return [
      db.schema
        .createTable('workers')
        .addColumn('id', t.key, (c) => c.primaryKey())
        .addColumn('last_seen_ms', t.ms, (c) => c.notNull())
        .addColumn('body', t.body, (c) => c.notNull())
        .compile(),
      db.schema
        .createIndex(`${prefix}workers_last_seen`)
        .on('workers')
        .columns(['last_seen_ms'])
        .compile(),
    ]
  },
}

/**
 * Version 8 (additive): `task_gates`, the shared gates of grouped and rate-limited queues (how
 * many tasks of a group run, how many starts a window had), one row per gate, locked while a
 * start is decided. The expiry index serves the sweep of spent gates.
 */
const v8: TaskMigration = {
  version: 8,
  name: 'task gates',
  statements(db, dialect, prefix) {
    const t = types(dialect)
    return [
      db.schema
        .createTable('task_gates')
        .addColumn('gate_key', t.key, (c) => c.primaryKey())
        .addColumn('state', t.body, (c) => c.notNull())
        .addColumn('expires_ms', t.ms, (c) => c.notNull())
        .compile(),
      db.schema
        .createIndex(`${prefix}task_gates_expiry`)
        .on('task_gates')
        .columns(['expires_ms'])
        .compile(),
    ]
  },
}

/**
 * Version 9 (additive): `task_flows`, one row per node of a flow (trees of tasks): its flow's
 * root, its parent, and a parent's counters (children not yet succeeded, children failed),
 * changed in the transaction of each child's write. The flow index serves the `flow` filter.
 */
const v9: TaskMigration = {
  version: 9,
  name: 'task flows',
  statements(db, dialect, prefix) {
    const t = types(dialect)
    return [
      db.schema
        .createTable('task_flows')
        .addColumn('task_id', t.key, (c) => c.primaryKey())
        .addColumn('flow_id', t.key, (c) => c.notNull())
        .addColumn('parent_id', t.key)
        .addColumn('waiting', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('failed', 'integer', (c) => c.notNull().defaultTo(0))
        .compile(),
      db.schema
        .createIndex(`${prefix}task_flows_flow`)
        .on('task_flows')
        .columns(['flow_id', 'task_id'])
        .compile(),
    ]
  },
}

/**
 * Version 10 (additive): `queue_configs.gating`, the group and rate limits an operator set on a
 * grouped or rate-limited queue at runtime (JSON `{group_concurrency, rate_limit,
 * group_rate_limit}`); null keeps the options given in code.
 */
const v10: TaskMigration = {
  version: 10,
  name: 'queue gating settings',
  statements(db, dialect) {
    const t = types(dialect)
    return [db.schema.alterTable('queue_configs').addColumn('gating', t.body).compile()]
  },
}

/** The terminal statuses other than success: the records an operator looks for by queue. */
export const FAILURE_STATUSES = [
  'failed',
  'cancelled',
  'interrupted',
  'rejected',
  'expired',
] as const

/**
 * `status in (<failure statuses>)`: the failures and dead letters indexes' condition as schema
 * versions 11 and 12 wrote it, and PostgreSQL's still.
 */
function failureStatusIn() {
  return sql<boolean>`${sql.ref('status')} in (${sql.join(FAILURE_STATUSES.map((status) => sql.lit(status)))})`
}

/**
 * The same condition as one comparison per status joined by OR. SQLite evaluates a partial
 * index's condition for every row written to the table, and it evaluates an IN list of more
 * than two values by building a temporary B-tree of the list each time: two such conditions
 * cost more per pending row than the status index it is written to.
 */
function failureStatusOr() {
  return sql<boolean>`(${sql.join(
    FAILURE_STATUSES.map((status) => sql`${sql.ref('status')} = ${sql.lit(status)}`),
    sql` or `,
  )})`
}

/**
 * The condition of the failures index on `dialect` (and of the list queries that use it:
 * SQLite uses a partial index only for a query that states its condition, in the same form).
 */
export function failureCondition(dialect: SqlDialectName) {
  return dialect === 'sqlite' ? failureStatusOr() : failureStatusIn()
}

/**
 * Version 11 (additive): `tasks.retried_as`, the run that retried a record (also in its body),
 * filled in from the bodies of the failed and interrupted records (the only ones a retry
 * marks). Its index holds only retried records (a partial index; MySQL has none, so there it
 * indexes the column, nulls too): the pending records an enqueue writes never touch it on
 * SQLite and PostgreSQL, and the retried failures of a range are counted from it at once.
 *
 * And, on SQLite and PostgreSQL, the failures index: queue, status and creation time of the
 * records in a {@link FAILURE_STATUSES} status only (a partial index). A status + queue filter
 * ("failed in emails") reads its page and count from it alone instead of checking the queue of
 * every failure in the status index against its row — 3,000 row reads for a capped count, most
 * of a cold page. Enqueues (pending) and successes, the bulk of the writes, never touch it.
 */
const v11: TaskMigration = {
  version: 11,
  name: 'retried records',
  statements(db, dialect, prefix) {
    const t = types(dialect)
    const body = sql.ref('body')
    const fromBody =
      dialect === 'sqlite'
        ? sql<string>`json_extract(${body}, '$.record.retried_as')`
        : dialect === 'postgres'
          ? sql<string>`(${body}::json -> 'record' ->> 'retried_as')`
          : sql<string>`nullif(json_unquote(json_extract(${body}, '$.record.retried_as')), 'null')`
    const index = db.schema.createIndex(`${prefix}tasks_retried`).on('tasks')
    return [
      db.schema.alterTable('tasks').addColumn('retried_as', t.key).compile(),
      db
        .updateTable('tasks')
        .set({ retried_as: fromBody })
        .where('status', 'in', ['failed', 'interrupted'])
        .compile(),
      dialect === 'mysql'
        ? index.columns(['retried_as']).compile()
        : index
            .columns(['status', 'created_ms', 'task_id'])
            .where(sql.ref('retried_as'), 'is not', null)
            .compile(),
      ...(dialect === 'mysql'
        ? []
        : [
            db.schema
              .createIndex(`${prefix}tasks_failures`)
              .on('tasks')
              .columns(['queue', 'status', 'created_ms', 'task_id'])
              .where(failureStatusIn())
              .compile(),
          ]),
    ]
  },
}

/**
 * Version 12 (additive), on SQLite and PostgreSQL: the dead letters index, status and creation
 * time of the records in a {@link FAILURE_STATUSES} status that were not retried (a partial
 * index). Dead Letters lists and counts exactly these ("failed, retried left out"); from the
 * status index it had to read every failure's row for its `retried_as`: 1,000 row reads for a
 * capped count, most of a cold page, and more the more failures were retried. A retry takes its
 * original out of the index. MySQL has no partial indexes: an index on every record for this
 * one filter would cost every enqueue, so it keeps reading the status index there.
 */
const v12: TaskMigration = {
  version: 12,
  name: 'dead letters index',
  statements(db, dialect, prefix) {
    return dialect === 'mysql'
      ? []
      : [
          db.schema
            .createIndex(`${prefix}tasks_dead_letters`)
            .on('tasks')
            .columns(['status', 'created_ms', 'task_id'])
            .where(notRetried(failureStatusIn()))
            .compile(),
        ]
  },
}

/**
 * The condition of the dead letters index: `failure` (one of the two forms above) and not
 * retried. List queries state the failure condition and `retried_as is null` as two terms, so
 * that SQLite may use the index.
 */
function notRetried(failure: ReturnType<typeof failureStatusIn>) {
  return sql<boolean>`${failure} and ${sql.ref('retried_as')} is null`
}

/** The statuses of the records still in the queue: every other status is history. */
export const QUEUED_STATUSES = ['pending', 'running'] as const

/**
 * The records of the history: every status but {@link QUEUED_STATUSES}. The history indexes
 * hold only these (partial indexes), and a query that may use them states this condition in
 * this exact form: SQLite uses a partial index only for a query whose WHERE clause contains
 * the index's condition as written.
 */
export function historyCondition() {
  return sql<boolean>`${sql.ref('status')} not in (${sql.join(QUEUED_STATUSES.map((status) => sql.lit(status)))})`
}

/**
 * Version 13, on SQLite and PostgreSQL: a lean queue. The list indexes on `created_ms`,
 * `func_name` and `queue` hold only the records of the history (a partial index on
 * {@link historyCondition}), and the `finished_ms` index only finished records: an enqueue then
 * writes the row, its primary key and the status index (which serves claims and the lists of
 * pending and running records, and now ends in the function and queue so that their filters
 * read it alone) instead of six B-trees, and a record enters the history indexes with the
 * terminal write that happens anyway. A list without a status filter reads the pending,
 * running and history parts and merges them (docs/task-persistence.md). MySQL has no partial
 * indexes and keeps its full ones.
 */
const v13: TaskMigration = {
  version: 13,
  name: 'lean queue',
  statements(db, dialect, prefix) {
    if (dialect === 'mysql') return []
    const schema = db.schema
    const history = (name: string, columns: string[]) => [
      schema.dropIndex(`${prefix}${name}`).compile(),
      schema
        .createIndex(`${prefix}${name}`)
        .on('tasks')
        .columns(columns)
        .where(historyCondition())
        .compile(),
    ]
    return [
      // The status index now carries the function and queue, so a list of pending or running
      // records filtered on either reads the index alone, not every queued record's row.
      schema.dropIndex(`${prefix}tasks_status`).compile(),
      schema
        .createIndex(`${prefix}tasks_status`)
        .on('tasks')
        .columns(['status', 'created_ms', 'task_id', 'func_name', 'queue'])
        .compile(),
      ...history('tasks_created', ['created_ms', 'task_id']),
      ...history('tasks_func', ['func_name', 'created_ms', 'task_id']),
      ...history('tasks_queue', ['queue', 'created_ms', 'task_id']),
      schema.dropIndex(`${prefix}tasks_finished`).compile(),
      schema
        .createIndex(`${prefix}tasks_finished`)
        .on('tasks')
        .columns(['finished_ms'])
        .where(sql.ref('finished_ms'), 'is not', null)
        .compile(),
    ]
  },
}

/**
 * Version 14, on SQLite: the failures and dead letters indexes state their condition as one
 * comparison per status joined by OR instead of an IN list ({@link failureCondition}). SQLite
 * evaluates every partial index's condition for each row written, and an IN list of five values
 * by building a temporary B-tree each time: the two conditions took about a third of the
 * instructions of a pending row's write (which enters neither index) and a sixth of a finished
 * one's. The indexes hold the same records as before. PostgreSQL evaluates its lists in place and
 * MySQL has neither index, so nothing changes there.
 */
const v14: TaskMigration = {
  version: 14,
  name: 'failure conditions without IN lists',
  statements(db, dialect, prefix) {
    if (dialect !== 'sqlite') return []
    const schema = db.schema
    return [
      schema.dropIndex(`${prefix}tasks_failures`).compile(),
      schema
        .createIndex(`${prefix}tasks_failures`)
        .on('tasks')
        .columns(['queue', 'status', 'created_ms', 'task_id'])
        .where(failureCondition(dialect))
        .compile(),
      schema.dropIndex(`${prefix}tasks_dead_letters`).compile(),
      schema
        .createIndex(`${prefix}tasks_dead_letters`)
        .on('tasks')
        .columns(['status', 'created_ms', 'task_id'])
        .where(notRetried(failureCondition(dialect)))
        .compile(),
    ]
  },
}

/** Every migration, in order. The last one's version is the current schema version. */
export const TASK_MIGRATIONS: readonly TaskMigration[] = [
  v1,
  v2,
  v3,
  v4,
  v5,
  v6,
  v7,
  v8,
  v9,
  v10,
  v11,
  v12,
  v13,
  v14,
]

/** The schema version this code expects. */
export const CURRENT_SCHEMA_VERSION = 14
