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
import { Cancellation, TaskAbort } from './cancellation.js'
import { TaskTimeoutError } from './errors.js'
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
import { resultText } from './result.js'
import { encodeFlowResult } from './flows/results.js'

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
  /**
   * Hears of the runner's own faults (never a task's error: that goes to its record), and warns
   * of the late outcomes of timed-out attempts it discards.
   */
  readonly logger: Pick<Logger, 'warn' | 'error'>
  /** The manager's `defaultTimeout` (ms), or null: attempts without a timeout run unbounded. */
  readonly defaultTimeoutMs: number | null
  /** This instance's id in the workers registry: the `worker` of the records it starts. */
  readonly worker: string
  /** The largest result a flow child may return (JSON bytes); its parent needs it stored. */
  readonly maxResultBytes: number
}

/**
 * One attempt: the executor's request and the task context of the attempt, in one object.
 *
 * An attempt with a timeout has its own cancellation token, aborted by the job's (cancel,
 * shutdown) and by its deadline: a timeout aborts this attempt only, so a retry starts with a
 * fresh signal. Attempts without a timeout share the job's token and arm no timer.
 */
class Attempt implements ExecutionRequest {
  readonly #runner: TaskRunner
  readonly job: RunJob
  readonly attempt: number
  /** Milliseconds the attempt may run, or null. */
  readonly timeoutMs: number | null
  /** This attempt's own token (only with a timeout). */
  readonly #own: Cancellation | null = null
  #unlink: (() => void) | null = null
  #deadline: NodeJS.Timeout | null = null
  /** Set once the runner took this attempt's outcome (or its timeout); later reports are late. */
  concluded = false

