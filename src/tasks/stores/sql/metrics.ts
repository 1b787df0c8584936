/**
 * Task metrics on SQL (the {@link TaskMetricsStore} port): `task_metrics` rows are written by
 * the record writer (records.ts); this module reads them, with the live counts from `tasks`.
 */
import type { TaskStatus } from '../../status.js'
import { minuteOf, TOTAL_MINUTE } from '../metrics-model.js'
import type { LiveCount, MetricCell, TaskMetricsStore } from '../ports.js'
import { toNumber } from '../rows.js'
import type { OpenBackend } from './records.js'

/** Task metrics on SQL. */
export function sqlMetrics(open: OpenBackend): TaskMetricsStore {
  return {
    async read({ since }) {
      const { db } = await open()
      const live = db
        .selectFrom('tasks')
        .select((eb) => ['func_name', 'status', eb.fn.countAll().as('n')])
        .where('status', 'in', ['pending', 'running'])
        .groupBy(['func_name', 'status'])
        .execute()
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
              .select((eb) => [
                'func_name',
                'status',
                'bin',
                eb.fn.sum<number>('count').as('n'),
                eb.fn.sum<number>('duration_sum').as('d'),
              ])
              .where('minute_ms', '>=', minuteOf(since))
              .groupBy(['func_name', 'status', 'bin'])
              .execute()
      const [liveRows, cellRows] = await Promise.all([live, cells])
      return {
        live: liveRows.map((row): LiveCount => ({
          func_name: row.func_name,
          status: row.status as LiveCount['status'],
          count: toNumber(row.n),
        })),
        cells: cellRows.map((row): MetricCell => ({
          func_name: row.func_name,
          status: row.status as TaskStatus,
          bin: toNumber(row.bin),
          count: toNumber(row.n),
          duration_sum: toNumber(row.d),
        })),
      }
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
