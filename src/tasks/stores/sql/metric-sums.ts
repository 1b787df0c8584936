/**
 * The roll-up every metric query makes: the `count` and `duration_sum` columns of a metric
 * table added up per group (`n`, `d`), and a summed row read back as a {@link MetricCell}.
 * The same sums serve the reads (metrics.ts), the pruning (records.ts) and the back-fill of
 * the roll-up tables (migrations.ts), so they cannot drift apart.
 */
import type { TaskStatus } from '../../status.js'
import type { MetricCell, MetricCount } from '../ports.js'
import { toNumber } from '../rows.js'
import { sql } from './kysely.js'

/** Both sums, built once Kysely is loaded (see `./kysely.ts`). */
let built: ReturnType<typeof buildSums> | undefined
const buildSums = () =>
  [
    sql<number>`sum(${sql.ref('count')})`.as('n'),
    sql<number>`sum(${sql.ref('duration_sum')})`.as('d'),
  ] as const

/**
 * `sum(count) as n, sum(duration_sum) as d`, for a select on any of the metric tables
 * (`task_metrics`, `task_metric_counts`, `task_metric_hours`: all three have both columns).
 */
export function sums(): ReturnType<typeof buildSums> {
  return (built ??= buildSums())
}

/** The columns that name one histogram cell: select them with {@link sums} and group by them. */
export const CELL_KEYS = ['func_name', 'status', 'bin'] as const

/** A row of {@link sums} per function and status. */
export interface SummedRow {
  func_name: string
  status: string
  n: unknown
  d: unknown
}

/** The sums of a row as numbers (drivers may return them as strings or bigints). */
function totals(row: SummedRow): Pick<MetricCell, 'count' | 'duration_sum'> {
  return { count: toNumber(row.n), duration_sum: toNumber(row.d) }
}

/** A summed row per function and status as a count. */
export function countOf(row: SummedRow): MetricCount {
  return { func_name: row.func_name, status: row.status as TaskStatus, ...totals(row) }
}

/** A summed row of a duration bin as a histogram cell. */
export function cellOf(row: SummedRow & { bin: unknown }): MetricCell {
  const { func_name, status } = row
  return { func_name, status: status as TaskStatus, bin: toNumber(row.bin), ...totals(row) }
}

/**
 * Adds `cell`'s count and duration sum to the row `key` of an in-memory roll-up, the row made
 * by `make` (holding the cell's own figures) when it is the first of its group.
 */
export function addSums<R extends { count: number; duration_sum: number }>(
  rows: Map<string, R>,
  key: string,
  cell: { count: number; duration_sum: number },
  make: () => R,
): void {
  const row = rows.get(key)
  if (row === undefined) {
    rows.set(key, make())
    return
  }
  row.count += cell.count
  row.duration_sum += cell.duration_sum
}
