/**
 * A pool of workers (threads or child processes) running one attempt each at a time.
 *
 * Workers start lazily, up to `size`. A job waits in FIFO order until a worker is free; only then
 * does it call `begin()` (the pending → running compare-and-set), so a task cancelled while it
 * waited never reaches a worker. A worker that exits during a job fails that attempt with
 * {@link WorkerCrashedError} and is replaced by a fresh one on demand. Cancelling a job that
 * already runs stops the wait at once; the worker gets `cancelGraceMs` to finish the call (its
 * result is dropped) and is reused, or is terminated after it — a call that never returns must
 * not hold a worker forever — and a fresh one takes its place on demand.
 */
import { WorkerCrashedError } from '../errors.js'
import { deserializeError, type RunMessage, type WorkerMessage } from './protocol.js'
import {
  ABORTED,
  returned,
  SKIPPED,
  type ExecutionOutcome,
  type ExecutionRequest,
  type TaskExecutor,
} from './types.js'

/** One worker as the pool sees it, whatever its runtime. */
export interface WorkerPort {
  send(message: RunMessage): void
  onMessage(listener: (message: WorkerMessage) => void): void
  /** Called once when the worker is gone, with a description (exit code, signal, error). */
  onExit(listener: (detail: string) => void): void
  /** Stops the worker; resolves when it is gone. */
  terminate(): Promise<void>
  /**
   * Whether the worker keeps the parent's event loop alive: busy workers do (a script awaiting a
   * thread task must not exit early), idle ones do not (an idle pool never holds a process open).
   */
  keepAlive(busy: boolean): void
}

/**
 * The executor of a pool of `size` workers started by `spawn` (the thread and process
 * executors differ only in how a worker is started and spoken to).
 */
export function pooledExecutor(
  kind: 'thread' | 'process',
  size: number,
  spawn: () => WorkerPort,
  cancelGraceMs = DEFAULT_CANCEL_GRACE_MS,
): TaskExecutor {
  const pool = new WorkerPool({ size, label: kind, spawn, cancelGraceMs })
  return {
    kind,
    execute: (request) => {
      void pool.run(request).then((outcome) => request.settle(outcome))
      return undefined
    },
    drain: (timeoutMs) => pool.drain(timeoutMs),
    close: () => pool.close(),
  }
}

/**
 * The one-shot exit report of a worker: the first of its error/exit events is reported to the
 * listener the pool installs with `onExit`; later ones are ignored.
 */
export function exitReport(): {
  report: (detail: string) => void
  onExit: (listener: (detail: string) => void) => void
  readonly exited: boolean
} {
  let listener: ((detail: string) => void) | null = null
  let exited = false
  return {
    report: (detail) => {
      if (exited) return
      exited = true
      listener?.(detail)
    },
    onExit: (next) => {
      listener = next
    },
    get exited() {
      return exited
    },
  }
}

/** How long a worker may go on with a cancelled call before it is terminated (default). */
export const DEFAULT_CANCEL_GRACE_MS = 5000

/** Options of a {@link WorkerPool}. */
export interface WorkerPoolOptions {
  /** Time a worker gets to finish a cancelled call before it is terminated (ms). */
  cancelGraceMs?: number
  /** Most workers alive at once. */
  size: number
  /** Starts a worker. */
  spawn: () => WorkerPort
  /** `thread` or `process`, for messages. */
  label: string
}

interface Job {
  readonly request: ExecutionRequest
  readonly resolve: (outcome: ExecutionOutcome) => void
  settled: boolean
}

interface PoolWorker {
  readonly port: WorkerPort
  job: Job | null
  /** Id of the run message in flight, to match results. */
  runId: number
  gone: boolean
  /** Terminates the worker when its cancelled call outlives the grace period. */
  graceTimer: NodeJS.Timeout | null
}

/** Runs attempts on a bounded set of workers. */
export class WorkerPool {
  readonly #options: WorkerPoolOptions
  readonly #workers = new Set<PoolWorker>()
  readonly #waiting: Job[] = []
  #nextRunId = 1
  #closed = false
  #idleWaiters: (() => void)[] = []

  constructor(options: WorkerPoolOptions) {
    this.#options = options
  }

