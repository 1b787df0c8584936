/**
 * A live job: one enqueued task between `addTask` and its terminal status.
 *
 * The job is at once the queue item (priority, start), the runner's unit of work and the holder
 * of the task's cancellation, so an enqueued task costs one object here. The cancellation token
 * is created only if something asks for it (a cancel, an executor that waits, task code reading
 * its signal).
 */
import type { AsyncResource } from 'node:async_hooks'
import { Cancellation, type TaskAbort } from './cancellation.js'
import type { QueueItem } from './queues/queue.js'
import type { StoredTask } from './record.js'
import type { TaskHandle } from './registry.js'

/** Runs a job to its end, then calls `job.settled()` (the runner). */
export interface JobRunner {
  run(job: RunJob): void
}

/** One enqueued task. */
export class RunJob implements QueueItem {
  readonly task: StoredTask
  readonly handle: TaskHandle
  readonly priority: number
  /** Set by the queue when the job has to wait: the caller's async context. */
  scope: AsyncResource | undefined = undefined
  /** Whether the job waits in its queue (the queue's flag). */
  waiting = false
  /** Epoch ms when the first attempt started (0 before). */
  startedAt = 0
  /** The `addTask` call's timeout per attempt (ms), or null: the registration's applies. */
  timeoutMs: number | null = null
  /** A flow parent: its children's results by child id (read before it starts), else null. */
  flowResults: ReadonlyMap<string, unknown> | null = null
  /**
   * Its pending record is in the durable store though its function is not persistent (a
   * periodic schedule's slot task): its start, and its claim at shutdown, are then handled as a
   * persistent task's, so a crash mid-run leaves an orphan, not a pending record to run again.
   */
  stored = false
  readonly #runner: JobRunner
  #cancellation: Cancellation | null = null
  /** The queue's callback while the job holds a slot. */
  #onSettled: (() => void) | null = null

  constructor(task: StoredTask, handle: TaskHandle, priority: number, runner: JobRunner) {
    this.task = task
    this.handle = handle
    this.priority = priority
    this.#runner = runner
  }

  /** The task's id. */
  get taskId(): string {
    return this.task.record.task_id
  }

  /** The task's group, or null. */
  get group(): string | null {
    return this.task.record.group ?? null
  }

  /** The cancellation token (created on first use). */
  get cancellation(): Cancellation {
    return (this.#cancellation ??= new Cancellation())
  }

  /** Whether the job was aborted (cancelled or interrupted). */
  get aborted(): boolean {
    return this.#cancellation?.aborted ?? false
  }

  /** Why it was aborted, or null. */
  get abortReason(): TaskAbort | null {
    return this.#cancellation?.reason ?? null
  }

  /** Aborts the job. */
  abort(reason: TaskAbort): void {
    this.cancellation.abort(reason)
  }

  /** Runs the job (called by its queue when a slot is free). */
  start(onSettled: () => void): void {
    this.#onSettled = onSettled
    this.#runner.run(this)
  }

  /** The run is over (every attempt): gives the queue slot back. Later calls do nothing. */
  settled(): void {
    const onSettled = this.#onSettled
    if (onSettled === null) return
    this.#onSettled = null
    onSettled()
  }
}
