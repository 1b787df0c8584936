/**
 * Task context and `taskLog`.
 *
 * Task code (and any helper it calls, sync or async) reads its context through
 * `AsyncLocalStorage`, in the parent process as well as inside thread and process workers, where
 * the worker entry installs the same store and forwards log lines to the parent.
 */
import { AsyncLocalStorage } from 'node:async_hooks'
import { logAt, stderrLogger, type Logger, type LoggerLevel } from '../common/logger.js'
import { TaskValidationError } from './errors.js'
import { LOG_LEVELS, type LogLevel } from './record.js'

/** What running task code can learn about itself. Field names are those of the task record (docs/tasks.md). */
export interface TaskContext {
  readonly task_id: string
  readonly func_name: string
  /** 1 for the first attempt, 2 for the first retry, ... */
  readonly attempt: number
  readonly tags: Readonly<Record<string, string>>
  /**
   * Aborted when the task is cancelled or interrupted, or the attempt runs past its `timeout`
   * (the reason is a `TaskAbort` whose `kind` says which). Async tasks should pass it on to the
   * I/O they start (fetch, timers) so that cancellation also stops the work.
   */
  readonly signal: AbortSignal
  /**
   * A flow parent's view of its children: `{<child task id>: result}` of every child that
   * succeeded (all of them, since a parent runs only then); `{}` for a task without children.
   * The same in async, thread and process tasks (the results travel to the worker with the run).
   */
  readonly childResults: () => Record<string, unknown>
}

/**
 * The running attempt as the context store holds it: the context fields plus the log sink. One
 * object per attempt (the runner's attempt itself), so running a task allocates little.
 */
export interface ActiveTask extends Omit<TaskContext, 'childResults'> {
  /** The children's results of a flow parent (absent: none). */
  childResults?(): Record<string, unknown>
  /** Receives the task code's `taskLog` calls. */
  log(level: LogLevel, message: string, extra: Record<string, unknown>): void
  /** Receives the task code's `taskProgress` calls (validated: 0..1, message bounded). */
  progress(fraction: number, message: string | null): void
}

const storage = new AsyncLocalStorage<ActiveTask>()

/** The context of the task whose code is running, or undefined outside a managed task. */
export function getTaskContext(): TaskContext | undefined {
  const active = storage.getStore()
  if (active === undefined) return undefined
  return {
    task_id: active.task_id,
    func_name: active.func_name,
    attempt: active.attempt,
    tags: active.tags,
    get signal() {
      return active.signal
    },
    childResults: () => active.childResults?.() ?? {},
  }
}

/** Options of {@link taskLog}: a level plus any extra fields, which observers get under `extra`. */
export type TaskLogOptions = { level?: LogLevel } & Record<string, unknown>

/**
 * Adds `<timestamp> [<level>] <message>` to the running task's logs and sends a log event to the
 * observers. Outside a managed task (a task function called directly), writes to the logger of
 * the newest task manager not shut down, at the same level (`warning` as `warn`) with the extra
 * fields; with no manager, to the default logger (warnings and errors on stderr).
 *
 * @example
 * taskLog('resized', { level: 'info', width: 640 })
 */
export function taskLog(message: string, options: TaskLogOptions = {}): void {
  const { level = 'info', ...extra } = options
  if (!LOG_LEVELS.includes(level)) {
    throw new TaskValidationError(
      `Invalid log level ${JSON.stringify(level)}: expected one of ${LOG_LEVELS.join(', ')}.`,
    )
  }
  const active = storage.getStore()
  if (active !== undefined) {
    active.log(level, message, extra)
    return
  }
  const logger = [...managerLoggers].at(-1) ?? (fallbackLogger ??= defaultOutsideLogger())
  logAt(logger, LOGGER_LEVEL_OF[level], extra, message)
}

/** The loggers of the task managers not shut down, oldest first. */
const managerLoggers = new Set<Logger>()
let fallbackLogger: Logger | null = null

/**
 * Makes `logger` the one {@link taskLog} writes to outside a managed task, until the returned
 * function is called (a manager's shutdown); the newest registration wins.
 */
export function useLoggerOutsideTasks(logger: Logger): () => void {
  managerLoggers.add(logger)
  return () => managerLoggers.delete(logger)
}

function defaultOutsideLogger(): Logger {
  return stderrLogger({ bindings: { module: 'switchyard.tasks' } })
}

const LOGGER_LEVEL_OF: Readonly<Record<LogLevel, LoggerLevel>> = {
  debug: 'debug',
  info: 'info',
  warning: 'warn',
  error: 'error',
}

/** Longest progress message kept; longer ones are cut (a record must stay small). */
export const MAX_PROGRESS_MESSAGE = 500

/**
 * Reports how far the running task is: `fraction` from 0 to 1 and an optional short message
 * ("resized 40 of 100 images"). The record's `progress` and `progress_message` take the values
 * (the task admin shows them as a progress bar); stream events are coalesced to a few per second
 * per task, so calling it in a tight loop is fine. Works the same in async, thread and process
 * tasks; outside a managed task it does nothing. Throws `TaskValidationError` for a fraction
 * outside 0..1 or a message that is not a string.
 *
 * @example
 * for (const [i, file] of files.entries()) {
 *   await resize(file)
 *   taskProgress((i + 1) / files.length, `resized ${i + 1} of ${files.length}`)
 * }
 */
export function taskProgress(fraction: number, message?: string): void {
  if (typeof fraction !== 'number' || !Number.isFinite(fraction) || fraction < 0 || fraction > 1) {
    throw new TaskValidationError(
      `taskProgress needs a fraction from 0 to 1, got ${JSON.stringify(fraction)}.`,
    )
  }
  if (message !== undefined && typeof message !== 'string') {
    throw new TaskValidationError('taskProgress: the message must be a string.')
  }
  const active = storage.getStore()
  if (active === undefined) return
  active.progress(fraction, message === undefined ? null : message.slice(0, MAX_PROGRESS_MESSAGE))
}

/** Calls `fn(...args)` as the code of a task: `getTaskContext()` and `taskLog()` see `active`. */
export function runInTaskContext<A extends unknown[], T>(
  active: ActiveTask,
  fn: (...args: A) => T,
  ...args: A
): T {
  return storage.run(active, fn, ...args)
}
