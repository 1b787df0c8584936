/**
 * Cancel requests (and announcements of operator controls) across instances: a manager on a durable store records a request for a task
 * it does not run ({@link requestCancel}), and every manager follows the store's change feed and
 * aborts the tasks it runs that another instance asked to cancel ({@link CancelWatch}).
 *
 * Why the change feed: every durable store already keeps one (SQL: the changes table, Redis: a
 * stream), shared and ordered, so a request written by any instance reaches the instance that
 * runs the task without a direct connection between them. Why polling a few times a second:
 * a cancel takes effect within a second, and one indexed read per interval costs little.
 */
import { TaskNotCancellableError, TaskNotFoundError } from './errors.js'
import { copyRecord, type TaskRecord } from './record.js'
import type { DurableTaskStore, TaskChangeFeed } from './stores/ports.js'
import { systemLoopTimer, type LoopTimer } from './scheduling/timer.js'

/** How often the feed is read (ms): a request is seen within this, plus one read. */
const CANCEL_POLL_MS = 250
/** Most changes per read; a longer backlog is read in several reads of one round. */
const READ_LIMIT = 500

/** Options of {@link CancelWatch}. */
export interface CancelWatchOptions {
  feed: TaskChangeFeed
  /** Called with the ids of each cancel request read (may repeat an id: delivery is at least once). */
  onCancel(taskIds: readonly string[]): void
  /** Called once per read that found announcements of changed operator controls. */
  onControls?(): void
  error(message: string, error: unknown): void
  timer?: LoopTimer
}

/** Follows the change feed for cancel requests. */
export class CancelWatch {
  readonly #options: CancelWatchOptions
  #position: string | null = null
  #handle: unknown = null
  #reading: Promise<void> | null = null

  constructor(options: CancelWatchOptions) {
    this.#options = options
  }

  /**
   * Starts at the feed's current end (older requests are for tasks started before us). A store
   * that cannot be read yet is logged and tried again on the next poll.
   */
  async start(): Promise<void> {
    if (this.#handle !== null) return
    this.#handle = (this.#options.timer ?? systemLoopTimer).setInterval(
      () => void this.poll(),
      CANCEL_POLL_MS,
    )
    await this.poll()
  }

  /** One round of reads up to the feed's end; rounds never overlap. */
  poll(): Promise<void> {
    this.#reading ??= this.#read()
      .catch((error: unknown) => this.#options.error('could not read cancel requests', error))
      .finally(() => {
        this.#reading = null
      })
    return this.#reading
  }

  async #read(): Promise<void> {
    for (;;) {
      const after = this.#position
      if (after === null) {
        this.#position = (await this.#options.feed.read(null, READ_LIMIT)).position
        return
      }
      const { position, changes } = await this.#options.feed.read(after, READ_LIMIT)
      this.#position = position
      const ids = changes.filter((change) => change.cancel === true).flatMap((c) => c.task_ids)
      if (ids.length > 0) this.#options.onCancel(ids)
      if (changes.some((change) => change.controls === true)) this.#options.onControls?.()
      if (position === after || changes.length < READ_LIMIT) return
    }
  }

  /** Stops polling and waits for a read in progress. */
  async stop(): Promise<void> {
    if (this.#handle !== null) (this.#options.timer ?? systemLoopTimer).clearInterval(this.#handle)
    this.#handle = null
    await this.#reading
  }
}

/**
 * Records a cancel request for a task of another instance and returns its stored record, which
 * still says `pending` or `running` until that instance has cancelled it (or `success`/`failed`
 * if the task finished first: a request then changes nothing). Throws `TaskNotFoundError` for a
 * task the store does not have, `TaskNotCancellableError` for a finished one.
 */
export async function requestCancel(store: DurableTaskStore, taskId: string): Promise<TaskRecord> {
  // Two tries: a running task put back to pending (requeueOnInterrupt) between the request and
  // the read would look live but unrequested.
  for (let attempt = 0; ; attempt++) {
    const requested = await store.changes.requestCancel(taskId)
    const stored = await store.records.get(taskId)
    if (stored === null) throw new TaskNotFoundError(`No task ${JSON.stringify(taskId)}.`)
    if (requested) return copyRecord(stored.record)
    const status = stored.record.status
    if ((status === 'pending' || status === 'running') && attempt === 0) continue
    throw new TaskNotCancellableError(
      `Task ${taskId} is ${status}; only pending or running tasks can be cancelled.`,
      { status },
    )
  }
}
