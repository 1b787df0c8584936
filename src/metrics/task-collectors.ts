/**
 * The task half of the Prometheus metrics: tasks taken in and finished, their durations, and
 * the waiting and running gauges (the measuring points are shared with OpenTelemetry, see
 * task-outcomes.ts).
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

/** The task metrics of one manager, registered on `registry`; `close()` unsubscribes. */
export class TaskCollectors {
  readonly #unsubscribe: () => void

  constructor(
    client: PromClientModule,
    registry: Registry,
    manager: TaskManager,
    now: () => number = Date.now,
  ) {
    const enqueued = new client.Counter({
      name: 'switchyard_tasks_enqueued_total',
      help: 'Tasks this instance took in (enqueued here, or claimed from the shared store).',
      labelNames: ['function', 'queue'] as const,
      registers: [registry],
    })
    const finished = new client.Counter({
      name: 'switchyard_tasks_finished_total',
      help: 'Tasks that reached a final status on this instance.',
      labelNames: ['function', 'queue', 'status'] as const,
      registers: [registry],
    })
    const duration = new client.Histogram({
      name: 'switchyard_task_duration_seconds',
      help: 'Run time of the tasks that started and finished on this instance.',
      labelNames: ['function', 'queue', 'status'] as const,
      buckets: DURATION_BUCKETS,
      registers: [registry],
    })
    this.#unsubscribe = followTaskOutcomes(manager, {
      enqueued: (record) => enqueued.inc({ function: record.func_name, queue: record.queue }),
      finished: (record) => {
        const labels = { function: record.func_name, queue: record.queue, status: record.status }
        finished.inc(labels)
        if (record.start_time !== null) duration.observe(labels, record.duration)
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
  }

  /** Stops counting. */
  close(): void {
    this.#unsubscribe()
  }
}
