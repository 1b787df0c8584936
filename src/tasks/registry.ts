/**
 * Task registration: `manager.task(options, fn)` validates the options once, stores a
 * {@link TaskDefinition} and returns a typed {@link TaskHandle} that `addTask` accepts.
 */
import { unknownOptionsMessage } from '../common/option-names.js'
import { pathToFileURL } from 'node:url'
import { validateGroup } from './groups/gating.js'
import { TaskValidationError } from './errors.js'
import type { ExecutorKind } from './record.js'
import { timeoutMs } from './options.js'
import { isTaskWorker, registerWorkerFunction } from './worker-registry.js'

/** A task function: any arguments, any (possibly async) result. */
export type TaskFunction<A extends unknown[] = unknown[], R = unknown> = (...args: A) => R

/** Options of `manager.task(options, fn)`. Durations are seconds. */
export interface TaskOptions {
  /** Registered name (`func_name`); default: the function's name. Unique per manager. */
  name?: string
  /** Extra attempts after a failure; attempts = retries + 1. Default 0. */
  retries?: number
  /** Seconds before the first retry. Default 0. */
  delay?: number
  /** Multiplier of the wait for each further retry: delay, delay·backoff, ... Default 1. */
  backoff?: number
  /** Save the record to the manager's store when it completes. Default false. */
  persist?: boolean
  /** Default priority (any integer; higher runs first; conventional 1–10). Default null (= 0). */
  priority?: number | null
  /** Default for background tasks added during a request: dispatch at once instead of after the response. */
  eager?: boolean
  /** Default queue name. Default: the manager's default queue. */
  queue?: string
  /**
   * Default group: the queue's `groupConcurrency` and `groupRateLimit` apply per group, and its
   * groups are served round-robin. Only on a queue with group or rate options. Default none.
   */
  group?: string | null
  /** Where the task runs. Default `async` (the event loop). */
  executor?: ExecutorKind
  /** At shutdown, save a still-running task as pending (to run again) instead of `interrupted`. */
  requeueOnInterrupt?: boolean
  /**
   * Thread/process tasks only, required: the module that declares the task, usually
   * `import.meta.url`. Workers import it to find the function.
   */
  module?: string | URL
  /**
   * Seconds each attempt may run (> 0). Past it the attempt fails with `TASK_TIMEOUT` (retries
   * apply): async code sees its signal aborted, a thread/process worker is terminated after
   * `cancelGracePeriod`. Default: the manager's `defaultTimeout`, else none.
   */
  timeout?: number
  /** Thread/process tasks: the export to call when the module does not register the task by name. Default: the name. */
  exportName?: string
}

/** Validated, defaulted registration of one task. */
export interface TaskDefinition {
  readonly name: string
  readonly retries: number
  readonly delay: number
  readonly backoff: number
  readonly persist: boolean
  readonly priority: number | null
  readonly eager: boolean
  readonly queue: string | null
  /** The default group, or null. */
  readonly group: string | null
  readonly executor: ExecutorKind
  readonly requeueOnInterrupt: boolean
  /** File URL of the declaring module (thread/process), else null. */
  readonly module: string | null
  readonly exportName: string
  /** Milliseconds each attempt may run, or null (the manager's default applies). */
  readonly timeoutMs: number | null
}

const handleBrand = Symbol('switchyard.taskHandle')

/** A registered task; pass it to `addTask`. `A` types the arguments, `R` the result. */
export interface TaskHandle<A extends unknown[] = unknown[], R = unknown> {
  readonly [handleBrand]: true
  readonly name: string
  readonly definition: TaskDefinition
  readonly fn: TaskFunction<A, R>
}

/** Whether `value` is a handle returned by `manager.task`. */
export function isTaskHandle(value: unknown): value is TaskHandle {
  return typeof value === 'object' && value !== null && handleBrand in value
}

const EXECUTORS: readonly ExecutorKind[] = ['async', 'thread', 'process']

/** The tasks registered with one manager, by name. */
export class TaskRegistry {
  readonly #byName = new Map<string, TaskHandle>()

  /** Validates `options`, registers `fn` and returns its handle. Throws {@link TaskValidationError}. */
  register<A extends unknown[], R>(options: TaskOptions, fn: TaskFunction<A, R>): TaskHandle<A, R> {
    if (typeof fn !== 'function') {
      throw new TaskValidationError('manager.task(options, fn) needs a function as fn.')
    }
    const definition = defineTask(options, fn.name)
    // Inside a worker the module is being imported only to find functions: no uniqueness check.
    if (isTaskWorker()) {
      registerWorkerFunction(definition.name, fn)
    } else if (this.#byName.has(definition.name)) {
      throw new TaskValidationError(
        `A task named ${JSON.stringify(definition.name)} is already registered; give it another name.`,
      )
    }
    const handle: TaskHandle<A, R> = { [handleBrand]: true, name: definition.name, definition, fn }
    this.#byName.set(definition.name, handle as unknown as TaskHandle)
    return handle
  }

