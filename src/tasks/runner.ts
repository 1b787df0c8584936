/**
 * The runner: takes one task from its queue slot to a terminal status.
 *
 * It owns the attempt loop (attempts = retries + 1; before retry n it writes the marker
 * `--- retry <n> ---` and waits delay·backoff^(n-1) seconds on the injected clock), the log sink
 * of the task code, cancellation of running tasks, and the terminal transitions. The
 * pending → running move happens inside `begin()`, which the executor calls at the last moment
 * before running the function, as a compare-and-set: a task cancelled while it waited is never
 * started.
 *
 * Attempts run without `async`/`await` layers: an executor reports an outcome at once or later
 * through the attempt's `settle`, and the end of the run reaches the queue through
 * `job.settled()`. On a busy manager each promise layer would cost more than a no-op task.
 */
import type { Logger } from '../common/logger.js'
import { TaskAbort, type Cancellation } from './cancellation.js'
import type { JobRunner, RunJob } from './jobs.js'
import { plainArgs, taskOwner, type ArgumentCipher } from './encryption.js'
import type { ExecutionOutcome, ExecutionRequest, TaskExecutor } from './executors/types.js'
import type { ObserverDispatcher } from './observers/dispatcher.js'
import {
  formatLogLine,
  retryMarker,
  type ExecutorKind,
  type LogLevel,
  type StoredTask,
} from './record.js'
import type { RecordBook } from './records.js'
import type { TaskDefinition, TaskFunction } from './registry.js'
import type { TaskStatus } from './status.js'
import { toIso, type TaskClock } from './time.js'

/** What the runner needs from the manager. */
export interface RunnerDeps {
  readonly book: RecordBook
  readonly clock: TaskClock
  readonly observers: ObserverDispatcher
  readonly executor: (kind: ExecutorKind) => TaskExecutor
  readonly cipher: ArgumentCipher | null
  /** Emits a lifecycle event for a transition that just happened. */
  readonly lifecycle: (task: StoredTask, previous: TaskStatus | null, attempt: number) => void
  /** Called once a task reached a terminal status through the runner. */
  readonly onTerminal: (job: RunJob) => void
  /**
   * Asked right before a first start: ends the task `expired` when its expiry has passed and
   * returns true (the task must not run).
   */
  readonly expireAtStart?: (job: RunJob) => boolean
  /** Hears of the runner's own faults (never a task's error: that goes to its record). */
  readonly logger: Pick<Logger, 'error'>
}

/** One attempt: the executor's request and the task context of the attempt, in one object. */
class Attempt implements ExecutionRequest {
  readonly #runner: TaskRunner
  readonly job: RunJob
  readonly attempt: number

  constructor(runner: TaskRunner, job: RunJob, attempt: number) {
    this.#runner = runner
    this.job = job
    this.attempt = attempt
  }

  get task_id(): string {
    return this.job.task.record.task_id
  }

  get func_name(): string {
    return this.job.task.record.func_name
  }

  get tags(): Readonly<Record<string, string>> {
    return this.job.task.record.tags
  }

  get signal(): AbortSignal {
    return this.job.cancellation.signal
  }

  get cancellation(): Cancellation {
    return this.job.cancellation
  }

  get definition(): TaskDefinition {
    return this.job.handle.definition
  }

  get fn(): TaskFunction {
    return this.job.handle.fn
  }

  args(): unknown[] {
    return this.#runner.argsOf(this.job.task)
  }

  begin(): boolean {
    return this.#runner.begin(this)
  }

  log(level: LogLevel, message: string, extra: Record<string, unknown>): void {
    this.#runner.log(this, level, message, extra)
  }

  progress(fraction: number, message: string | null): void {
    this.#runner.progress(this, fraction, message)
  }

  settle(outcome: ExecutionOutcome): void {
    this.#runner.settle(this, outcome)
  }
}

