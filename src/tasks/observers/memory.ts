/**
 * An observer that keeps every event in memory, for tests.
 */
import type { TaskLifecycleEvent, TaskLogEvent, TaskObserver, TaskObserverEvent } from './types.js'

/** Captures log and lifecycle events in arrival order. */
export class MemoryObserver implements TaskObserver {
  /** Every event received, oldest first. */
  readonly events: TaskObserverEvent[] = []

  /** Log events only. */
  get logs(): TaskLogEvent[] {
    return this.events.filter((event): event is TaskLogEvent => event.type === 'log')
  }

  /** Lifecycle events only. */
  get lifecycle(): TaskLifecycleEvent[] {
    return this.events.filter((event): event is TaskLifecycleEvent => event.type === 'lifecycle')
  }

  onLog(event: TaskLogEvent): void {
    this.events.push(event)
  }

  onLifecycle(event: TaskLifecycleEvent): void {
    this.events.push(event)
  }

  /** Forgets every captured event. */
  clear(): void {
    this.events.length = 0
  }
}
