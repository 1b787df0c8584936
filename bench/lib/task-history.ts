/**
 * Synthetic task history for the store and admin benchmarks: records as the manager writes
 * them, and a fast raw fill of a SQLite store file (records, and the metric cells the store
 * would have written with them).
 */
import Database from 'better-sqlite3'
import type { StoredTask } from '../../src/tasks/record.js'
import { newTaskId } from '../../src/tasks/task-id.js'
import { durationBin, minuteOf, TOTAL_MINUTE } from '../../src/tasks/stores/metrics-model.js'

/** Creation time of record 0; record i is created i × 10 ms later. */
export const T0 = Date.parse('2026-11-21T00:00:00Z')
export const FUNCS = ['send_email', 'resize_image', 'sync_account', 'charge_card', 'rebuild_index']
export const QUEUES = ['default', 'emails', 'media']
export const STATUSES = ['success', 'success', 'success', 'failed', 'cancelled'] as const

/** A duration spread over 5 ms … 5 s (log-uniform, deterministic in `i`). */
export function durationOf(i: number): number {
  const unit = ((i * 2654435761) % 1000) / 1000
  return Math.round(0.005 * 1000 ** unit * 1e6) / 1e6
}

/** Record `i` in `status` (pending records have no times). */
export function benchTask(
  i: number,
  status: StoredTask['record']['status'] = 'pending',
): StoredTask {
  const created = new Date(T0 + i * 10).toISOString().replace('Z', '+00:00')
  const done = status !== 'pending'
  return {
    record: {
      // As the manager makes them: a time-ordered id of the creation time.
      task_id: newTaskId(T0 + i * 10),
      func_name: FUNCS[i % FUNCS.length]!,
      status,
      created_at: created,
      start_time: done ? created : null,
      end_time: done ? created : null,
      duration: done ? durationOf(i) : 0,
      retries_used: 0,
      error: status === 'failed' ? 'Error: upstream timed out' : null,
      logs: done ? [`${created} [info] started`] : [],
      stacktrace: null,
      tags: { tenant: `t${i % 17}` },
      source: 'manual',
      priority: null,
      executor: 'async',
      queue: QUEUES[i % QUEUES.length]!,
      progress: null,
      progress_message: null,
      expires_at: null,
      retry_of: null,
      retried_as: null,
    },
    args: [`user-${i}@example.com`, { template: 'welcome', locale: 'en' }],
    encrypted_args: null,
    idempotency_key: null,
  }
}

/**
 * Fills the store file at `path` (already migrated) with `count` finished records and their
 * metric cells and roll-ups, by raw batched inserts in the store's schema; returns the seconds it took.
 */
export function fillSqliteHistory(path: string, count: number): number {
  const started = performance.now()
  const raw = new Database(path)
  raw.pragma('journal_mode = WAL')
  raw.pragma('synchronous = OFF')
  const insert = raw.prepare(
    'insert into switchyard_tasks (task_id, func_name, status, queue, created_ms, finished_ms, duration, body) values (?, ?, ?, ?, ?, ?, ?, ?)',
  )
  const cells = new Map<string, [string, number, string, number, number, number]>()
  const count1 = (func: string, minute: number, status: string, bin: number, duration: number) => {
    const key = `${func}\n${String(minute)}\n${status}\n${String(bin)}`
    const cell = cells.get(key)
    if (cell === undefined) cells.set(key, [func, minute, status, bin, 1, duration])
    else {
      cell[4]++
      cell[5] += duration
    }
  }
  const fill = raw.transaction((from: number, to: number) => {
    for (let i = from; i < to; i++) {
      const t = benchTask(i, STATUSES[i % STATUSES.length])
      const r = t.record
      const created = T0 + i * 10
      insert.run(
        r.task_id,
        r.func_name,
        r.status,
        r.queue,
        created,
        created,
        r.duration,
        JSON.stringify(t),
      )
      const bin = durationBin(r.duration)
      count1(r.func_name, minuteOf(created), r.status, bin, r.duration)
      count1(r.func_name, TOTAL_MINUTE, r.status, bin, r.duration)
    }
  })
  for (let i = 0; i < count; i += 100_000) fill(i, Math.min(count, i + 100_000))
  const metric = raw.prepare(
    'insert into switchyard_task_metrics (func_name, minute_ms, status, bin, count, duration_sum) values (?, ?, ?, ?, ?, ?)',
  )
  raw.transaction(() => {
    for (const cell of cells.values()) metric.run(...cell)
    // The roll-ups the store keeps next to the minute cells (per minute and hour, no bins; the
    // hourly histogram of success and failed), summed from them as the store's migration does.
    const hour = 'minute_ms - minute_ms % 3600000'
    for (const [grain, period] of [
      [60_000, 'minute_ms'],
      [3_600_000, hour],
    ] as const) {
      raw.exec(
        `insert into switchyard_task_metric_counts (grain_ms, period_ms, func_name, status, count, duration_sum) select ${String(grain)}, ${period}, func_name, status, sum(count), sum(duration_sum) from switchyard_task_metrics where minute_ms >= 0 group by 1, 2, 3, 4`,
      )
    }
    raw.exec(
      `insert into switchyard_task_metric_hours (hour_ms, func_name, status, bin, count, duration_sum) select ${hour}, func_name, status, bin, sum(count), sum(duration_sum) from switchyard_task_metrics where minute_ms >= 0 and status in ('success', 'failed') group by 1, 2, 3, 4`,
    )
  })()
  raw.exec('analyze')
  raw.close()
  return (performance.now() - started) / 1000
}
