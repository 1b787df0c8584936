/**
 * The live evaluation stream: one event per evaluation, for dashboards and debugging.
 *
 * It must never slow the hot path, so: with no subscriber, recording is a single boolean
 * check; with subscribers, events are optionally sampled, buffered up to a fixed capacity and
 * delivered in batches on the next turn of the event loop (a listener never runs inside an
 * evaluation); events beyond the capacity before the next delivery are dropped and counted.
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

/** Receives a batch of evaluation events. */
export type EvaluationListener = (events: readonly EvaluationEvent[]) => void

/** Options of {@link EvaluationStream}. */
export interface EvaluationStreamOptions {
  /** Most events buffered between two deliveries; the rest are dropped (default 1000). */
  capacity?: number
  /** Fraction of evaluations recorded, 0..1 (default 1). */
  sampleRate?: number
  /** Time source (epoch ms). */
  now?: () => number
  /** Receives errors thrown by listeners. */
  onListenerError?: (error: unknown) => void
}

/** A bounded, sampled, batched stream of evaluation events. */
export class EvaluationStream {
  /** True while at least one listener is subscribed; the hot path checks only this. */
  active = false
  /** Events dropped because the buffer was full. */
  dropped = 0
  private readonly listeners = new Set<EvaluationListener>()
  private buffer: EvaluationEvent[] = []
  private scheduled = false
  private readonly capacity: number
  private readonly sampleRate: number
  private readonly now: () => number
  private readonly onListenerError: (error: unknown) => void

  constructor(options: EvaluationStreamOptions = {}) {
    this.capacity = options.capacity ?? 1000
    this.sampleRate = Math.min(1, Math.max(0, options.sampleRate ?? 1))
    this.now = options.now ?? Date.now
    this.onListenerError = options.onListenerError ?? (() => undefined)
  }

  /** Adds a listener; returns the function that removes it. */
  subscribe(listener: EvaluationListener): () => void {
    this.listeners.add(listener)
    this.active = true
    return () => {
      this.listeners.delete(listener)
      this.active = this.listeners.size > 0
      if (!this.active) this.buffer = []
    }
  }

  /** Records one evaluation (call only when {@link active} is true). */
  record(flagKey: string, contextKey: unknown, variation: string | null, reason: string): void {
    if (this.sampleRate < 1 && Math.random() >= this.sampleRate) return
    if (this.buffer.length >= this.capacity) {
      this.dropped++
      return
    }
    this.buffer.push({
      flag_key: flagKey,
      context_key: typeof contextKey === 'string' ? contextKey : null,
      variation,
      reason,
      timestamp: new Date(this.now()).toISOString().replace('Z', '+00:00'),
    })
    if (!this.scheduled) {
      this.scheduled = true
      setImmediate(() => this.deliver())
    }
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
