/**
 * The workers registry: every manager reports itself (host, pid, queues, what it runs) into its
 * store about every 5 seconds, so the task admin can list the instances sharing the store and
 * tell the live ones from the dead.
 *
 * Rules (docs/task-admin.md): an instance is alive while its last heartbeat is at most three
 * heartbeat intervals (15 s) old and it has not shut down; shutdown writes a last heartbeat
 * marked stopped, so it reads dead at once. Dead instances stay listed for an hour, and at most
 * {@link WORKERS_KEPT} rows are kept; older ones are pruned by the live instances.
 *
 * Why a 1 s tick for a 5 s heartbeat: a write happens on the first tick at least 5 s after the
 * previous one, so writes are never closer than 5 s however the timer drifts, and never more
 * than ~6 s apart, well inside the 15 s an instance has before it reads dead.
 */
import { hostname } from 'node:os'
import { packageVersion } from '../common/package-version.js'
import type { StoredWorker, TaskWorkerStore, WorkerTask } from './stores/ports.js'
import { MAX_WORKER_TASKS } from './stores/ports.js'
import { systemLoopTimer, type LoopClock, type LoopTimer } from './scheduling/timer.js'

/** The least time between two heartbeat writes of one instance (ms). */
export const HEARTBEAT_MS = 5000
/** How often the loop checks whether a heartbeat is due (ms). */
const TICK_MS = 1000
/** Heartbeats an instance may miss before it reads dead. */
const ALIVE_HEARTBEATS = 3
/** How long a dead instance stays listed (ms). */
const DEAD_KEPT_MS = 60 * 60 * 1000
/** Most instances kept (and listed); the least recently seen go first. */
const WORKERS_KEPT = 200
/** Heartbeats between two prunes of the registry (about a minute). */
const PRUNE_EVERY = 12

/** A worker as the task admin lists it: the stored heartbeat plus whether it is alive. */
export interface WorkerInfo extends StoredWorker {
  alive: boolean
}

/** Whether `worker` reads alive at `now`: not stopped, seen within three heartbeats. */
export function isAlive(worker: StoredWorker, now: number): boolean {
  return !worker.stopped && now - worker.last_seen <= ALIVE_HEARTBEATS * HEARTBEAT_MS
}

let cachedVersion: string | undefined
/** The package version, read once (a manager reports it with every heartbeat). */
function version(): string {
  if (cachedVersion === undefined) {
    try {
      cachedVersion = packageVersion()
    } catch {
      cachedVersion = 'unknown'
    }
  }
  return cachedVersion
}

/** What the heartbeat reports about its manager, read at each beat. */
export interface WorkerSource {
  /** Its queue names. */
  queues(): string[]
  /** How many tasks run here, and some of them (at most `limit`). */
  running(limit: number): { count: number; tasks: WorkerTask[] }
}

/** Options of {@link WorkerHeartbeat}. */
export interface WorkerHeartbeatOptions {
  /** The instance id (the owner of its claims). */
  id: string
  /** The store's registry; null without a durable store (the instance lists only itself). */
  store: TaskWorkerStore | null
  source: WorkerSource
  clock: LoopClock
  timer?: LoopTimer
  error(message: string, error: unknown): void
}

/** One instance's heartbeat loop, and the list of instances it reads. */
export class WorkerHeartbeat {
  readonly #options: WorkerHeartbeatOptions
  readonly #startedAt: number
  #handle: unknown = null
  #writing: Promise<void> | null = null
  #lastWrite = Number.NEGATIVE_INFINITY
  #writes = 0
  #failing = false
  #running = false

  constructor(options: WorkerHeartbeatOptions) {
    this.#options = options
    this.#startedAt = Math.round(options.clock.now())
  }

  /** The instance id. */
  get id(): string {
    return this.#options.id
  }

  /** Heartbeat writes so far (the shutdown one included). */
  get writes(): number {
    return this.#writes
  }

  /** Writes the first heartbeat and starts the loop (no-op without a store, but listed). */
  start(): void {
    this.#running = true
    if (this.#options.store === null || this.#handle !== null) return
    const timer = this.#options.timer ?? systemLoopTimer
    this.#handle = timer.setInterval(() => void this.beat(), TICK_MS)
    void this.beat()
  }

  /** Stops the loop and writes the last heartbeat, marked stopped. */
  async stop(): Promise<void> {
    const wasRunning = this.#running
    this.#running = false
    if (this.#handle !== null) (this.#options.timer ?? systemLoopTimer).clearInterval(this.#handle)
    this.#handle = null
    await this.#writing
    if (!wasRunning || this.#options.store === null) return
    await this.#write(true)
  }

  /** Writes a heartbeat when one is due (at least {@link HEARTBEAT_MS} after the last). */
  beat(): Promise<void> {
    if (!this.#running || this.#writing !== null) return this.#writing ?? Promise.resolve()
    if (this.#options.clock.now() - this.#lastWrite < HEARTBEAT_MS) return Promise.resolve()
    this.#writing = this.#write(false).finally(() => {
      this.#writing = null
    })
    return this.#writing
  }

  /** This instance's heartbeat as of `now`. */
  snapshot(now: number, stopped = !this.#running): StoredWorker {
    const { source } = this.#options
    // A stopped instance interrupts (or hands back) whatever it was running.
    const running = stopped ? { count: 0, tasks: [] } : source.running(MAX_WORKER_TASKS)
    return {
      id: this.#options.id,
      host: hostname(),
      pid: process.pid,
      started_at: this.#startedAt,
      last_seen: Math.round(now),
      queues: source.queues(),
      running: running.count,
      running_tasks: running.tasks,
      version: version(),
      stopped,
    }
  }

  /**
   * The instances of the store seen within {@link DEAD_KEPT_MS}, most recently seen first (this
   * instance alone without a durable store).
   */
  async list(): Promise<WorkerInfo[]> {
    const now = this.#options.clock.now()
    const store = this.#options.store
    const workers =
      store === null
        ? [this.snapshot(now)]
        : await store.list(Math.round(now - DEAD_KEPT_MS), WORKERS_KEPT)
    return workers.map((worker) => ({ ...worker, alive: isAlive(worker, now) }))
  }

  async #write(stopped: boolean): Promise<void> {
    const store = this.#options.store
    if (store === null) return
    const now = this.#options.clock.now()
    this.#lastWrite = now
    try {
      this.#writes += 1
      await store.heartbeat(this.snapshot(now, stopped))
      if (!stopped && this.#writes % PRUNE_EVERY === 1) {
        await store.prune(Math.round(now - DEAD_KEPT_MS), WORKERS_KEPT)
      }
      this.#failing = false
    } catch (error) {
      // Once per outage: a store that is down would otherwise log every 5 s.
      if (!this.#failing) this.#options.error('could not write the worker heartbeat', error)
      this.#failing = true
    }
  }
}
