/**
 * Startup and shutdown of a manager (docs/tasks.md), and `initApp`, which
 * wires them to an application's `onReady` / `onClose` hooks once per application.
 *
 * Shutdown: schedulers stop; queues stop starting tasks; process workers get `processShutdownTimeout` to finish
 * what they run; every task still running becomes `interrupted` (or is saved as `pending` when
 * its task has `requeueOnInterrupt`); thread workers stop; on a durable store every queued write
 * is flushed, the claims of pending tasks are given up (another instance takes them at once) and
 * the store is closed; observers close.
 */
import type { ExecutorSet } from './executors/executor-set.js'
import type { ObserverDispatcher } from './observers/dispatcher.js'
import type { QueueSet } from './queues/queue-set.js'
import type { StoredTask } from './record.js'
import type { RecordBook } from './records.js'
import { TaskAbort } from './cancellation.js'
import type { RunJob } from './jobs.js'
import { TERMINAL_STATUSES, type TaskStatus } from './status.js'
import type { TaskStore } from './stores/memory.js'
import type { DurableLink } from './durable-link.js'
import { toIso, type TaskClock } from './time.js'

/** The part of an application `initApp` needs (a Fastify instance fits). */
export interface LifecycleHost {
  // Two overloads (not one union signature) so that Fastify's overloaded addHook is assignable.
  addHook(name: 'onReady', hook: () => Promise<void>): unknown
  // eslint-disable-next-line @typescript-eslint/unified-signatures
  addHook(name: 'onClose', hook: () => Promise<void>): unknown
}

/** What startup and shutdown touch. */
export interface LifecycleDeps {
  readonly book: RecordBook
  readonly queues: QueueSet
  readonly executors: ExecutorSet
  readonly observers: ObserverDispatcher
  readonly store: TaskStore
  readonly clock: TaskClock
  readonly processShutdownTimeoutMs: number
  readonly lifecycle: (task: StoredTask, previous: TaskStatus | null, attempt: number) => void
  /** Jobs not yet terminal, by task id. */
  readonly live: Map<string, RunJob>
  /** The durable-store link, when the store is durable (see durable-link.ts). */
  readonly durable: DurableLink | null
  /** Schedulers: started last at startup, stopped first at shutdown. */
  readonly scheduling: { start(): void; stop(): Promise<void> }
  /** Whether a task's records go to the store (`persist`, or the manager's `requeuePending`). */
  readonly persistent: (job: RunJob) => boolean
  /** Applies the queue configs kept in the durable store. */
  readonly loadStoredConfig: () => Promise<void>
}

/** Startup/shutdown state machine of one manager. */
export class ManagerLifecycle {
  readonly #deps: LifecycleDeps
  /** The apps whose hooks are registered, and whether closing the app shuts the manager down. */
  readonly #apps = new WeakMap<object, { close: boolean }>()
  #started: Promise<void> | null = null
  #stopped: Promise<void> | null = null
  #running = false

  constructor(deps: LifecycleDeps) {
    this.#deps = deps
  }

  /** Whether startup finished and shutdown has not begun. */
  get running(): boolean {
    return this.#running && this.#stopped === null
  }

  /** Whether shutdown began. */
  get closed(): boolean {
    return this.#stopped !== null
  }

  /**
   * Initialises a durable store and applies its queue configs (or loads the seam's finished
   * records), claims stored pending work and
   * starts lease renewal, opens observers, then starts the schedulers. Idempotent.
   */
  startup(): Promise<void> {
    this.#started ??= this.#startup()
    return this.#started
  }

  async #startup(): Promise<void> {
    const { book, store, durable } = this.#deps
    if (durable !== null) {
      // The history stays in the store, where every read goes: nothing to load.
      await durable.store.init()
      await this.#deps.loadStoredConfig()
    } else {
      // Only finished records: re-running stored pending tasks (requeuePending) needs a
      // durable store, which claims each one so exactly one instance runs it.
      for (const task of await store.loadTasks()) {
        if (
          TERMINAL_STATUSES.has(task.record.status) &&
          book.get(task.record.task_id) === undefined
        ) {
          book.add(task)
        }
      }
    }
    // Claims pending work (ours after a crash, or of dead instances) and starts lease renewal.
    if (durable !== null) await durable.start()
    await this.#deps.observers.open()
    this.#deps.scheduling.start()
    this.#running = true
  }

  /** Stops the manager. Idempotent; later calls return the same promise. */
  shutdown(): Promise<void> {
    this.#stopped ??= this.#shutdown()
    return this.#stopped
  }

  /**
   * Registers startup/shutdown on an application's hooks, once per app. `close` (when given)
   * says whether closing the app shuts the manager down; the last value given for an app wins
   * (so `closeManager: false` holds whatever else of the app attached the manager first).
   */
  attach(app: LifecycleHost, close?: boolean): void {
    const known = this.#apps.get(app)
    if (known !== undefined) {
      if (close !== undefined) known.close = close
      return
    }
    const wiring = { close: close ?? true }
    this.#apps.set(app, wiring)
    app.addHook('onReady', () => this.startup())
    app.addHook('onClose', async () => {
      if (wiring.close) await this.shutdown()
    })
  }

  async #shutdown(): Promise<void> {
    const deps = this.#deps
    await deps.scheduling.stop()
    for (const queue of deps.queues.all()) queue.pause()
    await deps.executors.peek('process')?.drain(deps.processShutdownTimeoutMs)
    const toSave: StoredTask[] = []
    for (const job of [...deps.live.values()]) {
      const task = job.task
      if (task.record.status !== 'running') continue
      const requeue = job.handle.definition.requeueOnInterrupt
      const now = deps.clock.now()
      // A requeued task has started once: its expiry no longer applies when it runs again.
      const moved = requeue
        ? deps.book.transition(task, 'running', 'pending', { start_time: null, expires_at: null })
        : deps.book.transition(task, 'running', 'interrupted', {
            end_time: toIso(now),
            duration: job.startedAt === 0 ? 0 : Math.max(0, now - job.startedAt) / 1000,
          })
      if (!moved) continue
      deps.lifecycle(task, 'running', task.record.retries_used + 1)
      // With a durable store every finished record is kept (the shared history).
      if (requeue || deps.persistent(job) || deps.durable !== null) toSave.push(task)
    }
    // Pending persistent tasks (and flow tasks, always stored) stay in the store; their claims
    // are given up below.
    const release: string[] = []
    for (const job of deps.live.values()) {
      const stored = deps.persistent(job) || (job.task.flow_id ?? null) !== null
      if (job.task.record.status === 'pending' && stored) {
        release.push(job.task.record.task_id)
      }
    }
    for (const job of deps.live.values()) job.abort(new TaskAbort('interrupt'))
    deps.live.clear()
    await Promise.all(
      (['async', 'thread', 'process'] as const).map(
        (kind) => deps.executors.peek(kind)?.close() ?? Promise.resolve(),
      ),
    )
    if (deps.durable === null) {
      if (toSave.length > 0) await deps.store.saveTasks(toSave)
    } else {
      for (const task of toSave) void deps.durable.save(task)
      for (const task of toSave) {
        if (task.record.status === 'pending') release.push(task.record.task_id)
      }
      await deps.durable.stop(release)
      await deps.store.close()
    }
    await deps.observers.close()
  }
}
