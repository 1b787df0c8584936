/**
 * The task half of the Prometheus metrics: tasks taken in and finished (counted from the manager's
 * record notifications, shared with OpenTelemetry in tasks/telemetry/outcomes.ts, so running a
 * task does no metrics work of its own), their durations, the waiting and running gauges read
 * from the task store at scrape time (any instance reports the depth of the queues every instance
 * shares), and how late each periodic schedule's last slot was enqueued.
 */
import type { Registry } from 'prom-client'
import type { TaskManager } from '../tasks/manager.js'
import type { PromClientModule } from './loader.js'
import {
  DURATION_BUCKETS,
  followTaskOutcomes,
  LiveQueueCounts,
} from '../tasks/telemetry/outcomes.js'

export { LIVE_COUNTS_TTL_MS, UNKNOWN_QUEUE } from '../tasks/telemetry/outcomes.js'

/**
 * Most label sets kept at hand per metric: histogram handles (past it that cache starts over,
 * the series stay in the registry) and counts (past it new label sets count together).
 */
const MAX_CACHED_SERIES = 10_000

/** The task metrics of one manager, registered on `registry`; `close()` unsubscribes. */
export class TaskCollectors {
  /**
   * Counts by label set, handed to prom-client at scrape time: incrementing a prom-client
   * counter hashes its label set on every call, which halved task throughput.
   */
  readonly #enqueuedCounts = new Map<string, { labels: Record<string, string>; value: number }>()
  readonly #finishedCounts = new Map<string, { labels: Record<string, string>; value: number }>()
  readonly #histograms = new Map<string, { observe(value: number): void }>()
  readonly #unsubscribe: () => void

  constructor(
    client: PromClientModule,
    registry: Registry,
    manager: TaskManager,
    now: () => number = Date.now,
  ) {
    const enqueuedCounts = this.#enqueuedCounts
    const finishedCounts = this.#finishedCounts
    new client.Counter({
      name: 'switchyard_tasks_enqueued_total',
      help: 'Tasks this instance took in (enqueued here, or claimed from the shared store).',
      labelNames: ['function', 'queue'] as const,
      registers: [registry],
      collect() {
        this.reset()
        for (const { labels, value } of enqueuedCounts.values()) this.inc(labels, value)
      },
    })
    new client.Counter({
      name: 'switchyard_tasks_finished_total',
      help: 'Tasks that reached a final status on this instance.',
      labelNames: ['function', 'queue', 'status'] as const,
      registers: [registry],
      collect() {
        this.reset()
        for (const { labels, value } of finishedCounts.values()) this.inc(labels, value)
      },
    })
    const duration = new client.Histogram({
      name: 'switchyard_task_duration_seconds',
      help: 'Run time of the tasks that started and finished on this instance.',
      labelNames: ['function', 'queue', 'status'] as const,
      buckets: DURATION_BUCKETS,
      registers: [registry],
    })
    this.#unsubscribe = followTaskOutcomes(manager, {
      enqueued: (record) =>
        count(enqueuedCounts, `${record.func_name}\0${record.queue}`, {
          function: record.func_name,
          queue: record.queue,
        }),
      finished: (record) => {
        const key = `${record.func_name}\0${record.queue}\0${record.status}`
        count(finishedCounts, key, {
          function: record.func_name,
          queue: record.queue,
          status: record.status,
        })
        if (record.start_time !== null)
          cached(this.#histograms, key, () =>
            duration.labels(record.func_name, record.queue, record.status),
          ).observe(record.duration)
      },
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

/** The series handle under `key`, made once by `make` (see {@link MAX_CACHED_SERIES}). */
function cached<T>(cache: Map<string, T>, key: string, make: () => T): T {
  let series = cache.get(key)
  if (series === undefined) {
    if (cache.size >= MAX_CACHED_SERIES) cache.clear()
    series = make()
    cache.set(key, series)
  }
  return series
}

/** The label value of the series counted past {@link MAX_CACHED_SERIES} label sets. */
export const OVERFLOW_LABEL = '__other__'

/**
 * Adds one to the series `key` of `counts`. The label sets are registered functions × queues ×
 * statuses, bounded by the code; should they pass {@link MAX_CACHED_SERIES} anyway, new ones
 * count under {@link OVERFLOW_LABEL} (status kept) rather than growing without end.
 */
function count(
  counts: Map<string, { labels: Record<string, string>; value: number }>,
  key: string,
  labels: Record<string, string>,
): void {
  let series = counts.get(key)
  if (series === undefined) {
    if (counts.size >= MAX_CACHED_SERIES) {
      const status = labels.status
      const overflow: Record<string, string> = { function: OVERFLOW_LABEL, queue: OVERFLOW_LABEL }
      if (status !== undefined) overflow.status = status
      const overflowKey = `${OVERFLOW_LABEL}\0${status ?? ''}`
      series = counts.get(overflowKey) ?? { labels: overflow, value: 0 }
      counts.set(overflowKey, series)
    } else {
      series = { labels, value: 0 }
      counts.set(key, series)
    }
  }
  series.value++
}