/** Drives tasks through their attempts. */
export class TaskRunner implements JobRunner {
  readonly #deps: RunnerDeps
  readonly #onInternalError = (error: unknown): void => {
    this.#deps.logger.error({ err: error }, 'internal error while running a task')
  }

  constructor(deps: RunnerDeps) {
    this.#deps = deps
  }

  /** Runs a job to the end (every attempt), then calls `job.settled()`. Never throws. */
  run(job: RunJob): void {
    this.#attempt(job, 1)
  }

  /**
   * Cancels a running task: aborts its signal and records `cancelled` right after (in a
   * microtask, so the caller still sees `running`).
   */
  cancelRunning(job: RunJob): void {
    job.abort(new TaskAbort('cancel'))
    queueMicrotask(() => this.#aborted(job))
  }

  /** The plaintext arguments of a task (decrypted when encryption is on). */
  argsOf(task: StoredTask): unknown[] {
    return plainArgs(this.#deps.cipher, task, taskOwner(task.record.task_id))
  }

  /** The compare-and-set before an attempt's function runs. */
  begin(attempt: Attempt): boolean {
    const { job } = attempt
    if (attempt.attempt > 1) {
      return job.task.record.status === 'running' && !job.aborted
    }
    if (job.task.record.expires_at !== null && this.#deps.expireAtStart?.(job) === true) {
      return false
    }
    const now = this.#deps.clock.now()
    if (!this.#deps.book.start(job.task, toIso(now))) return false
    job.startedAt = now
    this.#deps.lifecycle(job.task, 'pending', 1)
    return true
  }

  /** The log sink of task code: a record line plus an observer event. */
  log(attempt: Attempt, level: LogLevel, message: string, extra: Record<string, unknown>): void {
    const { book, clock, observers } = this.#deps
    const record = attempt.job.task.record
    const now = clock.now()
    if (!book.appendLog(attempt.job.task, formatLogLine(now, level, message))) return
    if (!observers.active) return
    observers.log({
      type: 'log',
      task_id: record.task_id,
      func_name: record.func_name,
      timestamp: toIso(now),
      level,
      message,
      attempt: attempt.attempt,
      tags: record.tags,
      extra,
    })
  }

  /** The progress sink of task code: the record's `progress` fields (notified coalesced). */
  progress(attempt: Attempt, fraction: number, message: string | null): void {
    this.#deps.book.setProgress(attempt.job.task, fraction, message)
  }

  #attempt(job: RunJob, number: number): void {
    const attempt = new Attempt(this, job, number)
    let outcome: ExecutionOutcome | undefined
    try {
      outcome = this.#deps.executor(job.handle.definition.executor).execute(attempt)
    } catch (error) {
      this.#onInternalError(error)
      job.settled()
      return
    }
    if (outcome !== undefined) this.settle(attempt, outcome)
  }

  /** Takes the outcome of an attempt: ends the run, or goes on with the next attempt. */
  settle(attempt: Attempt, outcome: ExecutionOutcome): void {
    try {
      if (this.#conclude(attempt, outcome)) return
    } catch (error) {
      this.#onInternalError(error)
    }
    attempt.job.settled()
  }

  /** Records what an outcome means; true when a retry carries the run on. */
  #conclude(attempt: Attempt, outcome: ExecutionOutcome): boolean {
    const { job } = attempt
    switch (outcome.kind) {
      case 'skipped':
        if (attempt.attempt > 1) this.#aborted(job)
        return false
      case 'aborted':
        this.#aborted(job)
        return false
      case 'returned':
        this.#finish(job, 'success', attempt.attempt, null)
        return false
      case 'threw': {
        const error = outcome.error
        attempt.log('error', `attempt ${attempt.attempt} failed: ${describe(error)}`, {})
        if (attempt.attempt > job.handle.definition.retries) {
          this.#finish(job, 'failed', attempt.attempt, error)
          return false
        }
        void this.#retry(job, attempt.attempt + 1)
        return true
      }
    }
  }

  /** Waits the backoff, then runs attempt `number` (the run settles through it). */
  async #retry(job: RunJob, number: number): Promise<void> {
    const { book, clock } = this.#deps
    const { task } = job
    try {
      const definition = job.handle.definition
      book.update(task, { retries_used: number - 1 })
      book.appendLog(task, retryMarker(number - 1))
      const waitMs = definition.delay * definition.backoff ** (number - 2) * 1000
      if (waitMs > 0 && !job.aborted) {
        try {
          await clock.sleep(waitMs, job.cancellation.signal)
        } catch {
          // aborted while waiting: handled below
        }
      }
      if (job.aborted) {
        this.#aborted(job)
        job.settled()
        return
      }
    } catch (error) {
      this.#onInternalError(error)
      job.settled()
      return
    }
    this.#attempt(job, number)
  }

  #finish(
    job: RunJob,
    status: 'success' | 'failed' | 'cancelled',
    attempt: number,
    error: Error | null,
  ): void {
    const now = this.#deps.clock.now()
    const startedAt = job.startedAt === 0 ? now : job.startedAt
    const moved = this.#deps.book.end(
      job.task,
      status,
      now,
      Math.max(0, now - startedAt) / 1000,
      error === null ? null : describe(error),
      error === null ? null : (error.stack ?? describe(error)),
    )
    if (!moved) return
    this.#deps.lifecycle(job.task, 'running', attempt)
    this.#deps.onTerminal(job)
  }

  #aborted(job: RunJob): void {
    // An interrupt is recorded by the shutdown itself; only a cancel is the runner's to record.
    if (job.abortReason?.kind === 'cancel') {
      this.#finish(job, 'cancelled', job.task.record.retries_used + 1, null)
    }
  }
}

/** `Name: message`, the form of a record's `error` field. */
export function describe(error: Error): string {
  return `${error.name}: ${error.message}`
}
