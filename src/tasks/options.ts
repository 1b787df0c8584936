/**
 * Options of the task manager and of `addTask`, with their validation.
 */
import { stderrLogger, type Logger, type LoggerLike } from '../common/logger.js'
import { unknownOptionsMessage } from '../common/option-names.js'
import type { DebounceOptions } from './debounce.js'
import { TaskValidationError } from './errors.js'
import type { EncryptionKeyInput } from './encryption.js'
import { FileObserver, type FileObserverOptions } from './observers/file.js'
import type { TaskObserver } from './observers/types.js'
import type { QueueOptions } from './queues/queue-set.js'
import type { TaskSource } from './record.js'
import type { AnyTaskStore } from './stores/seam.js'
import type { TaskClock } from './time.js'
import type { LoopTimer } from './scheduling/timer.js'

/**
 * What the manager's `logger` option takes: a pino-compatible logger (pino, Fastify's
 * `app.log`), or any object with at least `warn` and `error` (src/common/logger.ts). The
 * manager reports warnings (unknown queue) and background faults there, errors as `{ err }`.
 */
export type TaskManagerLogger = LoggerLike

/** Options of `new TaskManager(options)`. Durations are seconds. */
export interface TaskManagerOptions {
  /** Named queues: name → `{ concurrency, maxSize }` (null or absent = unlimited). */
  queues?: Record<string, QueueOptions>
  /** Shorthand for the default queue's max_size. */
  maxSize?: number | null
  /** Cap on simultaneous async tasks; null (default) = no cap. */
  maxConcurrentTasks?: number | null
  /** Size of the worker-thread pool; null (default) = available parallelism. */
  maxSyncThreads?: number | null
  /** Size of the child-process pool; null (default) = available parallelism. */
  maxProcessWorkers?: number | null
  /** Seconds process workers get to finish at shutdown before they are killed. Default 10. */
  processShutdownTimeout?: number
  /**
   * Seconds a thread or process worker may go on with the call of a cancelled task before it is
   * terminated and replaced by a fresh one. Default 5.
   */
  cancelGracePeriod?: number
  /**
   * Seconds an attempt of a task may run when neither `addTask` nor the registration gives a
   * `timeout`. Default: none (tasks run as long as they take).
   */
  defaultTimeout?: number | null
  /**
   * Names of the environment variables process workers inherit (an allow-list, e.g.
   * `['PATH', 'NODE_ENV', 'DATABASE_URL']`). Default: all of them.
   */
  workerEnv?: readonly string[] | null
  /** AES-256-GCM key (32 bytes; Buffer, hex or base64) to encrypt task arguments at rest. */
  encryptionKey?: EncryptionKeyInput | null
  /** Log and lifecycle observers. */
  observers?: readonly TaskObserver[]
  /**
   * Shorthand for a {@link FileObserver}: a path (lines `[task_id] [func_name] <timestamp>
   * message`), or the observer's options (`minLevel`, `lifecycle`, rotation).
   */
  logFile?: string | FileObserverOptions | null
  /**
   * Persistence and idempotency: a durable store (`sqliteStore`, `postgresStore`, `mysqlStore`,
   * `redisStore`), a path (→ `sqliteStore(path)`), or the small seam. Default: in memory.
   */
  store?: AnyTaskStore | string
  /** Persist every task (as if each had `persist: true`) so pending work survives a restart. */
  requeuePending?: boolean
  /**
   * Days to keep terminal records (success, failed, cancelled, interrupted, rejected, expired); older ones
   * are pruned at startup and about every 6 hours. Default: kept forever.
   */
  retentionDays?: number | null
  /**
   * Without a durable store: how many finished records the manager keeps in memory (default
   * 100,000); the oldest go first, with their idempotency keys. With a durable store the store
   * keeps every record and memory only the newest 1,000.
   */
  finishedInMemory?: number
  /** Claim lease on a durable store, in seconds (default 30); renewed every third of it. */
  leaseSeconds?: number
  /**
   * Flows: the largest result a child task may return, in bytes of its JSON (default 1 MiB).
   * Its parent needs it, so it is stored in full; a larger one fails the child with
   * `FLOW_RESULT_TOO_LARGE`.
   */
  maxResultBytes?: number
  /**
   * One-off schedules: seconds ahead the scheduler holds in memory, the entries due within it
   * (default 300). Longer: fewer store reads per entry; shorter: a smaller window.
   */
  oneOffHorizon?: number
  /**
   * One-off schedules: seconds between two reads of that window from the store (default half
   * the horizon, 150 with the default). An entry another instance schedules within the horizon
   * is seen at the next read, so this is how late it may fire at worst; at most the horizon,
   * so that every entry is in the window before it is due.
   */
  oneOffRefillInterval?: number
  /**
   * Repeating timer of the background loops (schedulers, lease renewal, retention); tests inject
   * a fake one. Default: Node's, unref'd.
   */
  timer?: LoopTimer
  /** Time source (tests inject a fake one). */
  clock?: TaskClock
  /**
   * Where the manager logs, used as given. Default: warnings and errors as JSON lines on stderr
   * (`module: 'switchyard.tasks'`), until a Fastify plugin the manager is registered with hands
   * it a child of the app's logger.
   */
  logger?: TaskManagerLogger
  /**
   * OpenTelemetry metrics and task run spans (docs/operations.md): on by default when
   * `@opentelemetry/api` can be imported; `false` turns them off.
   */
  telemetry?: boolean
}

