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
import { LoggerSlot, type Logger, type LoggerLike } from '../common/logger.js'
import { useLoggerOutsideTasks } from './context.js'
import { ArgumentCipher } from './encryption.js'
import { requestCancel } from './cancel-watch.js'
import {
  ManagerClosedError,
  TaskNotCancellableError,
  TaskNotFoundError,
  TaskValidationError,
  toError,
} from './errors.js'
import { ExecutorSet } from './executors/executor-set.js'
import { isTypeScript } from './executors/typescript-loader.js'
import { ManagerLifecycle, type LifecycleHost } from './lifecycle.js'
import { ObserverDispatcher } from './observers/dispatcher.js'
import { QueueSet } from './queues/queue-set.js'
import type { QueueConfig, QueueStats } from './queues/queue.js'
import { copyRecord, type StoredTask, type TaskRecord } from './record.js'
import { RecordBook, type LogListener, type RecordListener, type RecordReader } from './records.js'
import {
  cancelGraceMs,
  checkAddTaskOptionNames,
  checkManagerOptionNames,
  defaultTaskLogger,
  logFileObservers,
  positiveOrNull,
  shutdownTimeoutMs,
  timeoutMs,
  type AddTaskOptions,
  type TaskManagerOptions,
  workerEnvNames,
} from './options.js'
import {
  isTaskHandle,
  TaskRegistry,
  type TaskFunction,
  type TaskHandle,
  type TaskOptions,
} from './registry.js'
import { DEFAULT_FINISHED_IN_MEMORY, TaskIntake, type RetryAnswer } from './intake.js'
import type { RunJob } from './jobs.js'
import type { TaskMetrics } from './metrics-report.js'
import { QueueConfigSync } from './queues/queue-configs.js'
import { ControlRefresh } from './control-refresh.js'
import { TaskRunner } from './runner.js'
import type { TaskStatus } from './status.js'
import type { TaskStore } from './stores/memory.js'
import { GroupTally } from './stores/group-counts.js'
import type { DurableTaskStore, GroupCounts, LiveCount, TaskPage } from './stores/ports.js'
import { isDurableStore, seamOf } from './stores/seam.js'
import { toTaskListQuery, type TaskQuery } from './task-query.js'
import { TaskReads } from './task-reads.js'
import type { DurableLink } from './durable-link.js'
import { leaseMs, ManagerBackground, resolveStore } from './background.js'
import { taskGateContext } from './groups/gate-context.js'
import type { ScheduleInfo, ScheduleOptions } from './schedules.js'
import type { ScheduleOnceOptions } from './one-offs.js'
import type { ScheduleTrigger } from './scheduling/trigger.js'
import type { OneOffEntry, WorkerTask } from './stores/ports.js'
import type { WorkerInfo } from './workers.js'
import { TaskTelemetrySlot } from './telemetry/task-slot.js'
import { systemTaskClock, toEpochMs, type TaskClock } from './time.js'
import { DurableFlows, flowsOf } from './flows/durable.js'
import { DEFAULT_MAX_RESULT_BYTES } from './flows/results.js'
import { chainToFlow, flattenFlow, type ChainStep, type FlowSpec } from './flows/spec.js'

/**
 * The answer for one id of `retryTasks`: the new task's id, or the error that refused the id
 * (the same errors `retryTask` throws).
 */
export type TaskRetryResult =
  { task_id: string; new_task_id: string } | { task_id: string; error: Error }

/** The options of an `addTask` call that passes none (nothing to check). */
const NO_OPTIONS: AddTaskOptions = Object.freeze({})

