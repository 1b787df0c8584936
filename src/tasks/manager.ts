/**
 * `TaskManager`: the public face of the task half. It composes the registry, the record book,
 * the queues, the runner with its executors, the observers, the store seam and the lifecycle;
 * each of those owns its idea, this file only wires them and validates public input.
 *
 * @example
 * const manager = new TaskManager({ queues: { emails: { concurrency: 2, maxSize: 100 } } })
 * const sendEmail = manager.task({ retries: 3, delay: 1, backoff: 2, queue: 'emails' },
 *   async function sendEmail(to: string) { ... })
 * const taskId = await manager.addTask(sendEmail, ['ada@example.com'], { tags: { user: '42' } })
 */
import { randomUUID } from 'node:crypto'
import { assertTransferable } from './arguments.js'
import { ArgumentCipher, plainArgs, taskOwner } from './encryption.js'
import {
  ManagerClosedError,
  QueueFullError,
  TaskNotCancellableError,
  TaskNotFoundError,
  TaskNotRegisteredError,
  TaskNotRetryableError,
  TaskValidationError,
} from './errors.js'
import { ExecutorSet } from './executors/executor-set.js'
import { isTypeScript } from './executors/typescript-loader.js'
import { ManagerLifecycle, type LifecycleHost } from './lifecycle.js'
import { ObserverDispatcher } from './observers/dispatcher.js'
import { QueueSet } from './queues/queue-set.js'
import type { QueueConfig, QueueStats } from './queues/queue.js'
import { copyRecord, type StoredTask, type TaskRecord } from './record.js'
import { RecordBook, type RecordListener } from './records.js'
import {
  cancelGraceMs,
  consoleLogger,
  positiveOrNull,
  shutdownTimeoutMs,
  type AddTaskOptions,
  type TaskManagerLogger,
  type TaskManagerOptions,
  workerEnvNames,
} from './options.js'
import { newStoredTask, resolveAddOptions } from './task-input.js'
import {
  isTaskHandle,
  TaskRegistry,
  type TaskFunction,
  type TaskHandle,
  type TaskOptions,
} from './registry.js'
import { TaskAbort } from './cancellation.js'
import { RunJob } from './jobs.js'
import { describe, TaskRunner } from './runner.js'
import { RETRYABLE_STATUSES, TERMINAL_STATUSES, type TaskStatus } from './status.js'
import type { TaskStore } from './stores/memory.js'
import { seamOf } from './stores/seam.js'
import type { DurableLink } from './durable-link.js'
import { ManagerBackground, resolveStore } from './background.js'
import type { ScheduleInfo, ScheduleOptions } from './schedules.js'
import type { ScheduleOnceOptions } from './one-offs.js'
import type { ScheduleTrigger } from './scheduling/trigger.js'
import type { OneOffEntry } from './stores/ports.js'
import { systemTaskClock, toIso, type TaskClock } from './time.js'

/** Runs and tracks background tasks. */
export class TaskManager {
  readonly #registry = new TaskRegistry()
  readonly #book = new RecordBook()
  readonly #queues: QueueSet
  readonly #executors: ExecutorSet
  readonly #observers: ObserverDispatcher
  readonly #runner: TaskRunner
  readonly #lifecycle: ManagerLifecycle
  readonly #store: TaskStore
  readonly #clock: TaskClock
  readonly #cipher: ArgumentCipher | null
  readonly #logger: TaskManagerLogger
  /** Jobs between addTask and their terminal status, by task id. */
  readonly #live = new Map<string, RunJob>()
  /** Write-behind and claims on a durable store; null with the in-memory seam. */
  readonly #durable: DurableLink | null
  readonly #requeuePending: boolean
  readonly #background: ManagerBackground

