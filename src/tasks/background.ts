/**
 * What a manager runs besides tasks: the durable-store link (write-behind, claims, leases), the
 * periodic and one-off schedulers and retention. Built from the manager's options in one place,
 * started at the end of startup and stopped first at shutdown.
 */
import type { FlowEffects } from './stores/ports.js'
import { randomUUID } from 'node:crypto'
import type { Logger } from '../common/logger.js'
import { DurableLink } from './durable-link.js'
import type { ArgumentCipher } from './encryption.js'
import { TaskValidationError } from './errors.js'
import { ManagerOneOffs } from './one-offs.js'
import { oneOffWindowMs, type AddTaskOptions, type TaskManagerOptions } from './options.js'
import { sqliteStore } from './stores/index.js'
import type { StoredTask } from './record.js'
import type { TaskHandle, TaskRegistry } from './registry.js'
import { RetentionLoop, retentionMs } from './retention.js'
import { ManagerSchedules } from './schedules.js'
import { systemLoopTimer } from './scheduling/timer.js'
import { memoryTaskStore } from './stores/memory.js'
import { isDurableStore, type AnyTaskStore } from './stores/seam.js'
import type { TaskClock } from './time.js'
import { WorkerHeartbeat, type WorkerSource } from './workers.js'

/** What the background services need of the manager. */
export interface BackgroundDeps {
  store: AnyTaskStore
  registry: TaskRegistry
  clock: TaskClock
  logger: Logger
  cipher: ArgumentCipher | null
  /**
   * Enqueues a run (plain arguments, or a ciphertext this manager cannot open), under `taskId`
   * when given (a debounced task's, chosen when it was added).
   */
  enqueue(
    handle: TaskHandle,
    payload: { args: unknown[] } | { sealed: string },
    options: AddTaskOptions,
    taskId?: string,
  ): Promise<string>
  /**
   * Enqueues a run without arguments under `taskId` only if no task with that id exists (in
   * the durable store when there is one); resolves whether this call created it.
   */
  enqueueOnce(handle: TaskHandle, options: AddTaskOptions, taskId: string): Promise<boolean>
  /** Whether a task with this id is recorded (in memory or in the store). */
  recorded(taskId: string): Promise<boolean>
  /** Throws when `options` could not place a task of `handle` (checked before storing one). */
  checkPlacement(handle: TaskHandle, options: AddTaskOptions): void
  /** Dispatches a pending task claimed from the store. */
  adopt(task: StoredTask): void
  /** Cancels the tasks of these ids that run here (requests of other instances). */
  cancelRequested(taskIds: readonly string[]): void
  /** Acts on the effects of a write of flow nodes. */
  flowEffects(effects: FlowEffects): void
  /** Deletes terminal records that ended before the cutoff (retention). */
  deleteBefore(cutoff: number): Promise<number>
  /**
   * Applies what other instances stored (queue configs and pauses, schedule pauses): every
   * maintenance round, and when the change feed announces a change.
   */
  refresh(): Promise<void>
  /** What the worker heartbeat reports (queues, running tasks). */
  worker: WorkerSource
}

/** The background services of one manager. */
export class ManagerBackground {
  /** Write-behind and claims on a durable store; null with the small seam. */
  readonly durable: DurableLink | null
  readonly schedules: ManagerSchedules
  readonly oneOffs: ManagerOneOffs
  /** This instance in the workers registry; its id is the owner of its claims. */
  readonly workers: WorkerHeartbeat
  readonly #retention: RetentionLoop

