/**
 * The task admin's JSON forms: task records (arguments only when `displayFuncArgs` is on),
 * audit entries (UTC timestamps), and the windows of `since` (`6h`, `7d`, `all`).
 */
import type { StoredTask, TaskRecord } from '../record.js'
import type { TaskAuditEntry } from '../stores/ports.js'
import { toIso } from '../time.js'
import type { WorkerInfo } from '../workers.js'

/** A record as the list, the detail and the stream show it. */
export type SerializedTask = TaskRecord & { args?: unknown[] | null }

/**
 * A record's fields in the order the API shows them, whatever order a store gave them back in
 * (a stored body leaves out null fields, which come back last); any other field follows.
 */
const RECORD_FIELD_ORDER = [
  'task_id',
  'func_name',
  'status',
  'created_at',
  'start_time',
  'end_time',
  'duration',
  'retries_used',
  'error',
  'logs',
  'stacktrace',
  'tags',
  'source',
  'priority',
  'executor',
  'queue',
  'progress',
  'progress_message',
  'expires_at',
  'worker',
  'retry_of',
  'retried_as',
  'parent_id',
] as const

/** The record of `task`, with its arguments when `withArgs` (null while they are encrypted). */
export function serializeTask(task: StoredTask, withArgs: boolean): SerializedTask {
  const source = task.record as unknown as Record<string, unknown>
  const record: Record<string, unknown> = {}
  // Records stored before workers (or flows) existed read as run on no known worker (no parent).
  for (const key of RECORD_FIELD_ORDER) record[key] = source[key] ?? null
  for (const key in source) if (!(key in record)) record[key] = source[key]
  if (withArgs) record.args = task.args
  return record as unknown as SerializedTask
}

/** A worker of `GET {tasks}/workers`: its times as ISO timestamps. */
export function serializeWorker(worker: WorkerInfo) {
  return {
    id: worker.id,
    host: worker.host,
    pid: worker.pid,
    started_at: toIso(worker.started_at),
    last_seen: toIso(worker.last_seen),
    alive: worker.alive,
    queues: worker.queues,
    running: worker.running,
    running_tasks: worker.running_tasks,
    version: worker.version,
  }
}

/** An audit entry with an ISO timestamp. */
export function serializeAudit(entry: TaskAuditEntry) {
  return {
    id: entry.id,
    timestamp: toIso(entry.timestamp),
    action: entry.action,
    task_id: entry.task_id,
    actor: entry.actor,
    detail: entry.detail,
  }
}

const HOUR = 3_600_000

/** The start (epoch ms) of a window `<N>h` / `<N>d` back from `now`; undefined for `all`. */
export function windowStart(window: string | undefined, now: number): number | undefined {
  if (window === undefined || window === 'all') return undefined
  const amount = Number(window.slice(0, -1))
  return now - amount * (window.endsWith('d') ? 24 * HOUR : HOUR)
}
