/**
 * Task metrics on SQL (the {@link TaskMetricsStore} port): `task_metrics` rows and their
 * roll-ups (`task_metric_counts`, `task_metric_hours`) are written by the record writer
 * (records.ts); this module reads them, with the live counts from `tasks`.
 */
import type { Kysely } from 'kysely'
import type { TaskStatus } from '../../status.js'
import { minuteOf, TOTAL_MINUTE } from '../metrics-model.js'
import type { LiveCount, MetricBucket, MetricsOverview, TaskMetricsStore } from '../ports.js'
import { toNumber } from '../rows.js'
import { cellOf, CELL_KEYS, countOf, sums } from './metric-sums.js'
import { HOUR_GRAIN, MINUTE_GRAIN } from './migrations.js'
import type { OpenBackend } from './records.js'
import type { TaskDatabase } from './schema.js'

/** The pending and running counts per function (few rows: read through the status index). */
async function liveCounts(db: Kysely<TaskDatabase>): Promise<LiveCount[]> {
  const rows = await db
    .selectFrom('tasks')
    .select((eb) => ['func_name', 'status', eb.fn.countAll().as('n')])
    .where('status', 'in', ['pending', 'running'])
    .groupBy(['func_name', 'status'])
    .execute()
  return rows.map((row) => ({
    func_name: row.func_name,
    status: row.status as LiveCount['status'],
    count: toNumber(row.n),
  }))
}

/**
 * A range's figures from the roll-ups: counts from the minutes of the range's first (partial)
 * hour plus the hours after it, the histogram of the hours from the one holding `since`, and
 * the chart's buckets (from minute counts when a bucket is shorter than an hour).
 */
async function overview(
  db: Kysely<TaskDatabase>,
  since: number,
  step: number,
): Promise<MetricsOverview> {
  const first = minuteOf(since)
  const firstHour = first - (first % HOUR_GRAIN)
  const fullHours = firstHour === first ? first : firstHour + HOUR_GRAIN
  const inRange = db
    .selectFrom('task_metric_counts')
    .where((eb) =>
      eb.or([
        eb.and([
          eb('grain_ms', '=', MINUTE_GRAIN),
          eb('period_ms', '>=', first),
          eb('period_ms', '<', fullHours),
        ]),
        eb.and([eb('grain_ms', '=', HOUR_GRAIN), eb('period_ms', '>=', fullHours)]),
      ]),
    )
  const counts = inRange
    .select(['func_name', 'status', ...sums()])
    .groupBy(['func_name', 'status'])
    .execute()
  // Buckets of an hour or more add whole hours; shorter ones need the minutes of the range.
  const finished = ['success', 'failed']
  const periods = (
    step % HOUR_GRAIN === 0
      ? inRange
      : db
          .selectFrom('task_metric_counts')
          .where('grain_ms', '=', MINUTE_GRAIN)
          .where('period_ms', '>=', first)
  )
    .select((eb) => ['period_ms', 'status', eb.fn.sum<number>('count').as('n')])
    .where('status', 'in', finished)
    .groupBy(['period_ms', 'status'])
    .execute()
  const histogram = db
    .selectFrom('task_metric_hours')
    .select([...CELL_KEYS, ...sums()])
    .where('hour_ms', '>=', firstHour)
    .groupBy([...CELL_KEYS])
    .execute()
  const [live, countRows, periodRows, histogramRows] = await Promise.all([
    liveCounts(db),
    counts,
    periods,
    histogram,
  ])
  const buckets = new Map<number, MetricBucket>()
  for (const row of periodRows) {
    const period = toNumber(row.period_ms)
    const start = period - (period % step)
    let bucket = buckets.get(start)
    if (bucket === undefined) {
      bucket = { start, success: 0, failed: 0 }
      buckets.set(start, bucket)
    }
    bucket[row.status as 'success' | 'failed'] += toNumber(row.n)
  }
  return {
    live,
    counts: countRows.map(countOf).filter((row) => row.count > 0),
    histogram: histogramRows.map(cellOf).filter((row) => row.count > 0),
    buckets: [...buckets.values()].sort((x, y) => x.start - y.start),
  }
}

/** Task metrics on SQL. */
export function sqlMetrics(open: OpenBackend): TaskMetricsStore {
  return {
    async read({ since }) {
      const { db } = await open()
      const live = liveCounts(db)
      const cells =
        since === undefined
          ? db
              .selectFrom('task_metrics')
              .select(['func_name', 'status', 'bin', 'count as n', 'duration_sum as d'])
              .where('minute_ms', '=', TOTAL_MINUTE)
              .where('count', '>', 0)
              .execute()
          : db
              .selectFrom('task_metrics')
              .select([...CELL_KEYS, ...sums()])
              .where('minute_ms', '>=', minuteOf(since))
              .groupBy([...CELL_KEYS])
              .execute()
      const [liveRows, cellRows] = await Promise.all([live, cells])
      return {
        live: liveRows,
        cells: cellRows.map(cellOf),
      }
    },
    async overview({ since, step }) {
      const { db } = await open()
      return overview(db, since, step)
    },
    async series(since) {
      const { db } = await open()
      const rows = await db
        .selectFrom('task_metrics')
        .select(['minute_ms', 'func_name', 'status', 'bin', 'count', 'duration_sum'])
        .where('minute_ms', '>=', minuteOf(since))
        .orderBy('minute_ms')
        .execute()
      return rows.map((row) => ({
        minute: toNumber(row.minute_ms),
        func_name: row.func_name,
        status: row.status as TaskStatus,
        bin: toNumber(row.bin),
        count: toNumber(row.count),
        duration_sum: toNumber(row.duration_sum),
      }))
    },
  }
}
