/**
 * The metric tables' writes: rows that are counts added to (a negative count subtracts) — the
 * per-minute cells of finished tasks, and their roll-ups per minute and hour with the hourly
 * duration histograms — as upserts in each dialect's form, and SQLite's prepared single-row
 * form of the same.
 */
import type { CompiledQuery, Kysely } from 'kysely'
import type { TaskStatus } from '../../status.js'
import { StoreError } from '../errors.js'
import { TIMED_STATUSES } from '../metrics-model.js'
import { INSERT_CHUNK, type SqlBackend } from './backend.js'
import { sql } from './kysely.js'
import { addSums } from './metric-sums.js'
import { HOUR_GRAIN, MINUTE_GRAIN } from './migrations.js'
import type {
  TaskDatabase,
  TaskMetricCountsTable,
  TaskMetricHoursTable,
  TaskMetricsTable,
} from './schema.js'

type Db = Kysely<TaskDatabase>

/** The tables whose rows are counts added to (a negative count subtracts), with their keys. */
const COUNTED_TABLES = {
  task_metrics: ['func_name', 'minute_ms', 'status', 'bin'],
  task_metric_counts: ['grain_ms', 'period_ms', 'func_name', 'status'],
  task_metric_hours: ['hour_ms', 'func_name', 'status', 'bin'],
} as const

/** One of the counted tables. */
export type CountedTable = keyof typeof COUNTED_TABLES

/** Adds `rows` of `table` to their existing counts and duration sums (upserts). */
export function countIncrements<T extends CountedTable>(
  db: Db,
  dialect: SqlBackend['dialect'],
  table: T,
  rows: readonly TaskDatabase[T][],
): CompiledQuery[] {
  // The three tables share `count` and `duration_sum`; Kysely's types cannot follow a table
  // chosen by a type parameter, so the builder is typed as one of them.
  const counted = db as unknown as Kysely<Record<string, TaskMetricsTable>>
  const name: string = table
  const add = (column: 'count' | 'duration_sum') =>
    dialect === 'mysql'
      ? sql<number>`${sql.ref(column)} + values(${sql.ref(column)})`
      : sql<number>`${sql.ref(`${table}.${column}`)} + ${sql.ref(`excluded.${column}`)}`
  const queries: CompiledQuery[] = []
  for (let i = 0; i < rows.length; i += INSERT_CHUNK) {
    const insert = counted
      .insertInto(name)
      .values(rows.slice(i, i + INSERT_CHUNK) as unknown as TaskMetricsTable[])
    const update = { count: add('count'), duration_sum: add('duration_sum') }
    const query =
      dialect === 'mysql'
        ? insert.onDuplicateKeyUpdate(update)
        : insert.onConflict((oc) =>
            oc
              .columns([...COUNTED_TABLES[table]] as (keyof TaskMetricsTable)[])
              .doUpdateSet(update),
          )
    queries.push(query.compile())
  }
  return queries
}

/** Adds metric rows to their existing counts (a negative count subtracts). */
export function metricIncrements(
  db: Db,
  dialect: SqlBackend['dialect'],
  cells: readonly TaskMetricsTable[],
): CompiledQuery[] {
  return countIncrements(db, dialect, 'task_metrics', cells)
}

/** The roll-up rows of some minute cells: counts per minute and hour, hourly histograms. */
export interface RollupRows {
  counts: TaskMetricCountsTable[]
  hours: TaskMetricHoursTable[]
}

/**
 * The roll-up rows of minute cells (`minute_ms` ≥ 0; the totals are skipped): counts per minute
 * (`withMinutes`) and per hour without bins, and the hourly histogram of the timed statuses.
 */
export function rollupRows(cells: readonly TaskMetricsTable[], withMinutes: boolean): RollupRows {
  const counts = new Map<string, TaskMetricCountsTable>()
  const hours = new Map<string, TaskMetricHoursTable>()
  const addCount = (grain: number, period: number, cell: TaskMetricsTable) => {
    const key = `${String(grain)}\n${String(period)}\n${cell.func_name}\n${cell.status}`
    addSums(counts, key, cell, () => ({
      grain_ms: grain,
      period_ms: period,
      func_name: cell.func_name,
      status: cell.status,
      count: cell.count,
      duration_sum: cell.duration_sum,
    }))
  }
  for (const cell of cells) {
    if (cell.minute_ms < 0) continue
    const hour = cell.minute_ms - (cell.minute_ms % HOUR_GRAIN)
    if (withMinutes) addCount(MINUTE_GRAIN, cell.minute_ms, cell)
    addCount(HOUR_GRAIN, hour, cell)
    if (!TIMED_STATUSES.has(cell.status as TaskStatus)) continue
    const key = `${String(hour)}\n${cell.func_name}\n${cell.status}\n${String(cell.bin)}`
    addSums(hours, key, cell, () => ({
      hour_ms: hour,
      func_name: cell.func_name,
      status: cell.status,
      bin: cell.bin,
      count: cell.count,
      duration_sum: cell.duration_sum,
    }))
  }
  return { counts: [...counts.values()], hours: [...hours.values()] }
}

/** The upserts of {@link rollupRows} (the servers' path, and retention's). */
export function rollupIncrements(
  db: Db,
  dialect: SqlBackend['dialect'],
  cells: readonly TaskMetricsTable[],
  withMinutes = true,
): CompiledQuery[] {
  const { counts, hours } = rollupRows(cells, withMinutes)
  return [
    ...countIncrements(db, dialect, 'task_metric_counts', counts),
    ...countIncrements(db, dialect, 'task_metric_hours', hours),
  ]
}

/**
 * The columns of each counted table in the order of its prepared single-row upsert's
 * parameters (SQLite's write path).
 */
const COUNTED_COLUMNS = {
  task_metrics: ['func_name', 'minute_ms', 'status', 'bin', 'count', 'duration_sum'],
  task_metric_counts: ['grain_ms', 'period_ms', 'func_name', 'status', 'count', 'duration_sum'],
  task_metric_hours: ['hour_ms', 'func_name', 'status', 'bin', 'count', 'duration_sum'],
} as const satisfies Record<CountedTable, readonly string[]>

/** The SQLite single-row add-to-count upsert of `table`, parameters in {@link COUNTED_COLUMNS}. */
export function compileCountUpsert(db: Db, table: CountedTable): string {
  const columns = COUNTED_COLUMNS[table]
  const template = Object.fromEntries(columns.map((column, index) => [column, index])) as never
  const [compiled] = countIncrements(db, 'sqlite', table, [template])
  if (compiled?.parameters.join() !== columns.map((_, index) => index).join()) {
    throw new StoreError('Unexpected shape of the compiled metric upsert.')
  }
  return compiled.sql
}

/** The parameter lists of `rows` for {@link compileCountUpsert}. */
export function countParams<T extends CountedTable>(
  table: T,
  rows: readonly TaskDatabase[T][],
): unknown[][] {
  const columns = COUNTED_COLUMNS[table] as readonly (keyof TaskDatabase[T])[]
  return rows.map((row) => columns.map((column) => row[column]))
}