  constructor(runner: TaskRunner, job: RunJob, attempt: number, timeoutMs: number | null) {
    this.#runner = runner
    this.job = job
    this.attempt = attempt
    this.timeoutMs = timeoutMs
    if (timeoutMs === null) return
    const own = new Cancellation()
    this.#own = own
    const parent = job.cancellation
    const reason = parent.reason
    if (reason !== null) own.abort(reason)
    else {
      // A cancelled or interrupted attempt has no deadline left to keep.
      this.#unlink = parent.onAbort(() => {
        this.#disarm()
        own.abort(parent.reason ?? new TaskAbort('cancel'))
      })
    }
  }

  /** Starts the deadline (when the function is about to run). */
  arm(onTimeout: () => void): void {
    if (this.timeoutMs === null || this.#deadline !== null || this.cancellation.aborted) return
    this.#deadline = setTimeout(onTimeout, this.timeoutMs)
  }

  /** Marks the outcome as taken: stops the deadline and the link to the job's token. */
  conclude(): void {
    this.concluded = true
    this.#disarm()
    this.#unlink?.()
    this.#unlink = null
  }

  #disarm(): void {
    if (this.#deadline === null) return
    clearTimeout(this.#deadline)
    this.#deadline = null
  }

  /** Aborts this attempt's own token (a timeout). */
  abortOwn(reason: TaskAbort): void {
    this.#own?.abort(reason)
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
    return this.cancellation.signal
  }

  get cancellation(): Cancellation {
    return this.#own ?? this.job.cancellation
  }

  get definition(): TaskDefinition {
    return this.job.handle.definition
  }

  get fn(): TaskFunction {
    return this.job.handle.fn
  }

  args(): unknown[] {
    return this.#runner.argsFor(this.job)
  }

  childResults(): Record<string, unknown> {
    const results: Record<string, unknown> = {}
    for (const [id, value] of this.job.flowResults ?? []) results[id] = value
    return results
  }

  begin(): boolean {
    return this.#runner.begin(this)
  }

  log(level: LogLevel, message: string, extra: Record<string, unknown>): void {
    // An abandoned (timed-out) attempt no longer writes to the record.
    if (this.concluded && this.#own !== null) return
    this.#runner.log(this, level, message, extra)
  }

  progress(fraction: number, message: string | null): void {
    if (this.concluded && this.#own !== null) return
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

  /**
   * The arguments of a job's run: a chain step's are followed by its one child's result (the
   * previous step's).
   */
  argsFor(job: RunJob): unknown[] {
    const args = this.argsOf(job.task)
    if (job.task.flow_chain !== true) return args
    const [previous] = (job.flowResults ?? new Map<string, unknown>()).values()
    return [...args, previous]
  }

  /** The compare-and-set before an attempt's function runs. */
  begin(attempt: Attempt): boolean {
    const { job } = attempt
    if (attempt.attempt > 1) {
      if (job.task.record.status !== 'running' || job.aborted) return false
      attempt.arm(() => this.#timedOut(attempt))
      return true
    }
    if (job.task.record.expires_at !== null && this.#deps.expireAtStart?.(job) === true) {
      return false
    }
    const now = this.#deps.clock.now()
    if (!this.#deps.book.start(job.task, toIso(now), this.#deps.worker)) return false
    job.startedAt = now
    this.#deps.lifecycle(job.task, 'pending', 1)
    attempt.arm(() => this.#timedOut(attempt))
    return true
  }

  /**
   * The attempt ran past its timeout: its signal aborts, and it fails with TASK_TIMEOUT at once
   * (retries apply), so its queue slot does not wait for code that ignores the signal. Whatever
   * the attempt reports later is discarded.
   */
  #timedOut(attempt: Attempt): void {
    if (attempt.concluded) return
    attempt.conclude()
    attempt.abortOwn(new TaskAbort('timeout'))
    const seconds = (attempt.timeoutMs ?? 0) / 1000
    const error = new TaskTimeoutError(
      `The task timed out after ${String(seconds)} s (TASK_TIMEOUT); attempt ${attempt.attempt} was abandoned.`,
      { timeout: seconds },
    )
    this.#take(attempt, { kind: 'threw', error })
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
    const timeout = job.timeoutMs ?? job.handle.definition.timeoutMs ?? this.#deps.defaultTimeoutMs
    const attempt = new Attempt(this, job, number, timeout)
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
    if (attempt.concluded) {
      this.#late(attempt, outcome)
      return
    }
    attempt.conclude()
    this.#take(attempt, outcome)
  }

  #take(attempt: Attempt, outcome: ExecutionOutcome): void {
    try {
      if (this.#conclude(attempt, outcome)) return
    } catch (error) {
      this.#onInternalError(error)
    }
    attempt.job.settled()
  }

  /**
   * The outcome of an attempt that timed out: discarded, and said so when it is a result or an
   * error of code that ran on. An abort error is the code stopping as asked: nothing to say.
   */
  #late(attempt: Attempt, outcome: ExecutionOutcome): void {
    if (outcome.kind !== 'returned' && outcome.kind !== 'threw') return
    if (outcome.kind === 'threw' && isAbortError(outcome.error)) return
    const record = attempt.job.task.record
    this.#deps.logger.warn(
      {
        task_id: record.task_id,
        func_name: record.func_name,
        attempt: attempt.attempt,
        ...(outcome.kind === 'threw' ? { err: outcome.error } : {}),
      },
      `discarded the late ${outcome.kind === 'threw' ? 'error' : 'result'} of a timed-out task attempt`,
    )
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
        if ((job.task.record.parent_id ?? null) !== null) {
          // A flow child keeps its result in full for its parent, or fails when it is too large.
          try {
            job.task.flow_result = encodeFlowResult(
              outcome.value,
              job.task.record.task_id,
              this.#deps.maxResultBytes,
              this.#deps.cipher,
            )
          } catch (error) {
            this.#finish(job, 'failed', attempt.attempt, error as Error)
            return false
          }
        }
        if (outcome.value !== undefined && job.task.encrypted_args === null) {
          const result = resultText(outcome.value)
          if (result !== null) {
            job.task.result = result.text
            if (result.truncated) job.task.result_truncated = true
          }
        }
        this.#finish(job, 'success', attempt.attempt, null)
        return false
      case 'threw': {
        const error = outcome.error
        this.log(attempt, 'error', `attempt ${attempt.attempt} failed: ${describe(error)}`, {})
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

/** Whether `error` is what code honouring an aborted signal throws (the reason or an AbortError). */
function isAbortError(error: Error): boolean {
  return error instanceof TaskAbort || error.name === 'AbortError'
}

/** `Name: message`, the form of a record's `error` field. */
export function describe(error: Error): string {
  return `${error.name}: ${error.message}`
}
