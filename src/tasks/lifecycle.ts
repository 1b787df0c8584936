/**
 * Startup and shutdown of a manager (spec "Startup and shutdown order"), and `initApp`, which
 * wires them to an application's `onReady` / `onClose` hooks once per application.
 *
 * Shutdown: queues stop starting tasks; process workers get `processShutdownTimeout` to finish
 * what they run; every task still running becomes `interrupted` (or is saved as `pending` when
 * its task has `requeueOnInterrupt`); thread workers stop; observers close.
 */
import type { ExecutorSet } from './executors/executor-set.js'
import type { ObserverDispatcher } from './observers/dispatcher.js'
import type { QueueSet } from './queues/queue-set.js'
import type { StoredTask } from './record.js'
import type { RecordBook } from './records.js'
import { TaskAbort } from './cancellation.js'
import type { RunJob } from './jobs.js'
import { TERMINAL_STATUSES, type TaskStatus } from './status.js'
import type { TaskStore } from './store.js'
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
}

/** Startup/shutdown state machine of one manager. */
export class ManagerLifecycle {
  readonly #deps: LifecycleDeps
  readonly #apps = new WeakSet<object>()
  #started: Promise<void> | null = null
  #stopped: Promise<void> | null = null

  constructor(deps: LifecycleDeps) {
    this.#deps = deps
  }

  /** Whether shutdown began. */
  get closed(): boolean {
    return this.#stopped !== null
  }

  /** Loads completed history from the store, then opens observers. Idempotent. */
  startup(): Promise<void> {
    this.#started ??= this.#startup()
    return this.#started
  }

  async #startup(): Promise<void> {
    const { book, store } = this.#deps
    // Only finished records: re-running stored pending tasks (requeuePending) belongs to the
    // persistence layer, which must claim each one so exactly one instance runs it.
    for (const task of await store.loadTasks()) {
      if (
        TERMINAL_STATUSES.has(task.record.status) &&
        book.get(task.record.task_id) === undefined
      ) {
        book.add(task)
      }
    }
    await this.#deps.observers.open()
  }

  /** Stops the manager. Idempotent; later calls return the same promise. */
  shutdown(): Promise<void> {
    this.#stopped ??= this.#shutdown()
    return this.#stopped
  }

  /** Registers startup/shutdown on an application's hooks; a second call for the same app does nothing. */
  attach(app: LifecycleHost): void {
    if (this.#apps.has(app)) return
    this.#apps.add(app)
    app.addHook('onReady', () => this.startup())
    app.addHook('onClose', () => this.shutdown())
  }

  async #shutdown(): Promise<void> {
    const deps = this.#deps
    for (const queue of deps.queues.all()) queue.pause()
    await deps.executors.peek('process')?.drain(deps.processShutdownTimeoutMs)
    const toSave: StoredTask[] = []
    for (const job of [...deps.live.values()]) {
      const task = job.task
      if (task.record.status !== 'running') continue
      const requeue = job.handle.definition.requeueOnInterrupt
      const now = deps.clock.now()
      const moved = requeue
        ? deps.book.transition(task, 'running', 'pending', { start_time: null })
        : deps.book.transition(task, 'running', 'interrupted', {
            end_time: toIso(now),
            duration: job.startedAt === 0 ? 0 : Math.max(0, now - job.startedAt) / 1000,
          })
      if (!moved) continue
      deps.lifecycle(task, 'running', task.record.retries_used + 1)
      if (requeue || job.handle.definition.persist) toSave.push(task)
    }
    for (const job of deps.live.values()) job.abort(new TaskAbort('interrupt'))
    deps.live.clear()
    await Promise.all(
      (['async', 'thread', 'process'] as const).map(
        (kind) => deps.executors.peek(kind)?.close() ?? Promise.resolve(),
      ),
    )
    if (toSave.length > 0) await deps.store.saveTasks(toSave)
    await deps.observers.close()
  }
}
