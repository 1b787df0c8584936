/**
 * The task half of the metrics: tasks taken in and finished (counted from the manager's record
 * notifications, so running a task does no metrics work of its own), their durations, and the
 * waiting and running gauges read from the task store at scrape time, so that any instance
 * reports the depth of the queues every instance shares; and how late each periodic schedule's
 * last slot was enqueued.
 */
import type { Registry } from 'prom-client'
import type { TaskManager } from '../tasks/manager.js'
import type { TaskRecord } from '../tasks/record.js'
import type { LiveCount } from '../tasks/stores/ports.js'
import type { PromClientModule } from './loader.js'

/** How long (ms) one store read of the live counts answers scrapes. */
export const LIVE_COUNTS_TTL_MS = 1000

/** The queue label of a function this instance has not registered. */
export const UNKNOWN_QUEUE = '__unknown__'

/**
 * Statuses after which a record no longer changes (a retry is a new task). Kept here rather
 * than imported so the metrics depend on the record's shape only.
 */
const TERMINAL = new Set(['success', 'failed', 'cancelled', 'interrupted', 'rejected'])

/**
 * Tasks followed between being taken in and finishing. A record that never reports a terminal
 * status (an instance that stopped) must not hold memory forever: past this many, the oldest
 * is forgotten (it would only miss its finish count).
 */
const MAX_FOLLOWED = 100_000

/**
 * Most label sets kept at hand per metric: histogram handles (past it that cache starts over,
 * the series stay in the registry) and counts (past it new label sets count together).
 */
const MAX_CACHED_SERIES = 10_000

/** Duration buckets (seconds): from a quick job to an hour-long batch. */
const DURATION_BUCKETS = [0.01, 0.05, 0.1, 0.5, 1, 5, 15, 60, 300, 900, 3600]

/** The task metrics of one manager, registered on `registry`; `close()` unsubscribes. */
export class TaskCollectors {
  readonly #followed = new Map<string, string>()
  /**
   * Counts by label set, handed to prom-client at scrape time: incrementing a prom-client
   * counter hashes its label set on every call, which halved task throughput.
   */
  readonly #enqueuedCounts = new Map<string, { labels: Record<string, string>; value: number }>()
  readonly #finishedCounts = new Map<string, { labels: Record<string, string>; value: number }>()
  readonly #histograms = new Map<string, { observe(value: number): void }>()
  readonly #unsubscribe: () => void
  #live: { at: number; counts: Promise<LiveCount[]> } | null = null

  constructor(
    client: PromClientModule,
    registry: Registry,
    private readonly manager: TaskManager,
    private readonly now: () => number = Date.now,
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
    this.#unsubscribe = manager.subscribe((record) => {
      const previous = this.#followed.get(record.task_id)
      if (TERMINAL.has(record.status)) {
        // Counted once: a task is followed from its intake, except one refused at intake
        // (queue full), which is never followed and finishes at once.
        if (previous === undefined && record.status !== 'rejected') return
        this.#followed.delete(record.task_id)
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
        return
      }
      if (previous !== undefined) return
      count(enqueuedCounts, `${record.func_name}\0${record.queue}`, {
        function: record.func_name,
        queue: record.queue,
      })
      this.#follow(record)
    })
    const live = (status: LiveCount['status']) => async (): Promise<Map<string, number>> => {
      const byQueue = new Map<string, number>()
      for (const count of await this.#liveCounts()) {
        if (count.status !== status) continue
        const queue = this.#queueOf(count.func_name)
        byQueue.set(queue, (byQueue.get(queue) ?? 0) + count.count)
      }
      return byQueue
    }
    const waiting = live('pending')
    const running = live('running')
    new client.Gauge({
      name: 'switchyard_tasks_waiting',
      help: 'Tasks waiting to run, every instance sharing the store (by the queue of their function).',
      labelNames: ['queue'] as const,
      registers: [registry],
      async collect() {
        this.reset()
        for (const [queue, count] of await waiting()) this.set({ queue }, count)
      },
    })
    new client.Gauge({
      name: 'switchyard_tasks_running',
      help: 'Tasks running, every instance sharing the store (by the queue of their function).',
      labelNames: ['queue'] as const,
      registers: [registry],
      async collect() {
        this.reset()
        for (const [queue, count] of await running()) this.set({ queue }, count)
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

  #follow(record: TaskRecord): void {
    if (this.#followed.size >= MAX_FOLLOWED) {
      const oldest = this.#followed.keys().next().value
      if (oldest !== undefined) this.#followed.delete(oldest)
    }
    this.#followed.set(record.task_id, record.status)
  }

  /** The live counts, read from the store at most once a second whatever the scrape rate. */
  #liveCounts(): Promise<LiveCount[]> {
    const now = this.now()
    if (this.#live !== null && now - this.#live.at < LIVE_COUNTS_TTL_MS) return this.#live.counts
    const counts = this.manager.liveCounts()
    this.#live = { at: now, counts }
    // A failed read is not kept: the next scrape tries again.
    counts.catch(() => {
      if (this.#live?.counts === counts) this.#live = null
    })
    return counts
  }

  /**
   * A function's default queue. Tasks of a function this instance has not registered (another
   * instance's) count under {@link UNKNOWN_QUEUE}: their names come from the store, and a label
   * per stored name would be unbounded.
   */
  #queueOf(name: string): string {
    const handle = this.manager.getRegisteredTask(name)
    if (handle === undefined) return UNKNOWN_QUEUE
    return handle.definition.queue ?? 'default'
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
