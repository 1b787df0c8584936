/**
 * The record book: live task records of this manager, keyed by task_id.
 *
 * Every status change goes through {@link RecordBook.transition}, a compare-and-set against the
 * transition table, so two parties racing (the queue starting a task, a user cancelling it) can
 * never both win. Terminal records are frozen: late logs of a cancelled task are dropped.
 */
import type { Logger } from '../common/logger.js'
import { copyRecord, type StoredTask, type TaskRecord } from './record.js'
import { canTransition, TERMINAL_STATUSES, type TaskStatus } from './status.js'
import { toIso } from './time.js'

/** Called with the record after it was created or changed status. */
export type RecordListener = (record: TaskRecord) => void

/**
 * Called with the live record (no copy) after it was created or changed status. It must read
 * what it needs at once and neither keep nor change the record.
 */
export type RecordReader = (record: Readonly<TaskRecord>) => void

/** How often (ms) at most listeners hear of one task's progress; the last value always arrives. */
export const PROGRESS_NOTIFY_MS = 250

/** Called with a task id after a log line was added to its record (or its progress changed). */
export type LogListener = (taskId: string) => void

/** Live records plus change notification. */
export class RecordBook {
  readonly #tasks = new Map<string, StoredTask>()
  readonly #listeners = new Set<RecordListener>()
  readonly #readers = new Set<RecordReader>()
  readonly #logListeners = new Set<LogListener>()
  /**
   * Tasks whose progress was announced within the last {@link PROGRESS_NOTIFY_MS}: the timer
   * announces the latest value once the window ends (if it changed). One entry per running task
   * that reports progress; an entry goes when its window ends.
   */
  readonly #progressWindows = new Map<string, { timer: NodeJS.Timeout; dirty: boolean }>()
  /**
   * Called (without a copy) when a record enters a terminal status, with the epoch ms it ended
   * at: the manager's metrics.
   */
  onTerminal: ((task: StoredTask, endedAt: number) => void) | null = null

  readonly #logger: Pick<Logger, 'error'>

  /** `logger` hears of listeners that throw. */
  constructor(logger: Pick<Logger, 'error'>) {
    this.#logger = logger
  }

  /** Adds a new record and notifies listeners. */
  add(task: StoredTask): void {
    this.#tasks.set(task.record.task_id, task)
    this.#notify(task.record)
    if (this.onTerminal !== null && TERMINAL_STATUSES.has(task.record.status)) {
      this.onTerminal(task, endedAt(task.record))
    }
  }

  /** The stored task (live object; callers must not mutate it). */
  get(taskId: string): StoredTask | undefined {
    return this.#tasks.get(taskId)
  }

  /** Every stored task, oldest first. */
  all(): IterableIterator<StoredTask> {
    return this.#tasks.values()
  }

  /** Number of records. */
  get size(): number {
    return this.#tasks.size
  }

  /**
   * Moves `task` from `from` to `to` when, and only when, its status is still `from` and the
   * table allows the move; applies `patch` in the same step. Returns whether it happened.
   */
  transition(
    task: StoredTask,
    from: TaskStatus,
    to: TaskStatus,
    patch?: Partial<Omit<TaskRecord, 'status' | 'task_id'>>,
  ): boolean {
    if (task.record.status !== from || !canTransition(from, to)) return false
    if (patch !== undefined) Object.assign(task.record, patch)
    task.record.status = to
    this.#notify(task.record)
    if (this.onTerminal !== null && TERMINAL_STATUSES.has(to)) {
      this.onTerminal(task, endedAt(task.record))
    }
    return true
  }

  /**
   * `pending → running` with its start time and the instance running it (the hot-path form of
   * {@link transition}).
   */
  start(task: StoredTask, startTime: string, worker: string): boolean {
    const record = task.record
    if (record.status !== 'pending') return false
    record.start_time = startTime
    record.worker = worker
    record.status = 'running'
    this.#notify(record)
    return true
  }

  /**
   * `running → success | failed | cancelled` at `now` (epoch ms) with the end fields (the
   * hot-path form of {@link transition}).
   */
  end(
    task: StoredTask,
    to: 'success' | 'failed' | 'cancelled',
    now: number,
    duration: number,
    error: string | null,
    stacktrace: string | null,
  ): boolean {
    const record = task.record
    if (record.status !== 'running') return false
    record.end_time = toIso(now)
    record.duration = duration
    record.error = error
    record.stacktrace = stacktrace
    record.status = to
    this.#notify(record)
    this.onTerminal?.(task, now)
    return true
  }

