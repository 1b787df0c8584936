/**
 * The task half of the Prometheus metrics: tasks taken in and finished (counted from the manager's
 * record notifications, shared with OpenTelemetry in tasks/telemetry/outcomes.ts, so running a
 * task does no metrics work of its own), their durations, the waiting and running gauges read
 * from the task store at scrape time (any instance reports the depth of the queues every instance
 * shares), and how late each periodic schedule's last slot was enqueued.
 */
import type { Metric, Registry } from 'prom-client'
import type { TaskManager } from '../tasks/manager.js'
import type { PromClientModule } from './loader.js'
import {
  DURATION_BUCKETS,
  followTaskOutcomes,
  LiveQueueCounts,
} from '../tasks/telemetry/outcomes.js'
import { TaskOutcomeTable } from './task-outcome-table.js'

export { LIVE_COUNTS_TTL_MS, UNKNOWN_QUEUE } from '../tasks/telemetry/outcomes.js'
export { OVERFLOW_LABEL } from './task-outcome-table.js'

const DURATION_NAME = 'switchyard_task_duration_seconds'

/** The task metrics of one manager, registered on `registry`; `close()` unsubscribes. */
export class TaskCollectors {
  readonly #unsubscribe: () => void

  constructor(
    client: PromClientModule,
    registry: Registry,
    manager: TaskManager,
    now: () => number = Date.now,
  ) {
    const table = new TaskOutcomeTable(DURATION_BUCKETS)
    new client.Counter({
      name: 'switchyard_tasks_enqueued_total',
      help: 'Tasks this instance took in (enqueued here, or claimed from the shared store).',
      labelNames: ['function', 'queue'] as const,
      registers: [registry],
      collect() {
        this.reset()
        for (const pair of table.pairs())
          if (pair.enqueued > 0) this.inc(pair.labels, pair.enqueued)
      },
    })
    new client.Counter({
      name: 'switchyard_tasks_finished_total',
      help: 'Tasks that reached a final status on this instance.',
      labelNames: ['function', 'queue', 'status'] as const,
      registers: [registry],
      collect() {
        this.reset()
        for (const pair of table.pairs())
          for (const [status, outcome] of pair.statuses)
            this.inc({ ...pair.labels, status }, outcome.count)
      },
    })
    registry.registerMetric(durationHistogram(table))
    this.#unsubscribe = followTaskOutcomes(manager, {
      enqueued: (record) => table.enqueued(record.func_name, record.queue),
      finished: (record) =>
        table.finished(
          record.func_name,
          record.queue,
          record.status,
          record.start_time === null ? null : record.duration,
        ),
    })
    const live = new LiveQueueCounts(manager, now)
    new client.Gauge({
      name: 'switchyard_tasks_waiting',
      help: 'Tasks waiting to run, every instance sharing the store (by the queue of their function).',
      labelNames: ['queue'] as const,
      registers: [registry],
      async collect() {
        this.reset()
        for (const [queue, count] of await live.byQueue('pending')) this.set({ queue }, count)
      },
    })
    new client.Gauge({
      name: 'switchyard_tasks_running',
      help: 'Tasks running, every instance sharing the store (by the queue of their function).',
      labelNames: ['queue'] as const,
      registers: [registry],
      async collect() {
        this.reset()
        for (const [queue, count] of await live.byQueue('running')) this.set({ queue }, count)
      },
    })
    new client.Gauge({
      name: 'switchyard_schedule_lag_seconds',
      help: 'Seconds between the due time of the last slot this instance fired and its enqueue, by schedule.',
      labelNames: ['schedule'] as const,
      registers: [registry],
      // Labelled by the names registered in code, so the series are bounded by the schedules.
      collect() {
        this.reset()
        for (const schedule of manager.listSchedules()) {
          if (schedule.last_lag_seconds !== null)
            this.set({ schedule: schedule.name }, schedule.last_lag_seconds)
        }
      },
    })
  }

  /** Stops counting. */
  close(): void {
    this.#unsubscribe()
  }
}

/**
 * `switchyard_task_duration_seconds` as a prom-client metric object that reads the table's
 * buckets at scrape time (a prom-client Histogram could only be fed one observation at a time).
 */
function durationHistogram(table: TaskOutcomeTable): Metric {
  const help = 'Run time of the tasks that started and finished on this instance.'
  const bounds = table.bounds.map(String)
  const metric = {
    name: DURATION_NAME,
    help,
    type: 'histogram',
    aggregator: 'sum',
    reset: () => undefined,
    get: () => {
      const values: {
        metricName: string
        labels: Record<string, string | number>
        value: number
      }[] = []
      for (const pair of table.pairs()) {
        for (const [status, outcome] of pair.statuses) {
          if (outcome.observed === 0) continue
          const labels = { ...pair.labels, status }
          let cumulative = 0
          for (let bucket = 0; bucket < outcome.buckets.length; bucket++) {
            cumulative += outcome.buckets[bucket] ?? 0
            const le = bounds[bucket] ?? '+Inf'
            values.push({
              metricName: `${DURATION_NAME}_bucket`,
              labels: { ...labels, le },
              value: cumulative,
            })
          }
          values.push({ metricName: `${DURATION_NAME}_sum`, labels, value: outcome.sum })
          values.push({ metricName: `${DURATION_NAME}_count`, labels, value: outcome.observed })
        }
      }
      return Promise.resolve({
        name: DURATION_NAME,
        help,
        type: 'histogram',
        values,
        aggregator: 'sum',
      })
    },
  }
  return metric as unknown as Metric
}
