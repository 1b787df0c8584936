/**
 * The task half of OpenTelemetry: the task metrics through the `switchyard` meter (the same
 * measuring points as Prometheus, from metrics/task-outcomes.ts), a `task.run <function>` span
 * per run, and the trace context captured at enqueue. The context travels inside the stored
 * task, so a run on any instance sharing the store links to the span that enqueued it.
 */
import type {
  BatchObservableResult,
  Counter,
  Histogram,
  Link,
  Meter,
  Span,
} from '@opentelemetry/api'
import { DURATION_BUCKETS, followTaskOutcomes, LiveQueueCounts } from './outcomes.js'
import type { TaskManager } from '../manager.js'
import type { StoredTask, TaskRecord } from '../record.js'
import type { TaskStatus } from '../status.js'
import type { OtelApiModule } from '../../common/telemetry/loader.js'
import { INSTRUMENTATION_NAME } from '../../common/telemetry/names.js'

/**
 * Runs with an open span. A run whose end this instance never sees (it stopped) must not hold
 * memory forever: past this many, the oldest span is ended as it is.
 */
const MAX_OPEN_SPANS = 10_000

/** The W3C fields kept with a task (`traceparent`, `tracestate`), no others. */
const KEPT_FIELDS = new Set(['traceparent', 'tracestate'])

const FINAL = new Set<TaskStatus>(['success', 'failed', 'cancelled', 'interrupted'])

/** The OpenTelemetry side of one task manager; `close()` stops it. */
export class TaskTelemetry {
  readonly #api: OtelApiModule
  readonly #tracer
  readonly #open = new Map<string, Span>()
  readonly #unsubscribers: (() => void)[] = []

  /** The API's no-op provider: what the global provider delegates to while no SDK is set. */
  readonly #noopProvider: unknown

  constructor(api: OtelApiModule, manager: TaskManager) {
    this.#api = api
    this.#tracer = api.trace.getTracer(INSTRUMENTATION_NAME)
    // eslint-disable-next-line @typescript-eslint/no-deprecated -- the global provider of API 1.x (the peer range); a fresh one hands out the no-op delegate
    this.#noopProvider = new api.ProxyTracerProvider().getDelegate()
    const meter = api.metrics.getMeter(INSTRUMENTATION_NAME)
    // A meter asked for before any meter provider exists stays a no-op for good: then nothing
    // is followed at all, rather than counting into no-ops.
    if (!isNoopMeter(api, meter)) this.#measure(meter, manager)
  }