  /** Updates fields other than the status of a non-terminal record (e.g. `retries_used`). */
  update(task: StoredTask, patch: Partial<Omit<TaskRecord, 'status' | 'task_id'>>): void {
    if (!TERMINAL_STATUSES.has(task.record.status)) {
      Object.assign(task.record, patch)
    }
  }

  /**
   * Records that `task` was retried as `newId`, unless it already was (compare-and-set: of two
   * retries racing in this process, one wins). Returns whether it did. Listeners are not told:
   * the status did not change.
   */
  markRetried(task: StoredTask, newId: string): boolean {
    if (task.record.retried_as !== null) return false
    task.record.retried_as = newId
    return true
  }

  /** Appends a log line unless the record is already terminal. Returns whether it was added. */
  appendLog(task: StoredTask, line: string): boolean {
    if (TERMINAL_STATUSES.has(task.record.status)) return false
    task.record.logs.push(line)
    this.#notifyLogs(task.record.task_id)
    return true
  }

  #notifyLogs(taskId: string): void {
    for (const listener of this.#logListeners) {
      try {
        listener(taskId)
      } catch (error) {
        this.#logger.error({ err: error }, 'log listener failed')
      }
    }
  }

  /**
   * Sets a non-terminal record's progress. Listeners of log lines hear of it at once, then at
   * most once per {@link PROGRESS_NOTIFY_MS} while it keeps changing (the last value included).
   */
  setProgress(task: StoredTask, fraction: number, message: string | null): boolean {
    const record = task.record
    if (TERMINAL_STATUSES.has(record.status)) return false
    record.progress = fraction
    record.progress_message = message
    const id = record.task_id
    const window = this.#progressWindows.get(id)
    if (window !== undefined) {
      window.dirty = true
      return true
    }
    this.#announceProgress(id)
    return true
  }

  #announceProgress(id: string): void {
    const timer = setTimeout(() => {
      const window = this.#progressWindows.get(id)
      this.#progressWindows.delete(id)
      if (window?.dirty === true && this.#tasks.has(id)) this.#announceProgress(id)
    }, PROGRESS_NOTIFY_MS)
    timer.unref()
    this.#progressWindows.set(id, { timer, dirty: false })
    this.#notifyLogs(id)
  }

  /** Removes records (history deletion, a single id or many). Returns how many existed. */
  delete(taskIds: string | Iterable<string>): number {
    if (typeof taskIds === 'string') return this.#tasks.delete(taskIds) ? 1 : 0
    let deleted = 0
    for (const id of taskIds) if (this.#tasks.delete(id)) deleted++
    return deleted
  }

  /** Subscribes to record creation and status changes; returns the unsubscribe function. */
  subscribe(listener: RecordListener): () => void {
    this.#listeners.add(listener)
    return () => this.#listeners.delete(listener)
  }

  /**
   * Like {@link subscribe}, for readers that only look at a few fields right away (metrics):
   * they get the live record, which spares a copy of it per status change.
   */
  read(reader: RecordReader): () => void {
    this.#readers.add(reader)
    return () => this.#readers.delete(reader)
  }

  /** Subscribes to added log lines (the id only: callers read the record when they need it). */
  subscribeLogs(listener: LogListener): () => void {
    this.#logListeners.add(listener)
    return () => this.#logListeners.delete(listener)
  }

  #notify(record: TaskRecord): void {
    if (this.#readers.size > 0) this.#tell(record)
    if (this.#listeners.size === 0) return
    this.#broadcast(record)
  }

  #tell(record: TaskRecord): void {
    for (const reader of this.#readers) {
      try {
        reader(record)
      } catch (error) {
        this.#logger.error({ err: error }, 'record reader failed')
      }
    }
  }

  #broadcast(record: TaskRecord): void {
    const copy = copyRecord(record)
    for (const listener of this.#listeners) {
      try {
        listener(copy)
      } catch (error) {
        this.#logger.error({ err: error }, 'record listener failed')
      }
    }
  }
}

/** When a terminal record ended (epoch ms), read back from its timestamps. */
function endedAt(record: TaskRecord): number {
  return Date.parse(record.end_time ?? record.created_at)
}
