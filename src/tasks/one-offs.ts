/**
 * The manager's one-off schedules: `scheduleOnce(task, { runAt, runKey, ... })` stores an entry
 * (replacing one with the same run key) and arms the {@link OneOffScheduler}, which claims the
 * entry when due so exactly one instance enqueues it with `source: "scheduled"`.
 *
 * Why entries live only in the store: a restart re-arms them from there (the scheduler's first
 * tick refills its window), and 100k future entries never sit in memory.
 */
import { randomUUID } from 'node:crypto'
import { assertTransferable } from './arguments.js'
import { checkDebounce, DEBOUNCE_RUN_KEY_PREFIX, debounceRunKey, isDebounced } from './debounce.js'
import { oneOffOwner, plainArgs, type ArgumentCipher } from './encryption.js'
import { TaskNotRegisteredError, TaskValidationError } from './errors.js'
import { timeoutMs, type AddTaskOptions } from './options.js'
import { memoryOneOffs } from './stores/memory-one-offs.js'
import type { OneOffEntry, OneOffScheduleStore } from './stores/ports.js'
import { newTaskId } from './task-id.js'
import { resolveAddOptions } from './task-input.js'
import type { TaskHandle } from './registry.js'
import { ScheduleOnceUnsupportedError } from './scheduling/errors.js'
import { OneOffScheduler, assertOneOffSupport } from './scheduling/one-off-scheduler.js'
import type { LoopClock, LoopTimer } from './scheduling/timer.js'
import { toEpochMs } from './time.js'

/** Options of `manager.scheduleOnce(task, options)`. */
export interface ScheduleOnceOptions<A extends unknown[] = unknown[]> {
  args?: A
  /** When to run: a Date, epoch milliseconds or an ISO timestamp. */
  runAt: Date | number | string
  /** Names the entry; scheduling again with the same key replaces it. Default: a new UUID. */
  runKey?: string
  tags?: Record<string, string>
  priority?: number | null
  queue?: string | null
  /** The run's group (see `addTask`'s `group`); default: the registration's. */
  group?: string | null
  /** The run's timeout in seconds (see `addTask`'s `timeout`). */
  timeout?: number
  idempotencyKey?: string | null
}

/** What the one-off schedules need of the manager. */
export interface OneOffHost {
  owns(handle: TaskHandle): boolean
  handle(funcName: string): TaskHandle | undefined
  cipher: ArgumentCipher | null
  /**
   * Enqueues the entry's run: plain arguments, or its ciphertext when there is no key. A
   * debounced entry's run takes the entry's `task_id`.
   */
  enqueue(
    handle: TaskHandle,
    payload: { args: unknown[] } | { sealed: string },
    entry: OneOffEntry,
  ): Promise<unknown>
  /** Whether a task with this id was already recorded (a debounced entry fired before a crash). */
  recorded(taskId: string): Promise<boolean>
  /** Throws when `options` could not place a task of `handle`: checked before an entry is stored. */
  checkPlacement(handle: TaskHandle, options: AddTaskOptions): void
  error(message: string, error: unknown): void
}

/**
 * One-off schedules of one manager; without a store that supports them every `scheduleOnce`
 * call throws. Debounced tasks are one-off entries too: in the store when there is one, else in
 * process memory (with a scheduler made at the first debounced task).
 */
export class ManagerOneOffs {
  readonly #store: OneOffScheduleStore | null
  readonly #host: OneOffHost
  readonly #clock: LoopClock
  #scheduler: OneOffScheduler<OneOffEntry> | null
  /** Where debounced entries go: the store, or memory made on first use. */
  #entries: OneOffScheduleStore | null
  /** Builds the scheduler over an entry store (the memory one made on first use). */
  readonly #schedulerOver: (store: OneOffScheduleStore) => OneOffScheduler<OneOffEntry>
  #started = false

  constructor(options: {
    store: OneOffScheduleStore | null
    host: OneOffHost
    owner: string
    clock: LoopClock
    timer?: LoopTimer
    /** The scheduler's horizon window and refill interval (validated by the manager's options). */
    horizonMs?: number
    refillMs?: number
  }) {
    this.#store = options.store?.supportsOneOff === true ? options.store : null
    this.#host = options.host
    this.#clock = options.clock
    this.#entries = this.#store
    this.#schedulerOver = (store) =>
      new OneOffScheduler<OneOffEntry>({
        store,
        owner: options.owner,
        clock: options.clock,
        timer: options.timer,
        horizonMs: options.horizonMs,
        refillMs: options.refillMs,
        fire: (entry) => this.#fire(entry),
        onError: (error, runKey) => options.host.error(`one-off schedule ${runKey} failed`, error),
      })
    this.#scheduler = this.#store === null ? null : this.#schedulerOver(this.#store)
  }