  #measure(meter: Meter, manager: TaskManager): void {
    const enqueued: Counter = meter.createCounter('switchyard.tasks.enqueued', {
      description: 'Tasks this instance took in (enqueued here, or claimed from the shared store).',
    })
    const finished: Counter = meter.createCounter('switchyard.tasks.finished', {
      description: 'Tasks that reached a final status on this instance.',
    })
    const duration: Histogram = meter.createHistogram('switchyard.task.duration', {
      description: 'Run time of the tasks that started and finished on this instance.',
      unit: 's',
      advice: { explicitBucketBoundaries: DURATION_BUCKETS },
    })
    this.#unsubscribers.push(
      followTaskOutcomes(manager, {
        enqueued: (record) => enqueued.add(1, { function: record.func_name, queue: record.queue }),
        finished: (record) => {
          const attributes = outcomeAttributes(record)
          finished.add(1, attributes)
          if (record.start_time !== null) duration.record(record.duration, attributes)
        },
      }),
    )
    const live = new LiveQueueCounts(manager)
    const waiting = meter.createObservableGauge('switchyard.tasks.waiting', {
      description:
        'Tasks waiting to run, every instance sharing the store (by the queue of their function).',
    })
    const running = meter.createObservableGauge('switchyard.tasks.running', {
      description:
        'Tasks running, every instance sharing the store (by the queue of their function).',
    })
    const observeLive = async (result: BatchObservableResult) => {
      for (const [queue, count] of await live.byQueue('pending'))
        result.observe(waiting, count, { queue })
      for (const [queue, count] of await live.byQueue('running'))
        result.observe(running, count, { queue })
    }
    meter.addBatchObservableCallback(observeLive, [waiting, running])
    this.#unsubscribers.push(() =>
      meter.removeBatchObservableCallback(observeLive, [waiting, running]),
    )
  }

  /**
   * The trace context active now, as W3C headers to store with a new task, or null when no span
   * is active (nothing is stored then).
   */
  capture(): Record<string, string> | null {
    const api = this.#api
    if (api.trace.getActiveSpan() === undefined) return null
    const carrier: Record<string, string> = {}
    api.propagation.inject(api.context.active(), carrier)
    let kept: Record<string, string> | null = null
    for (const [name, value] of Object.entries(carrier)) {
      if (!KEPT_FIELDS.has(name)) continue
      kept ??= {}
      kept[name] = value
    }
    return kept
  }

  /** Follows a task's transitions: a span from its start to its final status. */
  transition(task: StoredTask, previous: TaskStatus | null, attempt: number): void {
    const record = task.record
    if (record.status === 'running' && previous === 'pending') {
      if (this.#tracing()) this.#start(task, attempt)
      return
    }
    if (!FINAL.has(record.status)) return
    const span = this.#open.get(record.task_id)
    if (span === undefined) return
    this.#open.delete(record.task_id)
    span.setAttribute('switchyard.task.status', record.status)
    span.setAttribute('switchyard.task.attempt', attempt)
    if (record.status !== 'success') {
      span.setStatus({
        code: this.#api.SpanStatusCode.ERROR,
        message: record.error ?? record.status,
      })
    }
    span.end(record.end_time === null ? undefined : new Date(record.end_time))
  }

  /** Stops the metrics and ends the spans still open. */
  close(): void {
    for (const unsubscribe of this.#unsubscribers.splice(0)) unsubscribe()
    for (const span of this.#open.values()) span.end()
    this.#open.clear()
  }

  /**
   * Whether spans are recorded: a tracer provider is registered. Asked per run (an SDK may be
   * set up after the manager starts); without one, a run costs a comparison, not a span's
   * options and attributes.
   */
  #tracing(): boolean {
    const provider = this.#api.trace.getTracerProvider()
    return (
      // eslint-disable-next-line @typescript-eslint/no-deprecated -- see the constructor
      !(provider instanceof this.#api.ProxyTracerProvider) ||
      provider.getDelegate() !== this.#noopProvider
    )
  }

  #start(task: StoredTask, attempt: number): void {
    const api = this.#api
    const record = task.record
    const links: Link[] = []
    const stored = task.trace_context
    if (stored !== undefined && stored !== null) {
      const linked = api.trace.getSpanContext(api.propagation.extract(api.ROOT_CONTEXT, stored))
      if (linked !== undefined && api.trace.isSpanContextValid(linked))
        links.push({ context: linked })
    }
    const span = this.#tracer.startSpan(
      `task.run ${record.func_name}`,
      {
        kind: api.SpanKind.CONSUMER,
        startTime: record.start_time === null ? undefined : new Date(record.start_time),
        links,
        attributes: {
          'switchyard.task.id': record.task_id,
          'switchyard.task.function': record.func_name,
          'switchyard.task.queue': record.queue,
          'switchyard.task.attempt': attempt,
          'switchyard.task.status': record.status,
        },
      },
      // A run is not a child of whatever happened to be active on this instance.
      api.ROOT_CONTEXT,
    )
    if (this.#open.size >= MAX_OPEN_SPANS) {
      const oldest = this.#open.entries().next().value
      if (oldest !== undefined) {
        this.#open.delete(oldest[0])
        oldest[1].end()
      }
    }
    // Without a tracer provider the span records nothing: no need to keep it until the end.
    if (span.isRecording()) this.#open.set(record.task_id, span)
  }
}

function outcomeAttributes(record: TaskRecord): Record<string, string> {
  return { function: record.func_name, queue: record.queue, status: record.status }
}

/** Whether `meter` is the API's no-op meter (no meter provider was registered). */
function isNoopMeter(api: OtelApiModule, meter: Meter): boolean {
  return Object.getPrototypeOf(meter) === Object.getPrototypeOf(api.createNoopMeter())
}
