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

/** The record of `task`, with its arguments when `withArgs` (null while they are encrypted). */
export function serializeTask(task: StoredTask, withArgs: boolean): SerializedTask {
  // Records stored before workers (or flows) existed read as run on no known worker (no parent).
  const record =
    task.record.worker === undefined || task.record.parent_id === undefined
      ? {
          ...task.record,
          worker: task.record.worker ?? null,
          parent_id: task.record.parent_id ?? null,
        }
      : task.record
  return withArgs ? { ...record, args: task.args } : record
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
