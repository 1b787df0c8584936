/**
 * The live streams of the flag service, for dashboards and debugging: one event per
 * evaluation ({@link EvaluationStream}), and one per OpenFeature tracking call
 * ({@link TrackingStream}, `client.track()`), so a dashboard can put what a context converted
 * on next to the variations it was served (join them on `context_key`).
 *
 * They must never slow the hot path, so: with no subscriber, recording is a single boolean
 * check; with subscribers, events are optionally sampled, buffered up to a fixed capacity and
 * delivered in batches on the next turn of the event loop (a listener never runs inside an
 * evaluation); events beyond the capacity before the next delivery are dropped and counted.
 * Both streams take the same options, so with sampling on, evaluations and tracking events
 * are sampled at the same rate and their ratios stay true.
 */

/** One evaluation as seen on the stream. */
export interface EvaluationEvent {
  flag_key: string
  /** The context key, or null when the context had none. */
  context_key: string | null
  variation: string | null
  reason: string
  /** ISO 8601 time of the evaluation. */
  timestamp: string
}

/** A primitive detail of a tracking event (nested values are left out). */
export type TrackingDetail = string | number | boolean | null

/** One `client.track()` call as seen on the stream (`flag_track` on the admin stream). */
export interface TrackingEvent {
  /** The tracking event name, e.g. `checkout-completed`. */
  event_name: string
  /** The context key, or null when the context had none. */
  context_key: string | null
  /** The event's numeric `value`, or null. */
  value: number | null
  /** The other details: at most 20 primitive entries, strings cut to 200 characters. */
  details: Record<string, TrackingDetail>
  /** ISO 8601 time of the call. */
  timestamp: string
}

/** Receives a batch of events. */
export type BatchListener<T> = (events: readonly T[]) => void
/** Receives a batch of evaluation events. */
export type EvaluationListener = BatchListener<EvaluationEvent>
/** Receives a batch of tracking events. */
export type TrackingListener = BatchListener<TrackingEvent>

/** Options of {@link EvaluationStream} and {@link TrackingStream}. */
export interface EvaluationStreamOptions {
  /** Most events buffered between two deliveries; the rest are dropped (default 1000). */
  capacity?: number
  /** Fraction of events recorded, 0..1 (default 1). */
  sampleRate?: number
  /** Time source (epoch ms). */
  now?: () => number
  /** Receives errors thrown by listeners. */
  onListenerError?: (error: unknown) => void
}

/** A bounded, sampled, batched stream of events. */
export class BatchedStream<T> {
  /** True while at least one listener is subscribed; the hot path checks only this. */
  active = false
  /** Events dropped because the buffer was full. */
  dropped = 0
  private readonly listeners = new Set<BatchListener<T>>()
  private buffer: T[] = []
  private scheduled = false
  private readonly capacity: number
  private readonly sampleRate: number
  protected readonly now: () => number
  private readonly onListenerError: (error: unknown) => void

  constructor(options: EvaluationStreamOptions = {}) {
    this.capacity = options.capacity ?? 1000
    this.sampleRate = Math.min(1, Math.max(0, options.sampleRate ?? 1))
    this.now = options.now ?? Date.now
    this.onListenerError = options.onListenerError ?? (() => undefined)
  }

  /** Adds a listener; returns the function that removes it. */
  subscribe(listener: BatchListener<T>): () => void {
    this.listeners.add(listener)
    this.active = true
    return () => {
      this.listeners.delete(listener)
      this.active = this.listeners.size > 0
      if (!this.active) this.buffer = []
    }
  }

  /** True when the next event should be recorded (sampling and capacity); counts drops. */
  protected admits(): boolean {
    if (this.sampleRate < 1 && Math.random() >= this.sampleRate) return false
    if (this.buffer.length >= this.capacity) {
      this.dropped++
      return false
    }
    return true
  }

  /** Buffers an admitted event and schedules the delivery. */
  protected push(event: T): void {
    this.buffer.push(event)
    if (!this.scheduled) {
      this.scheduled = true
      setImmediate(() => this.deliver())
    }
  }

  /** The current time as the streams write it (`+00:00`, like every switchyard timestamp). */
  protected timestamp(): string {
    return new Date(this.now()).toISOString().replace('Z', '+00:00')
  }

  private deliver(): void {
    this.scheduled = false
    const batch = this.buffer
    this.buffer = []
    if (batch.length === 0) return
    for (const listener of this.listeners) {
      try {
        listener(batch)
      } catch (error) {
        this.onListenerError(error)
      }
    }
  }
}

/** The live evaluation stream. */
export class EvaluationStream extends BatchedStream<EvaluationEvent> {
  /** Records one evaluation (call only when {@link active} is true). */
  record(flagKey: string, contextKey: unknown, variation: string | null, reason: string): void {
    if (!this.admits()) return
    this.push({
      flag_key: flagKey,
      context_key: typeof contextKey === 'string' ? contextKey : null,
      variation,
      reason,
      timestamp: this.timestamp(),
    })
  }
}

const MAX_DETAILS = 20
const MAX_TEXT = 200

/** The live stream of tracking events (`client.track()`). */
export class TrackingStream extends BatchedStream<TrackingEvent> {
  /**
   * Records one tracking call (call only when {@link active} is true). Details are bounded:
   * a caller cannot make one event, or the buffer, hold more than a fixed size.
   */
  record(eventName: string, contextKey: unknown, details: Readonly<Record<string, unknown>>): void {
    if (!this.admits()) return
    // Keys come from the caller: a prototype-less object keeps `__proto__` an ordinary key.
    const kept = Object.create(null) as Record<string, TrackingDetail>
    let count = 0
    for (const [name, raw] of Object.entries(details)) {
      if (count >= MAX_DETAILS) break
      if (name === 'value' || name.length > MAX_TEXT) continue
      const value = primitive(raw)
      if (value === undefined) continue
      kept[name] = value
      count++
    }
    const value = details.value
    this.push({
      event_name: eventName.slice(0, MAX_TEXT),
      context_key: typeof contextKey === 'string' ? contextKey.slice(0, MAX_TEXT) : null,
      value: typeof value === 'number' && Number.isFinite(value) ? value : null,
      details: kept,
      timestamp: this.timestamp(),
    })
  }
}

function primitive(value: unknown): TrackingDetail | undefined {
  if (value === null || typeof value === 'boolean') return value
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined
  if (typeof value === 'string') return value.slice(0, MAX_TEXT)
  return undefined
}