  /** Stores (or replaces) an entry and returns its run key. */
  async schedule(handle: TaskHandle, options: ScheduleOnceOptions): Promise<string> {
    const store = this.#require()
    if (!this.#host.owns(handle)) {
      throw new TaskValidationError('scheduleOnce needs a task handle returned by this manager.')
    }
    if (typeof options !== 'object' || (options as unknown) === null) {
      throw new TaskValidationError('scheduleOnce needs options with runAt.')
    }
    const runAt = toEpochMs(options.runAt, 'runAt')
    const args = options.args ?? []
    if (!Array.isArray(args)) throw new TaskValidationError('scheduleOnce args must be an array.')
    const definition = handle.definition
    if (definition.executor !== 'async') assertTransferable(args, definition.name)
    this.#host.checkPlacement(handle, {
      ...(options.queue == null ? {} : { queue: options.queue }),
      ...(options.group === undefined ? {} : { group: options.group }),
    })
    const cipher = this.#host.cipher
    const runKey = options.runKey ?? randomUUID()
    if (typeof runKey === 'string' && runKey.startsWith(DEBOUNCE_RUN_KEY_PREFIX)) {
      throw new TaskValidationError(
        `Run keys starting with "${DEBOUNCE_RUN_KEY_PREFIX}" are kept for debounced tasks.`,
      )
    }
    const entry: OneOffEntry = {
      run_key: runKey,
      func_name: definition.name,
      run_at: runAt,
      args: cipher === null ? args : null,
      encrypted_args: cipher === null ? null : cipher.encrypt(args, oneOffOwner(runKey)),
      tags: { ...(options.tags ?? {}) },
      priority: options.priority ?? null,
      queue: options.queue ?? null,
      idempotency_key: options.idempotencyKey ?? null,
      created_at: Math.round(this.#clock.now()),
      ...(options.group === undefined ? {} : { group: options.group }),
      timeout: secondsOf(timeoutMs(options.timeout, 'timeout')),
    }
    await store.upsert(entry)
    this.#scheduler?.arm(entry)
    return entry.run_key
  }

  /**
   * Places (or pushes back) the debounced task of `options.debounce` and resolves with its task
   * id: the pending one's when the key has an entry not yet fired, else a new one. Throws
   * `TaskValidationError` (or `TaskArgumentError`) before anything is stored.
   */
  async debounce(handle: TaskHandle, args: unknown[], options: AddTaskOptions): Promise<string> {
    const { key, delay } = checkDebounce(options)
    const definition = handle.definition
    const resolved = resolveAddOptions(definition, options)
    this.#host.checkPlacement(handle, options)
    const runKey = debounceRunKey(definition.name, key)
    if (runKey.length > 255) {
      throw new TaskValidationError(
        'debounce.key is too long for this function name (the run key holds at most 255 characters).',
      )
    }
    if (definition.executor !== 'async') assertTransferable(args, definition.name)
    const cipher = this.#host.cipher
    const now = this.#clock.now()
    const entry: OneOffEntry = {
      run_key: runKey,
      func_name: definition.name,
      run_at: Math.round(now + delay * 1000),
      args: cipher === null ? args : null,
      encrypted_args: cipher === null ? null : cipher.encrypt(args, oneOffOwner(runKey)),
      tags: { ...resolved.tags },
      priority: resolved.priority,
      queue: resolved.queue,
      idempotency_key: null,
      created_at: Math.round(now),
      // The call's other options travel with the entry: the task is created when it fires.
      group: resolved.group,
      timeout: secondsOf(resolved.timeoutMs),
      expires_at:
        resolved.expiry !== null && 'atMs' in resolved.expiry ? resolved.expiry.atMs : null,
      ttl:
        resolved.expiry !== null && 'ttlMs' in resolved.expiry
          ? resolved.expiry.ttlMs / 1000
          : null,
      task_id: newTaskId(),
    }
    const taskId = await this.#debounceStore().debounce(entry)
    this.#scheduler?.arm(entry)
    return taskId
  }

  #debounceStore(): OneOffScheduleStore {
    if (this.#entries !== null) return this.#entries
    const entries = memoryOneOffs()
    this.#entries = entries
    this.#scheduler = this.#schedulerOver(entries)
    if (this.#started) this.#scheduler.start()
    return entries
  }

  /** Cancels the entry; true when one existed. */
  async cancel(runKey: string): Promise<boolean> {
    const store = this.#require()
    this.#scheduler?.disarm(runKey)
    return store.cancel(runKey)
  }

  /** Entries not yet run, earliest first; only those due before `before` when given. */
  async list(before?: Date | number | string): Promise<OneOffEntry[]> {
    const store = this.#require()
    return store.list(before === undefined ? undefined : toEpochMs(before, 'before'))
  }

  /** Starts the scheduler (re-arms stored entries on its first tick). */
  start(): void {
    this.#started = true
    this.#scheduler?.start()
  }

  /** Stops the scheduler and waits for a tick in progress. */
  async stop(): Promise<void> {
    this.#started = false
    await this.#scheduler?.stop()
  }

  /** Runs one tick now (claims and fires due entries). */
  tick(): Promise<void> {
    return this.#scheduler?.tick() ?? Promise.resolve()
  }

  #require(): OneOffScheduleStore {
    if (this.#store === null) {
      assertOneOffSupport(null)
      throw new ScheduleOnceUnsupportedError('scheduleOnce needs a durable task store.')
    }
    return this.#store
  }

  async #fire(entry: OneOffEntry): Promise<void> {
    const handle = this.#host.handle(entry.func_name)
    if (handle === undefined) {
      // Not completed: the entry stays for an instance that registers the function.
      throw new TaskNotRegisteredError(
        `One-off ${entry.run_key}: task function ${JSON.stringify(entry.func_name)} is not registered here.`,
      )
    }
    // A debounced entry fired by an instance that died before marking it done: its task exists.
    if (isDebounced(entry) && (await this.#host.recorded(entry.task_id as string))) return
    const cipher = this.#host.cipher
    // Without the key the run is still recorded, carrying the ciphertext: its attempt fails
    // with TaskArgumentError (saying why) instead of running without arguments.
    const payload =
      entry.encrypted_args !== null && cipher === null
        ? { sealed: entry.encrypted_args }
        : { args: plainArgs(cipher, entry, oneOffOwner(entry.run_key)) }
    await this.#host.enqueue(handle, payload, entry)
  }
}

/** Milliseconds as seconds, null kept. */
function secondsOf(ms: number | null): number | null {
  return ms === null ? null : ms / 1000
}
