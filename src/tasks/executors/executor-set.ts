/**
 * The manager's executors, created on first use so that a manager without thread or process
 * tasks never starts a worker.
 */
import { availableParallelism } from 'node:os'
import type { ExecutorKind } from '../record.js'
import { asyncExecutor } from './async.js'
import { processExecutor } from './process.js'
import { threadExecutor } from './thread.js'
import type { TaskExecutor } from './types.js'

/** Sizes and limits of the executors. */
export interface ExecutorSetOptions {
  maxConcurrentTasks: number | null
  /** Thread pool size; null → the machine's available parallelism. */
  maxSyncThreads: number | null
  /** Process pool size; null → the machine's available parallelism. */
  maxProcessWorkers: number | null
  /** Whether workers must load TypeScript task modules. */
  needsTypeScript: () => boolean
  /** Time a worker may go on with a cancelled call before it is terminated (ms). */
  cancelGraceMs: number
  /** Environment variables process workers inherit; null: all. */
  workerEnv: readonly string[] | null
}

/** Lazily built executors by kind. */
export class ExecutorSet {
  readonly #options: ExecutorSetOptions
  readonly #executors = new Map<ExecutorKind, TaskExecutor>()

  constructor(options: ExecutorSetOptions) {
    this.#options = options
  }

  /** The executor of `kind`, created on first call. */
  get(kind: ExecutorKind): TaskExecutor {
    let executor = this.#executors.get(kind)
    if (executor === undefined) {
      executor = this.#create(kind)
      this.#executors.set(kind, executor)
    }
    return executor
  }

  /** The executor of `kind` if it was ever created. */
  peek(kind: ExecutorKind): TaskExecutor | undefined {
    return this.#executors.get(kind)
  }

  #create(kind: ExecutorKind): TaskExecutor {
    const options = this.#options
    switch (kind) {
      case 'async':
        return asyncExecutor({ maxConcurrentTasks: options.maxConcurrentTasks })
      case 'thread':
        return threadExecutor({
          size: options.maxSyncThreads ?? availableParallelism(),
          needsTypeScript: options.needsTypeScript,
          cancelGraceMs: options.cancelGraceMs,
        })
      case 'process':
        return processExecutor({
          size: options.maxProcessWorkers ?? availableParallelism(),
          needsTypeScript: options.needsTypeScript,
          cancelGraceMs: options.cancelGraceMs,
          workerEnv: options.workerEnv,
        })
    }
  }
}