  /** Runs one attempt on a worker. Never rejects. */
  run(request: ExecutionRequest): Promise<ExecutionOutcome> {
    return new Promise<ExecutionOutcome>((resolve) => {
      const job: Job = { request, resolve, settled: false }
      if (request.cancellation.aborted) {
        resolve(SKIPPED)
        return
      }
      request.cancellation.onAbort(() => this.#abort(job))
      this.#waiting.push(job)
      this.#pump()
    })
  }

  /** Stops starting jobs (waiting ones are skipped) and waits up to `timeoutMs` for busy workers. */
  async drain(timeoutMs: number): Promise<void> {
    this.#closed = true
    for (const job of this.#waiting.splice(0)) this.#settle(job, SKIPPED)
    if (this.#busyCount() === 0 || timeoutMs <= 0) return
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, timeoutMs)
      this.#idleWaiters.push(() => {
        clearTimeout(timer)
        resolve()
      })
    })
  }

  /** Terminates every worker; jobs still running end as `aborted`. */
  async close(): Promise<void> {
    this.#closed = true
    for (const job of this.#waiting.splice(0)) this.#settle(job, SKIPPED)
    const workers = [...this.#workers]
    this.#workers.clear()
    for (const worker of workers) {
      worker.gone = true
      this.#clearGrace(worker)
      if (worker.job !== null) this.#settle(worker.job, ABORTED)
    }
    await Promise.all(workers.map((worker) => worker.port.terminate()))
  }

  #pump(): void {
    while (!this.#closed && this.#waiting.length > 0) {
      let worker = this.#idleWorker()
      if (worker === undefined) {
        if (this.#workers.size >= this.#options.size) return
        worker = this.#spawn()
      }
      const job = this.#waiting.shift() as Job
      if (job.settled) continue
      if (!job.request.begin()) {
        this.#settle(job, SKIPPED)
        continue
      }
      this.#dispatch(worker, job)
    }
  }

  #dispatch(worker: PoolWorker, job: Job): void {
    const request = job.request
    let args: unknown[]
    try {
      args = request.args()
    } catch (error) {
      this.#settle(job, { kind: 'threw', error: error as Error })
      return
    }
    const { task_id, func_name, attempt, tags } = request
    // A flow parent's children's results travel with the run (they are JSON values).
    const childResults = request.childResults?.()
    const definition = request.definition
    worker.job = job
    worker.runId = this.#nextRunId++
    worker.port.keepAlive(true)
    try {
      worker.port.send({
        type: 'run',
        id: worker.runId,
        module: definition.module ?? '',
        name: definition.name,
        exportName: definition.exportName,
        args,
        context: {
          task_id,
          func_name,
          attempt,
          tags,
          ...(childResults === undefined || Object.keys(childResults).length === 0
            ? {}
            : { childResults }),
        },
      })
    } catch (error) {
      worker.job = null
      worker.port.keepAlive(false)
      this.#settle(job, { kind: 'threw', error: error as Error })
    }
  }

  #spawn(): PoolWorker {
    const worker: PoolWorker = {
      port: this.#options.spawn(),
      job: null,
      runId: 0,
      gone: false,
      graceTimer: null,
    }
    this.#workers.add(worker)
    worker.port.onMessage((message) => this.#onMessage(worker, message))
    worker.port.onExit((detail) => this.#onExit(worker, detail))
    return worker
  }

  #onMessage(worker: PoolWorker, message: WorkerMessage): void {
    const job = worker.job
    if (job === null || message.id !== worker.runId) return
    if (message.type === 'log') {
      if (!job.settled) job.request.log(message.level, message.message, message.extra)
      return
    }
    if (message.type === 'progress') {
      if (!job.settled) job.request.progress(message.fraction, message.message)
      return
    }
    worker.job = null
    this.#clearGrace(worker)
    worker.port.keepAlive(false)
    this.#settle(
      job,
      message.ok
        ? returned(message.value)
        : { kind: 'threw', error: deserializeError(message.error) },
    )
    this.#afterJob()
  }

  #onExit(worker: PoolWorker, detail: string): void {
    this.#clearGrace(worker)
    if (worker.gone) return
    worker.gone = true
    this.#workers.delete(worker)
    const job = worker.job
    worker.job = null
    if (job !== null) {
      this.#settle(job, {
        kind: 'threw',
        error: new WorkerCrashedError(
          `The ${this.#options.label} worker running this task exited (${detail}); a fresh worker replaces it.`,
        ),
      })
    }
    this.#afterJob()
  }

  #afterJob(): void {
    if (this.#busyCount() === 0) for (const wake of this.#idleWaiters.splice(0)) wake()
    this.#pump()
  }

  #abort(job: Job): void {
    const index = this.#waiting.indexOf(job)
    if (index >= 0) {
      this.#waiting.splice(index, 1)
      this.#settle(job, SKIPPED)
      return
    }
    this.#settle(job, ABORTED)
    for (const worker of this.#workers) {
      if (worker.job !== job || worker.graceTimer !== null) continue
      worker.graceTimer = setTimeout(
        () => this.#retire(worker, job),
        this.#options.cancelGraceMs ?? DEFAULT_CANCEL_GRACE_MS,
      )
      worker.graceTimer.unref()
    }
  }

  /** Terminates a worker still busy with a cancelled job; a fresh one replaces it on demand. */
  #retire(worker: PoolWorker, job: Job): void {
    worker.graceTimer = null
    if (worker.gone || worker.job !== job) return
    worker.gone = true
    worker.job = null
    this.#workers.delete(worker)
    void worker.port.terminate().catch(() => undefined)
    this.#afterJob()
  }

  #clearGrace(worker: PoolWorker): void {
    if (worker.graceTimer === null) return
    clearTimeout(worker.graceTimer)
    worker.graceTimer = null
  }

  #settle(job: Job, outcome: ExecutionOutcome): void {
    if (job.settled) return
    job.settled = true
    job.resolve(outcome)
  }

  #idleWorker(): PoolWorker | undefined {
    for (const worker of this.#workers) if (worker.job === null && !worker.gone) return worker
    return undefined
  }

  #busyCount(): number {
    let busy = 0
    for (const worker of this.#workers) if (worker.job !== null) busy++
    return busy
  }
}