/** Runs and tracks background tasks. */
export class TaskManager {
  readonly #registry = new TaskRegistry()
  readonly #book: RecordBook
  readonly #queues: QueueSet
  readonly #queueConfigs: QueueConfigSync
  /** Re-reads the stored queue configs and schedule pauses, one read at a time. */
  readonly #controls = new ControlRefresh(async () => {
    await this.#queueConfigs.load()
    await this.#background.schedules.load()
  })
  readonly #executors: ExecutorSet
  readonly #observers: ObserverDispatcher
  readonly #runner: TaskRunner
  readonly #lifecycle: ManagerLifecycle
  readonly #store: TaskStore
  readonly #durableStore: DurableTaskStore | null
  readonly #clock: TaskClock
  readonly #cipher: ArgumentCipher | null
  readonly #logger: LoggerSlot
  readonly #unregisterLogger: () => void
  /** Jobs between addTask and their terminal status, by task id. */
  readonly #live = new Map<string, RunJob>()
  /** Write-behind and claims on a durable store; null with the in-memory seam. */
  readonly #durable: DurableLink | null
  readonly #requeuePending: boolean
  readonly #background: ManagerBackground
  readonly #intake: TaskIntake
  readonly #reads: TaskReads
  readonly #telemetry: TaskTelemetrySlot
  /** Flows' follow-ups on a durable store; null in memory. */
  readonly #flows: DurableFlows | null

  constructor(options: TaskManagerOptions = {}) {
    checkManagerOptionNames(options)
    this.#logger = new LoggerSlot(options.logger, defaultTaskLogger)
    this.#book = new RecordBook(this.#logger)
    // taskLog() outside a managed task writes to the newest open manager's logger.
    this.#unregisterLogger = useLoggerOutsideTasks(this.#logger)
    this.#clock = options.clock ?? systemTaskClock
    const store = resolveStore(options.store)
    this.#store = seamOf(store)
    this.#durableStore = isDurableStore(store) ? store : null
    this.#requeuePending = options.requeuePending === true
    if (this.#requeuePending && this.#durableStore === null) {
      throw new TaskValidationError(
        'requeuePending needs a durable store that can requeue pending tasks (sqliteStore, postgresStore, mysqlStore or redisStore): with the in-memory store they would be lost.',
      )
    }
    this.#cipher =
      options.encryptionKey === undefined || options.encryptionKey === null
        ? null
        : new ArgumentCipher(options.encryptionKey)
    this.#background = new ManagerBackground(options, {
      store,
      registry: this.#registry,
      clock: this.#clock,
      logger: this.#logger,
      cipher: this.#cipher,
      enqueue: (handle, payload, addOptions, taskId) =>
        this.#intake.enqueue(handle, payload, addOptions, taskId),
      enqueueOnce: (handle, options, taskId) => this.#intake.enqueueOnce(handle, options, taskId),
      recorded: async (taskId) => (await this.#reads.get(taskId)) !== undefined,
      checkPlacement: (handle, addOptions) => this.#intake.checkPlacement(handle, addOptions),
      adopt: (task) => this.#intake.adopt(task),
      cancelRequested: (taskIds) => this.#cancelRequested(taskIds),
      flowEffects: (effects) => this.#flows?.effects(effects),
      deleteBefore: (cutoff) => this.#reads.deleteBefore(cutoff),
      refresh: async () => {
        await this.#controls.request()
        await this.#queues.renewHolds()
      },
      worker: {
        queues: () => this.#queues.stats().map((queue) => queue.name),
        running: (limit) => this.#runningTasks(limit),
      },
    })
    this.#durable = this.#background.durable
    const durable = this.#durable
    this.#flows =
      durable === null
        ? null
        : new DurableFlows({
            store: durable.store,
            clock: this.#clock,
            logger: this.#logger,
            cipher: this.#cipher,
            claimSoon: () => durable.claimSoon(),
            cancel: (taskId) => this.cancel(taskId),
          })
    this.#queues = new QueueSet({
      queues: options.queues,
      maxSize: options.maxSize,
      warn: (message) => this.#logger.warn(message),
      gates: taskGateContext(
        this.#durableStore,
        leaseMs(options.leaseSeconds),
        this.#clock,
        this.#logger,
      ),
    })
    this.#queueConfigs = new QueueConfigSync(
      this.#queues,
      this.#durableStore,
      (message) => this.#logger.warn(message),
      () => this.#controls.request(),
    )
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
    this.#observers = new ObserverDispatcher(
      [...(options.observers ?? []), ...logFileObservers(options.logFile)],
      (error) => this.#logger.error({ err: error }, 'an observer failed'),
    )
    const lifecycle = (task: StoredTask, previous: TaskStatus | null, attempt: number): void => {
      this.#telemetry.current?.transition(task, previous, attempt)
      if (this.#observers.active) {
        this.#observers.transition(task.record, previous, attempt, this.#clock.now())
      }
    }
    this.#runner = new TaskRunner({
      book: this.#book,
      clock: this.#clock,
      observers: this.#observers,
      executor: (kind) => this.#executors.get(kind),
      cipher: this.#cipher,
      lifecycle,
      onTerminal: (job) => this.#intake.finished(job.task, job.handle),
      expireAtStart: (job) => this.#intake.expireAtStart(job.task, job.handle),
      logger: this.#logger,
      defaultTimeoutMs: timeoutMs(options.defaultTimeout, 'defaultTimeout'),
      worker: this.#background.workers.id,
      maxResultBytes:
        positiveOrNull(options.maxResultBytes, 'maxResultBytes') ?? DEFAULT_MAX_RESULT_BYTES,
    })
    this.#intake = new TaskIntake({
      registry: this.#registry,
      book: this.#book,
      queues: this.#queues,
      live: this.#live,
      durable: this.#durable,
      seam: this.#store,
      cipher: this.#cipher,
      clock: this.#clock,
      logger: this.#logger,
      runner: this.#runner,
      persistent: (handle) => this.#isPersistent(handle),
      closed: () => this.#lifecycle.closed,
      lifecycle,
      finishedInMemory:
        positiveOrNull(options.finishedInMemory, 'finishedInMemory') ?? DEFAULT_FINISHED_IN_MEMORY,
      traceContext: () => this.#telemetry.current?.capture() ?? null,
      flows: this.#flows,
    })
    this.#reads = new TaskReads({
      book: this.#book,
      live: this.#live,
      persistent: (job) => this.#isPersistentJob(job),
      unwritten: (taskId) => this.#intake.unwritten(taskId),
      durable: this.#durableStore,
      seam: this.#store,
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
      persistent: (job) => this.#isPersistentJob(job),
      loadStoredConfig: () => this.#controls.request(),
    })
    this.#telemetry = new TaskTelemetrySlot(this, options.telemetry)
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

  /** The periodic schedules with their next slot and whether they are paused. */
  listSchedules(): ScheduleInfo[] {
    return this.#background.schedules.list()
  }

  /**
   * Pauses a periodic schedule: no slot fires while it is paused (those that come due are
   * skipped, not caught up on resume); a run in progress is not touched. With a durable store
   * it is stored, every instance stops firing it within a second, and a restart keeps it
   * paused. Rejects with `ScheduleNotFoundError` (nothing changes). Resolves the schedule.
   */
  pauseSchedule(name: string): Promise<ScheduleInfo> {
    return this.#background.schedules.setPaused(name, true)
  }

  /** Resumes a paused schedule (see {@link pauseSchedule}): its next slot fires again. */
  resumeSchedule(name: string): Promise<ScheduleInfo> {
    return this.#background.schedules.setPaused(name, false)
  }

  /**
   * Runs a periodic schedule's task now, outside any slot, with `source: "manual"` (also while
   * the schedule is paused). Rejects with `ScheduleNotFoundError`; resolves the new task id.
   */
  runSchedule(name: string): Promise<string> {
    if (this.#lifecycle.closed) {
      return Promise.reject(new ManagerClosedError('The task manager was shut down.'))
    }
    return this.#background.schedules.runNow(name)
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

  /** Number of one-off entries not yet run (0 without a durable store). */
  countScheduled(): Promise<number> {
    return this.#durableStore?.oneOffs.count() ?? Promise.resolve(0)
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
   * by a task that did not fail, returns that task's id and runs nothing. With `debounce`, the
   * task starts `delay` seconds after the last call of a burst with the same key, with that
   * call's arguments; every call of the burst returns the same id (see docs/tasks.md).
   *
   * Throws (rejects with) `QueueFullError` when the queue's waiting items reach `max_size` (the
   * record is kept with status `rejected`), `TaskArgumentError` for arguments a thread/process
   * worker or the encryption cannot carry (nothing is stored), `TaskValidationError` for bad
   * options, `ManagerClosedError` after shutdown.
   */
  addTask<A extends unknown[]>(
    task: TaskHandle<A>,
    args: NoInfer<A>,
    options: AddTaskOptions = NO_OPTIONS,
  ): Promise<string> {
    // Not `async`: the intake answers with the one promise a task needs (see intake.ts).
    const handle = task as unknown as TaskHandle
    let error: Error | null = null
    if (this.#lifecycle.closed) error = new ManagerClosedError('The task manager was shut down.')
    else if (!isTaskHandle(handle) || !this.#registry.owns(handle)) {
      error = new TaskValidationError(
        'addTask needs a task handle returned by this manager’s task().',
      )
    } else if (!Array.isArray(args)) {
      error = new TaskValidationError('addTask args must be an array.')
    }
    if (error !== null) return Promise.reject(error)
    if (options !== NO_OPTIONS) {
      try {
        checkAddTaskOptionNames(options)
      } catch (invalid) {
        return Promise.reject(toError(invalid))
      }
      if (options.debounce !== undefined) {
        return this.#background.oneOffs.debounce(handle, args, options)
      }
    }
    return this.#intake.enqueue(handle, { args }, options)
  }

  /**
   * Enqueues a flow: a tree of tasks in which a parent runs only after every child succeeded
   * (children run in parallel, each under its own queue's rules) and reads their results with
   * `getTaskContext().childResults()`. Resolves with the root's task id once the whole tree is
   * stored (one transaction on a durable store). A child that fails for good fails its parent
   * with `FLOW_CHILD_FAILED` (the parent never runs), and so on up; retrying the child lets the
   * flow go on. Rejects with `TaskValidationError` for a bad tree (nothing is stored). With the
   * root's `idempotencyKey` held, resolves with the holder's id and stores nothing.
   *
   * @example
   * const report = await manager.flow({ task: buildReport, args: [], children: images.map(
   *   (image) => ({ task: resize, args: [image] })) })
   */
  flow(spec: FlowSpec): Promise<string> {
    return this.#startFlow(spec, new Set())
  }

  /**
   * Enqueues steps that run one after another, each once the previous one succeeded, receiving
   * the previous step's result as its last argument. A flow underneath (each step the one child
   * of the next): resolves with the last step's task id.
   *
   * @example
   * const last = await manager.chain([{ task: fetchPage, args: [url] }, { task: parse, args: [] }])
   */
  chain(steps: readonly ChainStep[]): Promise<string> {
    try {
      const { spec, chained } = chainToFlow(steps)
      return this.#startFlow(spec, chained)
    } catch (error) {
      return Promise.reject(toError(error))
    }
  }

  #startFlow(spec: unknown, chained: ReadonlySet<unknown>): Promise<string> {
    if (this.#lifecycle.closed) {
      return Promise.reject(new ManagerClosedError('The task manager was shut down.'))
    }
    try {
      if (this.#durableStore !== null) flowsOf(this.#durableStore)
      const nodes = flattenFlow(
        spec,
        (handle) => isTaskHandle(handle) && this.#registry.owns(handle),
        chained,
      )
      return this.#intake.enqueueFlow(nodes)
    } catch (error) {
      return Promise.reject(toError(error))
    }
  }

  /** How many tasks run here, and the first `limit` of them (the heartbeat's report). */
  #runningTasks(limit: number): { count: number; tasks: WorkerTask[] } {
    const count = this.#queues.stats().reduce((sum, queue) => sum + queue.running, 0)
    const tasks: WorkerTask[] = []
    const wanted = Math.min(count, limit)
    // Stops at the tasks it names: a long pending backlog is not walked every heartbeat.
    for (const job of this.#live.values()) {
      if (tasks.length >= wanted) break
      const record = job.task.record
      if (record.status === 'running') {
        tasks.push({ task_id: record.task_id, func_name: record.func_name })
      }
    }
    return { count, tasks }
  }

  #isPersistent(handle: TaskHandle): boolean {
    return handle.definition.persist || this.#requeuePending
  }

  /** A job whose records are stored as a persistent task's (its own, or a slot task's). */
  #isPersistentJob(job: RunJob): boolean {
    return job.stored || this.#isPersistent(job.handle)
  }

  /**
   * Cancels a pending task (at once: it will never start) or a running one (asynchronously: the
   * signal is sent and the executor records `cancelled`; the returned record may still say
   * `running`). With a durable store, a task of another instance is cancelled too: the request
   * is recorded in the store, that instance aborts the task within a second, and the stored
   * record is returned (still `pending` or `running`). Rejects with `TaskNotFoundError` or
   * `TaskNotCancellableError`.
   */
  cancel(taskId: string): Promise<TaskRecord> {
    try {
      return Promise.resolve(this.#intake.cancel(taskId))
    } catch (error) {
      if (!(error instanceof TaskNotFoundError) || this.#durableStore === null) {
        return Promise.reject(toError(error))
      }
      return this.#cancelStored(this.#durableStore, taskId)
    }
  }

  /** Cancels a task of the store: a flow parent waiting there at once, else by request. */
  async #cancelStored(store: DurableTaskStore, taskId: string): Promise<TaskRecord> {
    const waiting = (await this.#flows?.cancelWaiting(taskId)) ?? null
    if (waiting !== null) return copyRecord(waiting.record)
    return requestCancel(store, taskId)
  }

  /** Cancels the tasks of these ids that run here: requests read from the store. */
  #cancelRequested(taskIds: readonly string[]): void {
    for (const taskId of taskIds) {
      if (!this.#live.has(taskId)) continue
      try {
        this.#intake.cancel(taskId)
      } catch (error) {
        // Finished in the meantime: the request changes nothing.
        if (!(error instanceof TaskNotCancellableError)) {
          this.#logger.error({ err: error }, `could not cancel task ${taskId}`)
        }
      }
    }
  }

  /**
   * Re-enqueues a failed or interrupted task — of this instance or, with a durable store, of
   * any instance — with its original function, arguments, tags, priority and queue; returns the
   * new task_id. The new record has `source: "retry"` and `retry_of: taskId`; the original gains
   * `retried_as` (its only change). A task is retried once: retrying it again rejects with
   * `TaskAlreadyRetriedError` (retry the newer run instead), also when two retries race on
   * different instances of one store. `known`: the task's record as the caller just read it
   * (a bulk retry's listing), which saves reading it again.
   */
  async retryTask(taskId: string, known?: StoredTask): Promise<string> {
    // A record the caller just listed saves the read (a bulk retry of thousands); a stale one is
    // safe: the retry's claim settles a task retried meanwhile.
    const task = known?.record.task_id === taskId ? known : await this.#reads.get(taskId)
    if (task === undefined) throw new TaskNotFoundError(`No task ${JSON.stringify(taskId)}.`)
    return this.#intake.retry(task)
  }

  /**
   * {@link retryTask} of many tasks: resolves, per id in order, the new task's id or the error
   * that refused that id (nothing changed for it). With a durable store, the retries of up to
   * 500 tasks share one claim in the store (one statement, one script on Redis) and their
   * writes share batches, so retrying thousands takes seconds. `known`: records the caller just
   * read, by id (a bulk retry's listing), which saves reading them again.
   */
  async retryTasks(
    taskIds: readonly string[],
    known?: ReadonlyMap<string, StoredTask>,
  ): Promise<TaskRetryResult[]> {
    const found: StoredTask[] = []
    const missing = new Set<number>()
    const reads = await Promise.all(
      taskIds.map(async (id) => known?.get(id) ?? (await this.#reads.get(id))),
    )
    reads.forEach((task, index) => {
      if (task !== undefined && task.record.task_id === taskIds[index]) found.push(task)
      else missing.add(index)
    })
    const answers = await this.#intake.retryMany(found)
    let next = 0
    return taskIds.map((taskId, index) => {
      if (missing.has(index)) {
        return {
          task_id: taskId,
          error: new TaskNotFoundError(`No task ${JSON.stringify(taskId)}.`),
        }
      }
      const answer = answers[next++] as RetryAnswer
      return 'error' in answer
        ? { task_id: taskId, error: answer.error }
        : { task_id: taskId, new_task_id: answer.newId }
    })
  }

  /**
   * The record of one task (a copy): this process's, or with a durable store the stored one of
   * any instance.
   */
  async getTask(taskId: string): Promise<TaskRecord | undefined> {
    return (await this.#reads.get(taskId))?.record
  }

  /** The record of a task this process holds in memory (no store read), a copy. */
  localTask(taskId: string): TaskRecord | undefined {
    const task = this.#book.get(taskId)
    return task === undefined ? undefined : copyRecord(task.record)
  }

  /**
   * A page of records, newest first (default 50 per page): every instance's with a durable
   * store. Throws `TaskValidationError` for a bad query.
   *
   * @example
   * const { items, total } = await manager.listTasks({ status: 'failed', since: '2026-11-21T00:00:00Z' })
   */
  async listTasks(query: TaskQuery = {}): Promise<TaskPage<TaskRecord>> {
    const page = await this.#reads.list(toTaskListQuery(query))
    return { ...page, items: page.items.map((task) => task.record) }
  }

  /** Like {@link listTasks}, in the stored form (records with their arguments and keys). */
  async listStoredTasks(query: TaskQuery = {}): Promise<TaskPage> {
    return this.#reads.list(toTaskListQuery(query))
  }

  /** The stored form of a task (record plus arguments, encrypted when a key is set), a copy. */
  getStoredTask(taskId: string): Promise<StoredTask | undefined> {
    return this.#reads.get(taskId)
  }

  /**
   * Deletes finished records that ended before `before`, in memory and in the store, with their
   * tags, idempotency keys and metric minutes; pending and running records never go. Resolves
   * how many were deleted.
   */
  deleteHistory(before: Date | number | string): Promise<number> {
    return this.#reads.deleteBefore(toEpochMs(before, 'before'))
  }

  /**
   * Deletes the finished records of these ids, in memory and in the store, with their tags and
   * idempotency keys; pending, running and unknown ids are left alone, and the metrics keep
   * their counts. Resolves how many were deleted.
   */
  deleteTasks(taskIds: readonly string[]): Promise<number> {
    return this.#reads.deleteTerminal(taskIds)
  }

  /**
   * The metrics: counts by status, success rate, average and P95 durations, per function; with
   * `since`, over the minutes from then, with a per-minute series. Every instance's with a
   * durable store.
   *
   * With `since` and `step` (ms, a whole number of minutes), the way a dashboard reads a long
   * range over a large history: the series is per `step` bucket (epoch-aligned, no per-bucket
   * P95) and the P95 figures come from the hourly histograms of the hours holding the range
   * (its start rounded down to the hour); counts and averages stay exact. A SQL store answers
   * it from roll-ups in O(hours of the range) rows.
   */
  async metrics(
    options: { since?: Date | number | string; step?: number } = {},
  ): Promise<TaskMetrics> {
    const since = options.since === undefined ? undefined : toEpochMs(options.since, 'since')
    if (options.step === undefined) return this.#reads.metrics(since)
    const step = options.step
    if (!(Number.isSafeInteger(step) && step > 0 && step % 60_000 === 0)) {
      throw new TaskValidationError('step must be a positive whole number of minutes in ms.')
    }
    if (since === undefined) throw new TaskValidationError('step needs since.')
    return this.#reads.overview(since, step)
  }

  /**
   * Pending and running tasks per function: every instance's with a durable store (one store
   * read), this process's otherwise. The metrics endpoint's queue gauges read it.
   */
  liveCounts(): Promise<LiveCount[]> {
    return this.#reads.liveCounts(this.#clock.now())
  }

  /** Subscribes to record creation and status changes; returns the unsubscribe function. */
  subscribe(listener: RecordListener): () => void {
    return this.#book.subscribe(listener)
  }

  /**
   * Like {@link subscribe}, without the copy: the reader gets the live record and must read what
   * it needs at once, never keep or change it. Meant for metrics, which follow every task.
   */
  readRecords(reader: RecordReader): () => void {
    return this.#book.read(reader)
  }

  /** Subscribes to log lines added to this process's records (called with the task id). */
  subscribeLogs(listener: LogListener): () => void {
    return this.#book.subscribeLogs(listener)
  }

  /** Per-queue counts and config. */
  queueStats(): QueueStats[] {
    return this.#queues.stats()
  }

  /**
   * The waiting and running tasks of a queue per group (ungrouped ones under `group: null`):
   * the `limit` groups with the most waiting tasks and how many groups there are. With a durable
   * store the counts are the store's (every instance's tasks), else this process's. Rejects with
   * `QueueNotFoundError`.
   */
  async queueGroups(name: string, limit = 20): Promise<GroupCounts> {
    const queue = this.#queues.named(name)
    if (this.#durableStore !== null) return this.#durableStore.records.groupCounts(name, limit)
    const tally = new GroupTally()
    const stats = queue.stats()
    const groups = stats.groups ?? [{ group: null, waiting: stats.pending, running: stats.running }]
    for (const group of groups) {
      if (group.waiting > 0 || group.running > 0) {
        tally.addCounts(group.group, group.waiting, group.running)
      }
    }
    return tally.result(limit, false)
  }

  /**
   * Changes a queue's concurrency and/or max_size live (null = unlimited, undefined = unchanged)
   * and, with a durable store, stores it: every instance applies it within a third of the lease
   * (10 s by default), and it survives restarts. Lowering concurrency never stops running tasks;
   * no new one starts until fewer run than the new limit. On a grouped or rate-limited queue,
   * `group_concurrency`, `rate_limit` and `group_rate_limit` change the same way (limit strings
   * such as `'20/second'`; null lifts the limit). Rejects with `QueueNotFoundError` or
   * `TaskValidationError` (and changes nothing).
   */
  updateQueueConfig(name: string, change: Partial<QueueConfig>): Promise<QueueConfig> {
    return this.#queueConfigs.update(name, change)
  }

  /**
   * Pauses a queue: its tasks are still accepted (they wait, `pending`, up to `max_size`) but
   * none starts; running ones finish. With a durable store the pause is stored, every instance
   * stops starting the queue's tasks within a second, and a restart keeps it paused. Rejects
   * with `QueueNotFoundError` (nothing changes). Resolves the queue's stats.
   */
  pauseQueue(name: string): Promise<QueueStats> {
    return this.#queueConfigs.setPaused(name, true)
  }

  /** Resumes a paused queue (see {@link pauseQueue}): its waiting tasks start as slots allow. */
  resumeQueue(name: string): Promise<QueueStats> {
    return this.#queueConfigs.setPaused(name, false)
  }

  /** Changes the retention of finished records (days; null keeps them forever). */
  setRetentionDays(days: number | null): void {
    this.#background.setRetentionDays(days)
  }

  /**
   * The task-manager instances sharing this manager's store, most recently seen first: live
   * ones, and dead ones for an hour after their last heartbeat (with the in-memory store, this
   * instance alone). An instance is alive while it has reported within the last 15 s (three
   * heartbeats) and has not shut down.
   */
  listWorkers(): Promise<WorkerInfo[]> {
    return this.#background.workers.list()
  }

  /** This instance's id in the workers registry (the `worker` of the records it runs). */
  get workerId(): string {
    return this.#background.workers.id
  }

  /** The durable store of this manager, or null (in memory). */
  get durableStore(): DurableTaskStore | null {
    return this.#durableStore
  }

  /** Whether startup has finished and shutdown has not begun (the task admin's readiness). */
  get running(): boolean {
    return this.#lifecycle.running
  }

  /** Startup: opens observers. Idempotent; tasks may be added before it. */
  startup(): Promise<void> {
    return this.#telemetry.ready.then(() => this.#lifecycle.startup())
  }

  /** Shutdown (see lifecycle.ts). Idempotent. */
  shutdown(): Promise<void> {
    this.#unregisterLogger()
    return this.#lifecycle.shutdown().finally(() => this.#telemetry.close())
  }

  /**
   * Where the manager logs: the `logger` option, else the default (JSON lines on stderr) until
   * {@link TaskManager.attachLogger} hands it an app's logger.
   */
  get logger(): Logger {
    return this.#logger
  }

  /**
   * Logs through `logger` from now on when the manager was created without a `logger` option
   * and no logger was attached before; returns whether it was taken. The Fastify plugins call
   * it with a child of the app's logger (`module: 'switchyard.tasks'`).
   */
  attachLogger(logger: LoggerLike): boolean {
    return this.#logger.attach(logger)
  }

  /**
   * Registers startup/shutdown on the app's `onReady`/`onClose` hooks; safe to repeat.
   * `closeManager: false` keeps the manager running when the app closes (its owner then calls
   * `shutdown()`); by default closing the app shuts it down.
   */
  initApp(app: LifecycleHost, options: { closeManager?: boolean } = {}): void {
    this.#lifecycle.attach(app, options.closeManager)
  }
}