/** Per-call options of `addTask`; each overrides the task's registration. */
export interface AddTaskOptions {
  tags?: Record<string, string>
  priority?: number | null
  /** Recorded for the Fastify integration; `addTask` itself always dispatches at once. */
  eager?: boolean
  queue?: string
  /**
   * The task's group (overrides the registration's; null: none). The queue's `groupConcurrency`
   * and `groupRateLimit` apply per group, and its groups are served round-robin. Only on a
   * queue with group or rate options.
   */
  group?: string | null
  idempotencyKey?: string
  /** `manual` (default) or `scheduled` (the scheduler). */
  source?: Exclude<TaskSource, 'retry'>
  /**
   * Debounce: `{ key, delay }` (key per function, delay in seconds > 0). While a task with the
   * key has not started, a call replaces its arguments, moves its start to now + delay and
   * returns its id; otherwise a new task starts at now + delay. Not with `idempotencyKey`.
   */
  debounce?: DebounceOptions
  /** Seconds each attempt may run (> 0); overrides the registration's and the manager's. */
  timeout?: number
  /**
   * The task must start by this instant, or it ends `expired` without running. Applies to the
   * first start only: a started task (retries included) is no longer subject to it.
   */
  expiresAt?: Date
  /** Seconds (> 0) from creation the task has to start: `expiresAt` = creation + `ttl`. */
  ttl?: number
}

/** The manager's logger when none is given: warnings and errors as JSON lines on stderr. */
export function defaultTaskLogger(): Logger {
  return stderrLogger({ bindings: { module: 'switchyard.tasks' } })
}

/** A positive integer or null (unlimited); throws {@link TaskValidationError} otherwise. */
export function positiveOrNull(value: number | null | undefined, field: string): number | null {
  if (value === undefined || value === null) return null
  if (!Number.isInteger(value) || value < 1) {
    throw new TaskValidationError(
      `${field} must be a positive integer or null, got ${String(value)}.`,
    )
  }
  return value
}

/** Validates `processShutdownTimeout` (seconds, default 10) and returns milliseconds. */
export function shutdownTimeoutMs(seconds: number | undefined): number {
  const timeout = seconds ?? 10
  if (typeof timeout !== 'number' || !Number.isFinite(timeout) || timeout < 0) {
    throw new TaskValidationError(
      'processShutdownTimeout must be a non-negative number of seconds.',
    )
  }
  return timeout * 1000
}

/** Validates `cancelGracePeriod` (seconds, default 5) and returns milliseconds. */
export function cancelGraceMs(seconds: number | undefined): number {
  const grace = seconds ?? 5
  if (typeof grace !== 'number' || !Number.isFinite(grace) || grace < 0) {
    throw new TaskValidationError('cancelGracePeriod must be a non-negative number of seconds.')
  }
  return grace * 1000
}

/**
 * Validates a task timeout (seconds: a finite number > 0; null or undefined: none) and returns
 * it in milliseconds. `field` names the option in the message.
 */
export function timeoutMs(seconds: unknown, field: string): number | null {
  if (seconds === undefined || seconds === null) return null
  if (typeof seconds !== 'number' || !Number.isFinite(seconds) || seconds <= 0) {
    throw new TaskValidationError(
      `${field} must be a finite number of seconds greater than 0, got ${shown(seconds)}.`,
    )
  }
  return seconds * 1000
}

/** A refused value as a message shows it: numbers as such, strings quoted, else the type. */
function shown(value: unknown): string {
  if (typeof value === 'number') return String(value)
  if (typeof value === 'string') return JSON.stringify(value)
  return `a ${typeof value}`
}