  /** The handle registered under `name`. */
  get(name: string): TaskHandle | undefined {
    return this.#byName.get(name)
  }

  /** Whether this exact handle is registered here. */
  owns(handle: TaskHandle): boolean {
    return this.#byName.get(handle.name) === handle
  }

  /** Every registered handle. */
  all(): TaskHandle[] {
    return [...this.#byName.values()]
  }
}

/** Every task option (the compiler keeps the list complete). */
const TASK_OPTION_NAMES: Record<keyof TaskOptions, true> = {
  name: true,
  retries: true,
  delay: true,
  backoff: true,
  persist: true,
  priority: true,
  eager: true,
  queue: true,
  group: true,
  executor: true,
  requeueOnInterrupt: true,
  module: true,
  exportName: true,
  timeout: true,
}

function defineTask(options: TaskOptions, fnName: string): TaskDefinition {
  if (typeof options !== 'object' || (options as TaskOptions | null) === null) {
    throw new TaskValidationError('manager.task(options, fn) needs an options object.')
  }
  const unknown = unknownOptionsMessage('task', options, TASK_OPTION_NAMES)
  if (unknown !== null) throw new TaskValidationError(unknown)
  const name = options.name ?? fnName
  if (typeof name !== 'string' || name.trim() === '') {
    throw new TaskValidationError('A task needs a name: pass { name } or use a named function.')
  }
  const executor = options.executor ?? 'async'
  if (!EXECUTORS.includes(executor)) {
    throw new TaskValidationError(
      `Invalid executor ${JSON.stringify(executor)}: expected one of ${EXECUTORS.join(', ')}.`,
    )
  }
  let module: string | null = null
  if (executor !== 'async') {
    if (options.module === undefined) {
      throw new TaskValidationError(
        `Task ${JSON.stringify(name)} uses the ${executor} executor and needs { module: import.meta.url } so workers can load it.`,
      )
    }
    module = toModuleUrl(options.module, name)
  }
  const priority = options.priority ?? null
  if (priority !== null) assertInteger(priority, 'priority', name)
  if (options.queue !== undefined) assertQueueName(options.queue)
  return {
    name,
    retries: nonNegative(options.retries ?? 0, 'retries', name, true),
    delay: nonNegative(options.delay ?? 0, 'delay', name, false),
    backoff: nonNegative(options.backoff ?? 1, 'backoff', name, false),
    persist: options.persist ?? false,
    priority,
    eager: options.eager ?? false,
    queue: options.queue ?? null,
    group: validateGroup(options.group, `Task ${JSON.stringify(name)}`),
    executor,
    requeueOnInterrupt: options.requeueOnInterrupt ?? false,
    module,
    exportName: options.exportName ?? name,
    timeoutMs: timeoutMs(options.timeout, `Task ${JSON.stringify(name)}: timeout`),
  }
}

function toModuleUrl(module: string | URL, name: string): string {
  if (module instanceof URL) return module.href
  if (typeof module === 'string' && module !== '') {
    if (/^(file|data):/.test(module)) return module
    if (module.startsWith('/')) return pathToFileURL(module).href
  }
  throw new TaskValidationError(
    `Task ${JSON.stringify(name)}: module must be a file URL (import.meta.url) or an absolute path.`,
  )
}

function nonNegative(value: number, field: string, name: string, integer: boolean): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    throw new TaskValidationError(
      `Task ${JSON.stringify(name)}: ${field} must be a non-negative number, got ${String(value)}.`,
    )
  }
  if (integer) assertInteger(value, field, name)
  return value
}

/** Throws unless `value` is an integer. */
export function assertInteger(value: unknown, field: string, name?: string): void {
  if (typeof value !== 'number' || !Number.isInteger(value)) {
    const where = name === undefined ? '' : `Task ${JSON.stringify(name)}: `
    throw new TaskValidationError(`${where}${field} must be an integer, got ${String(value)}.`)
  }
}

/** Throws unless `name` is a usable queue name. */
export function assertQueueName(name: unknown): asserts name is string {
  if (typeof name !== 'string' || name.trim() === '') {
    throw new TaskValidationError(`Invalid queue name ${JSON.stringify(name)}.`)
  }
}
