/**
 * Fans events out to observers with isolation: each observer is called on its own, and whatever
 * it throws (synchronously or as a rejected promise) is reported and swallowed.
 */
import type { TaskRecord } from '../record.js'
import { TERMINAL_STATUSES, type TaskStatus } from '../status.js'
import { toIso } from '../time.js'
import type { TaskLifecycleEvent, TaskLogEvent, TaskObserver } from './types.js'

/** Reports an observer failure. */
export type ObserverErrorReporter = (error: unknown, observer: TaskObserver) => void

/** The manager's observer list. */
export class ObserverDispatcher {
  readonly #observers: readonly TaskObserver[]
  readonly #report: ObserverErrorReporter

  constructor(observers: readonly TaskObserver[], report: ObserverErrorReporter) {
    this.#observers = observers
    this.#report = report
  }

  /** Whether any observer is installed (lets callers skip building events). */
  get active(): boolean {
    return this.#observers.length > 0
  }

  /** Sends a log event to every observer. */
  log(event: TaskLogEvent): void {
    for (const observer of this.#observers) {
      if (observer.onLog) this.#call(observer, () => observer.onLog?.(event))
    }
  }

  /** Sends the lifecycle event of a transition of `record` (just made) at `now`. */
  transition(record: TaskRecord, previous: TaskStatus | null, attempt: number, now: number): void {
    if (this.#observers.length === 0) return
    this.lifecycle({
      type: 'lifecycle',
      task_id: record.task_id,
      func_name: record.func_name,
      timestamp: toIso(now),
      status: record.status,
      previous_status: previous,
      attempt,
      tags: record.tags,
      error: record.status === 'failed' ? record.error : null,
      duration:
        TERMINAL_STATUSES.has(record.status) && record.start_time !== null ? record.duration : null,
    })
  }

  /** Sends a lifecycle event to every observer. */
  lifecycle(event: TaskLifecycleEvent): void {
    for (const observer of this.#observers) {
      if (observer.onLifecycle) this.#call(observer, () => observer.onLifecycle?.(event))
    }
  }

  /** Opens every observer; failures are reported, not thrown. */
  async open(): Promise<void> {
    await Promise.all(
      this.#observers.map((observer) => this.#settle(observer, () => observer.open?.())),
    )
  }

  /** Closes every observer; failures are reported, not thrown. */
  async close(): Promise<void> {
    await Promise.all(
      this.#observers.map((observer) => this.#settle(observer, () => observer.close?.())),
    )
  }

  #call(observer: TaskObserver, fn: () => unknown): void {
    try {
      const result = fn()
      if (result instanceof Promise) result.catch((error: unknown) => this.#report(error, observer))
    } catch (error) {
      this.#report(error, observer)
    }
  }

  async #settle(observer: TaskObserver, fn: () => unknown): Promise<void> {
    try {
      await fn()
    } catch (error) {
      this.#report(error, observer)
    }
  }
}
