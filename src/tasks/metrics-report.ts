/**
 * The task metrics report (`manager.metrics()`, `GET {tasks}/metrics`): totals by status,
 * success rate, average and P95 durations overall and per function, and an optional
 * per-minute series, computed from the store's metric cells (see stores/metrics-model.ts).
 *
 * Durations (average, P95) are those of tasks that ran to an outcome (success or failed);
 * the success rate is success / (success + failed), 0 while there is neither.
 */
import { quantile, TIMED_STATUSES } from './stores/metrics-model.js'
import type {
  LiveCount,
  MetricCell,
  MetricCount,
  MetricsOverview,
  MinuteCell,
} from './stores/ports.js'
import { TASK_STATUSES, type TaskStatus } from './status.js'
import { toIso } from './time.js'

/** The figures of one function. */
export interface FunctionMetrics {
  total: number
  success: number
  failed: number
  avg_duration_seconds: number | null
  p95_duration_seconds: number | null
}

/** One minute of the series. */
export interface MetricsMinute {
  /** ISO start of the minute. */
  minute: string
  success: number
  failed: number
  /** P95 duration (seconds) of the minute's finished tasks, or null. */
  p95: number | null
}

/** The metrics report. */
export interface TaskMetrics {
  total: number
  by_status: Record<TaskStatus, number>
  /** 0..1 */
  success_rate: number
  avg_duration_seconds: number | null
  p95_duration_seconds: number | null
  by_function: Record<string, FunctionMetrics>
  /** Per minute, oldest first; only when asked for with `since`. */
  series?: MetricsMinute[]
}

const round = (value: number): number => Math.round(value * 1e6) / 1e6

/** Builds the report from the live counts and the terminal cells (and minute cells, if any). */
export function metricsReport(
  live: readonly LiveCount[],
  cells: readonly MetricCell[],
  minutes?: readonly MinuteCell[],
): TaskMetrics {
  const report = figures(live, cells, cells)
  if (minutes !== undefined) report.series = series(minutes)
  return report
}

/**
 * Builds the report of a range from a store's roll-ups: counts and averages exact, P95 from the
 * histogram of the whole hours holding the range, and the series per chart bucket (`minute` is
 * the bucket's start; no per-bucket P95).
 */
export function overviewReport(
  live: readonly LiveCount[],
  overview: Omit<MetricsOverview, 'live'>,
): TaskMetrics {
  const report = figures(live, overview.counts, overview.histogram)
  report.series = overview.buckets.map((bucket) => ({
    minute: toIso(bucket.start),
    success: bucket.success,
    failed: bucket.failed,
    p95: null,
  }))
  return report
}

/** Counts and averages from `cells`, percentiles from `histogram`. */
function figures(
  live: readonly LiveCount[],
  cells: readonly MetricCount[],
  histogram: readonly MetricCell[],
): TaskMetrics {
  const byStatus = Object.fromEntries(TASK_STATUSES.map((status) => [status, 0])) as Record<
    TaskStatus,
    number
  >
  const functions = new Map<string, { total: number; success: number; failed: number }>()
  const timed = new Map<string, MetricCell[]>()
  const fn = (name: string) => {
    let entry = functions.get(name)
    if (entry === undefined) {
      entry = { total: 0, success: 0, failed: 0 }
      functions.set(name, entry)
    }
    return entry
  }
  for (const group of [...live, ...cells]) {
    byStatus[group.status] += group.count
    const entry = fn(group.func_name)
    entry.total += group.count
    if (group.status === 'success') entry.success += group.count
    if (group.status === 'failed') entry.failed += group.count
  }
  const timedCounts = new Map<string, MetricCount[]>()
  for (const cell of cells) {
    if (!TIMED_STATUSES.has(cell.status)) continue
    const list = timedCounts.get(cell.func_name) ?? []
    list.push(cell)
    timedCounts.set(cell.func_name, list)
  }
  for (const cell of histogram) {
    if (!TIMED_STATUSES.has(cell.status)) continue
    const list = timed.get(cell.func_name) ?? []
    list.push(cell)
    timed.set(cell.func_name, list)
  }
  const allTimed = [...timed.values()].flat()
  const finished = byStatus.success + byStatus.failed
  const report: TaskMetrics = {
    total: Object.values(byStatus).reduce((sum, n) => sum + n, 0),
    by_status: byStatus,
    success_rate: finished === 0 ? 0 : round(byStatus.success / finished),
    avg_duration_seconds: average([...timedCounts.values()].flat()),
    p95_duration_seconds: percentile95(allTimed),
    by_function: Object.fromEntries(
      [...functions.entries()]
        .sort(([x], [y]) => x.localeCompare(y))
        .map(([name, entry]) => {
          return [
            name,
            {
              ...entry,
              avg_duration_seconds: average(timedCounts.get(name) ?? []),
              p95_duration_seconds: percentile95(timed.get(name) ?? []),
            },
          ]
        }),
    ),
  }
  return report
}

function average(cells: readonly MetricCount[]): number | null {
  let count = 0
  let sum = 0
  for (const cell of cells) {
    count += cell.count
    sum += cell.duration_sum
  }
  return count === 0 ? null : round(sum / count)
}

function percentile95(cells: readonly MetricCell[]): number | null {
  const value = quantile(cells, 0.95)
  return value === null ? null : round(value)
}

function series(cells: readonly MinuteCell[]): MetricsMinute[] {
  const minutes = new Map<number, MinuteCell[]>()
  for (const cell of cells) {
    const list = minutes.get(cell.minute) ?? []
    list.push(cell)
    minutes.set(cell.minute, list)
  }
  return [...minutes.entries()]
    .sort(([x], [y]) => x - y)
    .map(([minute, list]) => {
      const count = (status: TaskStatus) =>
        list.filter((cell) => cell.status === status).reduce((sum, cell) => sum + cell.count, 0)
      return {
        minute: toIso(minute),
        success: count('success'),
        failed: count('failed'),
        p95: percentile95(list.filter((cell) => TIMED_STATUSES.has(cell.status))),
      }
    })
}