  constructor(options: TaskManagerOptions = {}) {
    this.#logger = options.logger ?? consoleLogger
    this.#clock = options.clock ?? systemTaskClock
    const store = resolveStore(options.store)
    this.#store = seamOf(store)
    this.#requeuePending = options.requeuePending === true
    this.#cipher =
      options.encryptionKey === undefined || options.encryptionKey === null
        ? null
        : new ArgumentCipher(options.encryptionKey)
    this.#background = new ManagerBackground(options, {
      store,
      registry: this.#registry,
      book: this.#book,
      clock: this.#clock,
      logger: this.#logger,
      cipher: this.#cipher,
      enqueue: (handle, payload, addOptions) => this.#enqueue(handle, payload, addOptions),
      adopt: (task) => this.#adopt(task),
    })
    this.#durable = this.#background.durable
    this.#queues = new QueueSet({
      queues: options.queues,
      maxSize: options.maxSize,
      warn: (message) => this.#logger.warn(message),
    })
    this.#executors = new ExecutorSet({
      maxConcurrentTasks: positiveOrNull(options.maxConcurrentTasks, 'maxConcurrentTasks'),
      maxSyncThreads: positiveOrNull(options.maxSyncThreads, 'maxSyncThreads'),
      maxProcessWorkers: positiveOrNull(options.maxProcessWorkers, 'maxProcessWorkers'),
      needsTypeScript: () =>
        this.#registry.all().some((task) => isTypeScript(task.definition.module ?? '')),
      cancelGraceMs: cancelGraceMs(options.cancelGracePeriod),
      workerEnv: workerEnvNames(options.workerEnv),
    })
    const processShutdownTimeoutMs = shutdownTimeoutMs(options.processShutdownTimeout)
    this.#observers = new ObserverDispatcher(options.observers ?? [], (error) =>
      this.#logger.error('an observer failed', error),
    )
    const lifecycle = this.#emitLifecycle.bind(this)
    this.#runner = new TaskRunner({
      book: this.#book,
      clock: this.#clock,
      observers: this.#observers,
      executor: (kind) => this.#executors.get(kind),
      cipher: this.#cipher,
      lifecycle,
      onTerminal: (job) => this.#onTerminal(job.task, job.handle),
    })
    this.#lifecycle = new ManagerLifecycle({
      book: this.#book,
      queues: this.#queues,
      executors: this.#executors,
      observers: this.#observers,
      store: this.#store,
      clock: this.#clock,
      processShutdownTimeoutMs,
      lifecycle,
      live: this.#live,
      durable: this.#durable,
      scheduling: this.#background,
      persistent: (job) => this.#isPersistent(job.handle),
    })
    if (this.#durable !== null) {
      const durable = this.#durable
      // A persistent task's start is written too, so a crash mid-run is seen as an orphan.
      this.#book.subscribe((record) => {
        if (record.status !== 'running') return
        const job = this.#live.get(record.task_id)
        if (job !== undefined && this.#isPersistent(job.handle)) void durable.save(job.task)
      })
    }
  }

  /**
   * Registers `fn` as a task and returns its typed handle.
   *
   * @example
   * const resize = manager.task({ executor: 'thread', module: import.meta.url, name: 'resize' }, resizeImage)
   */
  task<A extends unknown[], R>(options: TaskOptions, fn: TaskFunction<A, R>): TaskHandle<A, R> {
    return this.#registry.register(options, fn)
  }

  /**
   * Runs `fn` periodically: `{ every: seconds }` or `{ cron, timezone }` (five fields, default
   * UTC). Each slot fires once across every instance sharing the store; runs are records with
   * `source: "scheduled"` and a `slot` tag. Throws `ScheduleError` for an invalid trigger or a
   * duplicate name (nothing is registered). Returns the task handle.
   *
   * @example
   * manager.schedule({ cron: '0 9 * * 1', timezone: 'Europe/Paris' }, sendReport, { retries: 2 })
   */
  schedule(
    trigger: ScheduleTrigger,
    fn: TaskFunction<[]>,
    options?: ScheduleOptions,
  ): TaskHandle<[]> {
    if (this.#lifecycle.closed) throw new ManagerClosedError('The task manager was shut down.')
    return this.#background.schedules.add(trigger, fn, options)
  }

  /** The periodic schedules with their next slot. */
  listSchedules(): ScheduleInfo[] {
    return this.#background.schedules.list()
  }

  /**
   * Runs `task` once at `runAt` (stored; survives restarts; exactly one instance runs it).
   * Scheduling again with the same `runKey` replaces the entry. Returns the run key. Throws
   * `ScheduleOnceUnsupportedError` without a durable store, `TaskValidationError` for bad input.
   *
   * @example
   * await manager.scheduleOnce(sendReminder, { args: [userId], runAt: tomorrow, runKey: `remind:${userId}` })
   */
  scheduleOnce<A extends unknown[]>(
    task: TaskHandle<A>,
    options: ScheduleOnceOptions<NoInfer<A>>,
  ): Promise<string> {
    if (this.#lifecycle.closed) {
      return Promise.reject(new ManagerClosedError('The task manager was shut down.'))
    }
    return this.#background.oneOffs.schedule(task as unknown as TaskHandle, options)
  }

  /** Cancels a one-off entry by run key; true when one existed. */
  cancelScheduled(runKey: string): Promise<boolean> {
    return this.#background.oneOffs.cancel(runKey)
  }

  /** One-off entries not yet run, earliest first (only those due before `before` when given). */
  listScheduled(options: { before?: Date | number | string } = {}): Promise<OneOffEntry[]> {
    return this.#background.oneOffs.list(options.before)
  }

  /** The handle registered under `name`. */
  getRegisteredTask(name: string): TaskHandle | undefined {
    return this.#registry.get(name)
  }

  /** Every registered task. */
  registeredTasks(): TaskHandle[] {
    return this.#registry.all()
  }

  /**
   * Enqueues a run of `task` with `args` and returns its task_id. With an `idempotencyKey` held
   * by a task that did not fail, returns that task's id and runs nothing.
   *
   * Throws (rejects with) `QueueFullError` when the queue's waiting items reach `max_size` (the
   * record is kept with status `rejected`), `TaskArgumentError` for arguments a thread/process
   * worker or the encryption cannot carry (nothing is stored), `TaskValidationError` for bad
   * options, `ManagerClosedError` after shutdown.
   */
  async addTask<A extends unknown[]>(
    task: TaskHandle<A>,
    args: NoInfer<A>,
    options: AddTaskOptions = {},
  ): Promise<string> {
    if (this.#lifecycle.closed) throw new ManagerClosedError('The task manager was shut down.')
    const handle = task as unknown as TaskHandle
    if (!isTaskHandle(handle) || !this.#registry.owns(handle)) {
      throw new TaskValidationError(
        'addTask needs a task handle returned by this manager’s task().',
      )
    }
    if (!Array.isArray(args)) throw new TaskValidationError('addTask args must be an array.')
    return this.#enqueue(handle, { args }, options)
  }

  /**
   * Enqueues a run of a validated handle. The arguments are plain (encrypted here when a key is
   * set), or `sealed`: a ciphertext that this manager cannot open (no key), carried as is so
   * the attempt fails and says why instead of running without arguments.
   */
  async #enqueue(
    handle: TaskHandle,
    payload: { args: unknown[] } | { sealed: string },
    options: AddTaskOptions,
  ): Promise<string> {
    const definition = handle.definition
    const resolved = resolveAddOptions(definition, options)
    const taskId = randomUUID()
    let args: unknown[] | null = null
    let encrypted: string | null = null
    if ('sealed' in payload) encrypted = payload.sealed
    else {
      if (definition.executor !== 'async') assertTransferable(payload.args, definition.name)
      if (this.#cipher === null) args = payload.args
      else encrypted = this.#cipher.encrypt(payload.args, taskOwner(taskId))
    }
    const queue = this.#queues.resolve(resolved.queue)
    const key = resolved.idempotencyKey
    if (key !== null) {
      const claim = this.#store.claimIdempotencyKey(key, taskId)
      const holder = claim instanceof Promise ? await claim : claim
      if (holder !== null) return holder
    }
    const stored = newStoredTask(
      taskId,
      definition,
      resolved,
      queue.name,
      toIso(this.#clock.now()),
      args,
      encrypted,
    )
    try {
      queue.admit()
    } catch (error) {
      if (error instanceof QueueFullError) {
        stored.record.status = 'rejected'
        stored.record.error = describe(error)
        this.#book.add(stored)
        this.#emitLifecycle(stored, null, 0)
        this.#releaseKey(stored)
      }
      throw error
    }
    this.#book.add(stored)
    const job = new RunJob(stored, handle, resolved.priority ?? 0, this.#runner)
    this.#live.set(taskId, job)
    const written =
      this.#durable !== null && this.#isPersistent(handle) ? this.#durable.enqueue(stored) : null
    queue.offer(job)
    if (written !== null) await written
    return taskId
  }

  /** Dispatches a pending task this instance claimed from the store (startup or takeover). */
  #adopt(task: StoredTask): void {
    const id = task.record.task_id
    const handle = this.#registry.get(task.record.func_name)
    if (handle === undefined || this.#live.has(id) || this.#lifecycle.closed) return
    const existing = this.#book.get(id)
    if (existing !== undefined && existing.record.status !== 'pending') return
    if (existing === undefined) this.#book.add(task)
    const stored = existing ?? task
    const job = new RunJob(stored, handle, stored.record.priority ?? 0, this.#runner)
    this.#live.set(id, job)
    this.#queues.resolve(stored.record.queue).offer(job)
  }

  #isPersistent(handle: TaskHandle): boolean {
    return handle.definition.persist || this.#requeuePending
  }

  /**
   * Cancels a pending task (at once: it will never start) or a running one (asynchronously: the
   * signal is sent and the executor records `cancelled`; the returned record may still say
   * `running`). Throws `TaskNotFoundError` or `TaskNotCancellableError`.
   */
  cancel(taskId: string): TaskRecord {
    const task = this.#book.get(taskId)
    if (task === undefined) throw new TaskNotFoundError(`No task ${JSON.stringify(taskId)}.`)
    const record = task.record
    if (record.status === 'pending') {
      if (
        this.#book.transition(task, 'pending', 'cancelled', {
          end_time: toIso(this.#clock.now()),
        })
      ) {
        this.#queues.get(record.queue)?.remove(taskId)
        const job = this.#live.get(taskId)
        job?.abort(new TaskAbort('cancel'))
        this.#emitLifecycle(task, 'pending', 0)
        this.#onTerminal(task, job?.handle)
      }
      return copyRecord(record)
    }
    if (record.status === 'running') {
      const job = this.#live.get(taskId)
      if (job !== undefined) this.#runner.cancelRunning(job)
      return copyRecord(record)
    }
    throw new TaskNotCancellableError(
      `Task ${taskId} is ${record.status}; only pending or running tasks can be cancelled.`,
      { status: record.status },
    )
  }

  /**
   * Re-enqueues a failed or interrupted task with its original function, arguments, tags,
   * priority and queue; returns the new task_id. The original record is unchanged.
   */
  async retryTask(taskId: string): Promise<string> {
    const task = this.#book.get(taskId)
    if (task === undefined) throw new TaskNotFoundError(`No task ${JSON.stringify(taskId)}.`)
    const record = task.record
    if (!RETRYABLE_STATUSES.has(record.status)) {
      throw new TaskNotRetryableError(
        `Task ${taskId} is ${record.status}; only failed or interrupted tasks can be retried.`,
        { status: record.status },
      )
    }
    const handle = this.#registry.get(record.func_name)
    if (handle === undefined) {
      throw new TaskNotRegisteredError(
        `Task function ${JSON.stringify(record.func_name)} is not registered in this process.`,
      )
    }
    // Decrypted for the old owner; addTask encrypts them again for the new task.
    const args = plainArgs(this.#cipher, task, taskOwner(taskId))
    return this.addTask(handle, args, {
      tags: record.tags,
      priority: record.priority,
      queue: record.queue,
    })
  }

  /** The serialized record of one task (a copy). */
  getTask(taskId: string): TaskRecord | undefined {
    const task = this.#book.get(taskId)
    return task === undefined ? undefined : copyRecord(task.record)
  }

  /** Every record (copies), oldest first. */
  listTasks(): TaskRecord[] {
    const records: TaskRecord[] = []
    for (const task of this.#book.all()) records.push(copyRecord(task.record))
    return records
  }

  /** The stored form of a task (record plus arguments, encrypted when a key is set), a copy. */
  getStoredTask(taskId: string): StoredTask | undefined {
    const task = this.#book.get(taskId)
    return task === undefined ? undefined : structuredClone(task)
  }

  /** Deletes terminal records; pending and running ones are never deleted. Returns how many went. */
  deleteTasks(taskIds: Iterable<string>): number {
    const deletable: string[] = []
    for (const id of taskIds) {
      const status = this.#book.get(id)?.record.status
      if (status !== undefined && TERMINAL_STATUSES.has(status)) deletable.push(id)
    }
    return this.#book.delete(deletable)
  }

  /** Subscribes to record creation and status changes; returns the unsubscribe function. */
  subscribe(listener: RecordListener): () => void {
    return this.#book.subscribe(listener)
  }

  /** Per-queue counts and config. */
  queueStats(): QueueStats[] {
    return this.#queues.stats()
  }

  /**
   * Changes a queue's concurrency and/or max_size live (null = unlimited, undefined = unchanged).
   * Lowering concurrency never stops running tasks; no new one starts until fewer run than the
   * new limit. Throws `QueueNotFoundError` or `TaskValidationError` (and changes nothing).
   */
  updateQueueConfig(name: string, change: Partial<QueueConfig>): QueueConfig {
    return this.#queues.update(name, change)
  }

  /** Startup: opens observers. Idempotent; tasks may be added before it. */
  startup(): Promise<void> {
    return this.#lifecycle.startup()
  }

  /** Shutdown (see lifecycle.ts). Idempotent. */
  shutdown(): Promise<void> {
    return this.#lifecycle.shutdown()
  }

  /** Registers startup/shutdown on the app's `onReady`/`onClose` hooks; safe to repeat. */
  initApp(app: LifecycleHost): void {
    this.#lifecycle.attach(app)
  }

  #onTerminal(task: StoredTask, handle: TaskHandle | undefined): void {
    this.#live.delete(task.record.task_id)
    const status = task.record.status
    if (status === 'failed' || status === 'rejected') this.#releaseKey(task)
    if (handle === undefined || !this.#isPersistent(handle)) return
    if (this.#durable !== null) {
      void this.#durable.save(task)
      return
    }
    this.#storeCall(`could not save task ${task.record.task_id}`, () =>
      this.#store.saveTasks([task]),
    )
  }

  #releaseKey(task: StoredTask): void {
    const key = task.idempotency_key
    if (key === null) return
    this.#storeCall(`could not release idempotency key ${key}`, () =>
      this.#store.releaseIdempotencyKey(key, task.record.task_id),
    )
  }

  /** Calls the store without waiting; a synchronous store (memory) has finished on return. */
  #storeCall(failure: string, call: () => unknown): void {
    try {
      const result = call()
      if (result instanceof Promise) {
        result.catch((error: unknown) => this.#logger.error(failure, error))
      }
    } catch (error) {
      this.#logger.error(failure, error)
    }
  }

  #emitLifecycle(task: StoredTask, previous: TaskStatus | null, attempt: number): void {
    if (!this.#observers.active) return
    const record = task.record
    this.#observers.lifecycle({
      type: 'lifecycle',
      task_id: record.task_id,
      func_name: record.func_name,
      timestamp: toIso(this.#clock.now()),
      status: record.status,
      previous_status: previous,
      attempt,
      tags: record.tags,
      error: record.status === 'failed' ? record.error : null,
      duration:
        TERMINAL_STATUSES.has(record.status) && record.start_time !== null ? record.duration : null,
    })
  }
}
