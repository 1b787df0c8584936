/**
 * Observer events: what log and lifecycle observers receive. Tags are forwarded to every event;
 * the extra fields of a `taskLog` call travel under `extra`.
 */
import type { LogLevel } from '../record.js'
import { LOG_LEVELS } from '../record.js'
import type { TaskStatus } from '../status.js'

/** A `taskLog` call of a running task. */
export interface TaskLogEvent {
  readonly type: 'log'
  readonly task_id: string
  readonly func_name: string
  readonly timestamp: string
  readonly level: LogLevel
  readonly message: string
  readonly attempt: number
  readonly tags: Readonly<Record<string, string>>
  readonly extra: Readonly<Record<string, unknown>>
}

/** A status change of a task (running, success, failed, interrupted, cancelled, rejected, expired). */
export interface TaskLifecycleEvent {
  readonly type: 'lifecycle'
  readonly task_id: string
  readonly func_name: string
  readonly timestamp: string
  readonly status: TaskStatus
  readonly previous_status: TaskStatus | null
  readonly attempt: number
  readonly tags: Readonly<Record<string, string>>
  /** Set on `failed`. */
  readonly error: string | null
  /** Seconds; set on terminal statuses of tasks that started. */
  readonly duration: number | null
}

/** Any observer event. */
export type TaskObserverEvent = TaskLogEvent | TaskLifecycleEvent

/**
 * Receives task events. Every method is optional; a thrown error or rejected promise is reported
 * and never reaches the task or the other observers.
 */
export interface TaskObserver {
  onLog?(event: TaskLogEvent): void | Promise<void>
  onLifecycle?(event: TaskLifecycleEvent): void | Promise<void>
  /** Called at manager startup. */
  open?(): void | Promise<void>
  /** Called at manager shutdown. */
  close?(): void | Promise<void>
}

/** Whether `level` is at least `minimum`. */
export function levelAtLeast(level: LogLevel, minimum: LogLevel): boolean {
  return LOG_LEVELS.indexOf(level) >= LOG_LEVELS.indexOf(minimum)
}

/** The observer line format: `[task_id] [func_name] <timestamp> message`. */
export function formatObserverLine(event: TaskObserverEvent): string {
  const message = event.type === 'log' ? event.message : lifecycleMessage(event)
  return `[${event.task_id}] [${event.func_name}] ${event.timestamp} ${message}`
}

function lifecycleMessage(event: TaskLifecycleEvent): string {
  const error = event.error === null ? '' : `: ${event.error}`
  return `status ${event.previous_status ?? 'new'} -> ${event.status}${error}`
}