/** The default of `oneOffHorizon`, in seconds. */
export const DEFAULT_ONE_OFF_HORIZON = 300

/**
 * Validates `oneOffHorizon` and `oneOffRefillInterval` (seconds; both positive, the refill
 * interval at most the horizon, by default half of it) and returns them in milliseconds.
 */
export function oneOffWindowMs(
  horizon: number | undefined,
  refillInterval: number | undefined,
): { horizonMs: number; refillMs: number } {
  const seconds = horizon ?? DEFAULT_ONE_OFF_HORIZON
  if (typeof seconds !== 'number' || !Number.isFinite(seconds) || seconds <= 0) {
    throw new TaskValidationError(
      `oneOffHorizon must be a positive number of seconds, got ${String(horizon)}.`,
    )
  }
  const refill = refillInterval ?? seconds / 2
  if (typeof refill !== 'number' || !Number.isFinite(refill) || refill <= 0) {
    throw new TaskValidationError(
      `oneOffRefillInterval must be a positive number of seconds, got ${String(refillInterval)}.`,
    )
  }
  if (refill > seconds) {
    throw new TaskValidationError(
      `oneOffRefillInterval (${String(refill)} s) must not exceed oneOffHorizon (${String(seconds)} s): an entry due between two refills would be missed until it is late.`,
    )
  }
  return { horizonMs: seconds * 1000, refillMs: refill * 1000 }
}

/** Validates `workerEnv`: null/undefined (every variable) or a list of variable names. */
export function workerEnvNames(names: readonly string[] | null | undefined): string[] | null {
  if (names === undefined || names === null) return null
  const list: unknown = names
  if (
    !Array.isArray(list) ||
    !list.every((name) => typeof name === 'string' && /^[^=\0]+$/.test(name))
  ) {
    throw new TaskValidationError(
      'workerEnv must be a list of environment variable names, e.g. ["PATH", "NODE_ENV"].',
    )
  }
  return [...(list as string[])]
}

/** The observers of the `logFile` shorthand (none when it is not set). */
export function logFileObservers(
  logFile: string | FileObserverOptions | null | undefined,
): TaskObserver[] {
  if (logFile === undefined || logFile === null) return []
  if (typeof logFile === 'string') return [new FileObserver({ path: logFile })]
  if (typeof logFile !== 'object') {
    throw new TaskValidationError('logFile must be a path or FileObserver options.')
  }
  return [new FileObserver(logFile)]
}

/** Every option of `new TaskManager(options)` (the compiler keeps the list complete). */
const MANAGER_OPTION_NAMES: Record<keyof TaskManagerOptions, true> = {
  queues: true,
  maxSize: true,
  maxConcurrentTasks: true,
  maxSyncThreads: true,
  maxProcessWorkers: true,
  processShutdownTimeout: true,
  cancelGracePeriod: true,
  defaultTimeout: true,
  workerEnv: true,
  encryptionKey: true,
  observers: true,
  logFile: true,
  store: true,
  requeuePending: true,
  retentionDays: true,
  finishedInMemory: true,
  leaseSeconds: true,
  maxResultBytes: true,
  oneOffHorizon: true,
  oneOffRefillInterval: true,
  timer: true,
  clock: true,
  logger: true,
  telemetry: true,
}

/** Every option of `addTask(handle, args, options)` (the compiler keeps the list complete). */
const ADD_TASK_OPTION_NAMES: Record<keyof AddTaskOptions, true> = {
  tags: true,
  priority: true,
  eager: true,
  queue: true,
  group: true,
  idempotencyKey: true,
  source: true,
  debounce: true,
  timeout: true,
  expiresAt: true,
  ttl: true,
}

/**
 * Throws `TaskValidationError` for an option name `new TaskManager()` does not know, or a
 * `telemetry` that is not a boolean.
 */
export function checkManagerOptionNames(options: object): void {
  const unknown = unknownOptionsMessage('TaskManager', options, MANAGER_OPTION_NAMES)
  if (unknown !== null) throw new TaskValidationError(unknown)
  const telemetry = (options as { telemetry?: unknown }).telemetry
  if (telemetry !== undefined && typeof telemetry !== 'boolean')
    throw new TaskValidationError(
      `telemetry must be true or false, not ${JSON.stringify(telemetry)}.`,
    )
}

/** Throws `TaskValidationError` for an option name `addTask` does not know. */
export function checkAddTaskOptionNames(options: object): void {
  const unknown = unknownOptionsMessage('addTask', options, ADD_TASK_OPTION_NAMES)
  if (unknown !== null) throw new TaskValidationError(unknown)
}
