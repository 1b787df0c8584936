/**
 * The task record: the serialized fields (docs/tasks.md) plus `executor` and `queue`, and
 * the stored form that also carries the arguments (plain or encrypted) and the idempotency key.
 */
import type { TaskStatus } from './status.js'
import { toIso } from './time.js'

/** Where a task runs. */
export type ExecutorKind = 'async' | 'thread' | 'process'

/** Log levels of `taskLog` and observers, lowest first. */
export const LOG_LEVELS = ['debug', 'info', 'warning', 'error'] as const

/** A log level. */
export type LogLevel = (typeof LOG_LEVELS)[number]

/** How a task was enqueued (`retry`: a new run of a failed or interrupted one). */
export type TaskSource = 'manual' | 'scheduled' | 'retry'

/** The serialized task record (list, detail and stream). Field names are snake_case, as on the wire. */
export interface TaskRecord {
  task_id: string
  func_name: string
  status: TaskStatus
  /** `2026-11-21T21:00:00.123+00:00` */
  created_at: string
  start_time: string | null
  end_time: string | null
  /** Seconds between start_time and end_time; 0 until the task has both. */
  duration: number
  retries_used: number
  error: string | null
  /** `<timestamp> [<level>] <message>` lines; retries separated by `--- retry <n> ---`. */
  logs: string[]
  stacktrace: string | null
  tags: Record<string, string>
  source: TaskSource
  priority: number | null
  executor: ExecutorKind
  queue: string
  /** How far the task says it is, 0..1, or null when it does not report progress. */
  progress: number | null
  /** What the task says it is doing, or null. */
  progress_message: string | null
  /**
   * The instant the task must have started by (same format as `created_at`), or null. Past it,
   * a pending task ends `expired` and never runs.
   */
  expires_at: string | null
  /**
   * The id of the instance (in the workers registry) that started the task's run, or null until
   * one did. Absent from records stored before it existed: readers give null.
   */
  worker?: string | null
  /** The task this one is a retry of (its `source` is then `retry`), or null. */
  retry_of: string | null
  /** The task that retried this one, or null; a task is retried at most once. */
  retried_as: string | null
  /**
   * The task's group in a grouped or rate-limited queue (limits and round-robin apply per group),
   * or null. Records written before groups existed lack it (read it as null).
   */
  group?: string | null
  /**
   * The task whose child this one is in a flow (the parent runs once every child succeeded), or
   * null. Records written before flows existed lack it (read it as null).
   */
  parent_id?: string | null
}

/**
 * A record as kept by the manager and a {@link TaskStore}: the serialized record plus what is
 * needed to run or retry it. With an encryption key, `args` is null and `encrypted_args` holds
 * the ciphertext, so a stored task never contains plaintext arguments.
 */
export interface StoredTask {
  record: TaskRecord
  args: unknown[] | null
  encrypted_args: string | null
  idempotency_key: string | null
  /**
   * The W3C trace context (`traceparent`, `tracestate`) active when the task was enqueued, so
   * its run links to it on whichever instance runs it; absent without OpenTelemetry.
   */
  trace_context?: Record<string, string> | null
  /**
   * The JSON text of what the successful run returned (at most 64 KiB; absent when it returned
   * nothing JSON can carry, or its arguments are encrypted). Shown by the task admin only with
   * `displayResults`.
   */
  result?: string | null
  /** True when {@link result} was cut at its limit. */
  result_truncated?: boolean
  /** The id of the root of the flow this task belongs to (the root's own id), or absent. */
  flow_id?: string | null
  /** A flow parent: how many children it was created with. Absent on leaves. */
  flow_children?: number
  /**
   * A retry of a flow parent: the id of the parent whose children's results it reads (the
   * children stay those of the first run).
   */
  flow_children_of?: string
  /** A chain step: it receives its one child's result as its last argument. */
  flow_chain?: boolean
  /**
   * What a flow child's successful run returned, for its parent: the JSON text in full (bounded
   * by the manager's `maxResultBytes`), encrypted like the arguments when a key is set.
   */
  flow_result?: string | null
}

/** Builds a `<timestamp> [<level>] <message>` log line. */
export function formatLogLine(epochMs: number, level: LogLevel, message: string): string {
  return `${toIso(epochMs)} [${level}] ${message}`
}

/** The marker line that separates retry attempts in `logs`. */
export function retryMarker(retryNumber: number): string {
  return `--- retry ${retryNumber} ---`
}

/** A deep-enough copy of a record for handing to callers (logs and tags are copied). */
export function copyRecord(record: TaskRecord): TaskRecord {
  return { ...record, logs: record.logs.slice(), tags: { ...record.tags } }
}
