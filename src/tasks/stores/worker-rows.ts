/**
 * The stored form of a worker heartbeat, shared by every backend: one JSON body per instance,
 * read back with defaults so a row written by an older or newer version never breaks a list.
 */
import { TaskValidationError } from '../errors.js'
import { MAX_WORKER_TASKS, type StoredWorker, type WorkerTask } from './ports.js'

/** Most workers one list may ask for. */
const MAX_WORKERS_LISTED = 1000

/** Checks a heartbeat before it is written (a store never keeps a malformed row). */
export function checkWorker(worker: StoredWorker): void {
  if (typeof worker.id !== 'string' || worker.id === '' || worker.id.length > 255) {
    throw new TaskValidationError('A worker id must be a non-empty string of at most 255 chars.')
  }
  for (const value of [worker.started_at, worker.last_seen]) {
    if (!Number.isSafeInteger(value) || value < 0) {
      throw new TaskValidationError('Worker times must be epoch milliseconds.')
    }
  }
}

/** Checks the arguments of a list or prune. */
export function checkWorkerQuery(at: number, count: number): void {
  if (!Number.isSafeInteger(at) || !Number.isSafeInteger(count) || count < 1) {
    throw new TaskValidationError('A worker query needs an epoch-ms instant and a count ≥ 1.')
  }
  if (count > MAX_WORKERS_LISTED) {
    throw new TaskValidationError(`At most ${MAX_WORKERS_LISTED} workers per query.`)
  }
}

/** The JSON body of a heartbeat (bounded: at most {@link MAX_WORKER_TASKS} running tasks named). */
export function workerBody(worker: StoredWorker): string {
  return JSON.stringify({
    ...worker,
    running_tasks: worker.running_tasks.slice(0, MAX_WORKER_TASKS),
  })
}

/** Parses a stored body; a field it lacks reads as empty, so no row breaks a list. */
export function parseWorker(body: string): StoredWorker {
  const raw = JSON.parse(body) as Partial<StoredWorker>
  const number = (value: unknown) => (typeof value === 'number' ? value : 0)
  return {
    id: String(raw.id),
    host: typeof raw.host === 'string' ? raw.host : '',
    pid: number(raw.pid),
    started_at: number(raw.started_at),
    last_seen: number(raw.last_seen),
    queues: Array.isArray(raw.queues) ? raw.queues.map(String) : [],
    running: number(raw.running),
    running_tasks: Array.isArray(raw.running_tasks)
      ? raw.running_tasks.map((task: Partial<WorkerTask>) => ({
          task_id: typeof task.task_id === 'string' ? task.task_id : '',
          func_name: typeof task.func_name === 'string' ? task.func_name : '',
        }))
      : [],
    version: typeof raw.version === 'string' ? raw.version : '',
    stopped: raw.stopped === true,
  }
}