  constructor(options: TaskManagerOptions, deps: BackgroundDeps) {
    const { registry, clock, logger } = deps
    const error = (message: string, cause: unknown): void => logger.error({ err: cause }, message)
    const lease = leaseMs(options.leaseSeconds)
    const maxAgeMs = retentionMs(options.retentionDays)
    const oneOffWindow = oneOffWindowMs(options.oneOffHorizon, options.oneOffRefillInterval)
    this.durable = isDurableStore(deps.store)
      ? new DurableLink({
          store: deps.store,
          clock,
          leaseMs: lease,
          timer: options.timer,
          sink: {
            funcNames: () => registry.all().map((task) => task.definition.name),
            requeuesOnInterrupt: (name) =>
              registry.get(name)?.definition.requeueOnInterrupt === true,
            dispatch: (task) => deps.adopt(task),
            cancel: (taskIds) => deps.cancelRequested(taskIds),
            flowEffects: (effects) => deps.flowEffects(effects),
            warn: (message) => logger.warn(message),
            error,
            refresh: () => deps.refresh(),
          },
        })
      : null
    const store = this.durable?.store ?? null
    const owner = this.durable?.owner ?? `tasks-${randomUUID()}`
    this.workers = new WorkerHeartbeat({
      id: owner,
      store: store?.workers ?? null,
      source: deps.worker,
      clock,
      ...(options.timer === undefined ? {} : { timer: options.timer }),
      error,
    })
    this.schedules = new ManagerSchedules({
      host: {
        register: (taskOptions, fn) => registry.register(taskOptions, fn),
        enqueue: (handle, source) => deps.enqueue(handle, { args: [] }, { source }),
        enqueueSlot: (handle, slot, taskId) =>
          deps.enqueueOnce(handle, { source: 'scheduled', tags: { slot } }, taskId),
        error,
      },
      store: store?.slots ?? null,
      controls: store,
      owner,
      clock,
      timer: options.timer,
    })
    this.oneOffs = new ManagerOneOffs({
      store: store?.oneOffs ?? null,
      owner,
      clock,
      timer: options.timer,
      ...oneOffWindow,
      host: {
        owns: (handle) => registry.owns(handle),
        handle: (name) => registry.get(name),
        cipher: deps.cipher,
        enqueue: (handle, payload, entry) =>
          deps.enqueue(
            handle,
            payload,
            {
              // A debounced task was added by a caller, not by a schedule.
              source: typeof entry.task_id === 'string' ? 'manual' : 'scheduled',
              tags: entry.tags,
              priority: entry.priority,
              ...(entry.queue === null ? {} : { queue: entry.queue }),
              ...(entry.idempotency_key === null ? {} : { idempotencyKey: entry.idempotency_key }),
              ...(entry.group === undefined ? {} : { group: entry.group }),
              ...(entry.timeout == null ? {} : { timeout: entry.timeout }),
              ...(entry.expires_at == null ? {} : { expiresAt: new Date(entry.expires_at) }),
              ...(entry.ttl == null ? {} : { ttl: entry.ttl }),
            },
            entry.task_id ?? undefined,
          ),
        recorded: (taskId) => deps.recorded(taskId),
        checkPlacement: (handle, options) => deps.checkPlacement(handle, options),
        error,
      },
    })
    this.#retention = new RetentionLoop({
      maxAgeMs,
      deleteBefore: (cutoff) => deps.deleteBefore(cutoff),
      slots: store?.slots ?? null,
      clock,
      timer: options.timer ?? systemLoopTimer,
      error,
    })
  }

  /** Starts the heartbeat, the schedulers and retention (the last step of startup). */
  start(): void {
    this.workers.start()
    this.schedules.start()
    this.oneOffs.start()
    this.#retention.start()
  }

  /** Changes the retention (days; null keeps records forever). */
  setRetentionDays(days: number | null): void {
    this.#retention.setMaxAge(retentionMs(days))
  }

  /**
   * Stops them and waits for ticks in progress (the first step of shutdown); the heartbeat's
   * last write marks this instance stopped.
   */
  async stop(): Promise<void> {
    await Promise.all([
      this.workers.stop(),
      this.schedules.stop(),
      this.oneOffs.stop(),
      this.#retention.stop(),
    ])
  }
}

/** The manager's store: the given seam, a SQLite file for a path, or the in-memory default. */
export function resolveStore(store: AnyTaskStore | string | undefined): AnyTaskStore {
  if (store === undefined) return memoryTaskStore()
  if (typeof store === 'string') {
    if (store === '') throw new TaskValidationError('store path must not be empty.')
    return sqliteStore(store)
  }
  return store
}

/** Validates `leaseSeconds` (default 30, at least 1) and returns milliseconds. */
export function leaseMs(seconds: number | undefined): number {
  const lease = seconds ?? 30
  if (typeof lease !== 'number' || !Number.isFinite(lease) || lease < 1) {
    throw new TaskValidationError('leaseSeconds must be a number of seconds ≥ 1.')
  }
  return lease * 1000
}
