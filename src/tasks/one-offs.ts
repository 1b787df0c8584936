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
import { oneOffOwner, plainArgs, type ArgumentCipher } from './encryption.js'
import { TaskNotRegisteredError, TaskValidationError } from './errors.js'
import type { OneOffEntry, OneOffScheduleStore } from './stores/ports.js'
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
  idempotencyKey?: string | null
}

/** What the one-off schedules need of the manager. */
export interface OneOffHost {
  owns(handle: TaskHandle): boolean
  handle(funcName: string): TaskHandle | undefined
  cipher: ArgumentCipher | null
  /** Enqueues the entry's run: plain arguments, or its ciphertext when there is no key. */
  enqueue(
    handle: TaskHandle,
    payload: { args: unknown[] } | { sealed: string },
    entry: OneOffEntry,
  ): Promise<unknown>
  error(message: string, error: unknown): void
}

/** One-off schedules of one manager; without a store that supports them every call throws. */
export class ManagerOneOffs {
  readonly #store: OneOffScheduleStore | null
  readonly #host: OneOffHost
  readonly #clock: LoopClock
  readonly #scheduler: OneOffScheduler<OneOffEntry> | null

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
    this.#scheduler =
      this.#store === null
        ? null
        : new OneOffScheduler<OneOffEntry>({
            store: this.#store,
            owner: options.owner,
            clock: options.clock,
            timer: options.timer,
            horizonMs: options.horizonMs,
            refillMs: options.refillMs,
            fire: (entry) => this.#fire(entry),
            onError: (error, runKey) =>
              options.host.error(`one-off schedule ${runKey} failed`, error),
          })
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
    const cipher = this.#host.cipher
    const runKey = options.runKey ?? randomUUID()
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
    }
    await store.upsert(entry)
    this.#scheduler?.arm(entry)
    return entry.run_key
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
    this.#scheduler?.start()
  }

  /** Stops the scheduler and waits for a tick in progress. */
  async stop(): Promise<void> {
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
