/**
 * Messages between the parent and a thread or process worker. Both runtimes carry them with the
 * structured-clone algorithm (`worker_threads` messages, `child_process` with
 * `serialization: 'advanced'`).
 */
import type { LogLevel } from '../record.js'

/** Parent → worker: run one attempt. */
export interface RunMessage {
  readonly type: 'run'
  readonly id: number
  /** File URL of the module declaring the task. */
  readonly module: string
  readonly name: string
  readonly exportName: string
  readonly args: unknown[]
  readonly context: {
    readonly task_id: string
    readonly func_name: string
    readonly attempt: number
    readonly tags: Readonly<Record<string, string>>
    /** A flow parent's children's results by child id (absent for a task without children). */
    readonly childResults?: Record<string, unknown>
  }
}

/** Worker → parent: a `taskLog` call. */
export interface LogMessage {
  readonly type: 'log'
  readonly id: number
  readonly level: LogLevel
  readonly message: string
  readonly extra: Record<string, unknown>
}

/** Worker → parent: a `taskProgress` call. */
export interface ProgressMessage {
  readonly type: 'progress'
  readonly id: number
  readonly fraction: number
  readonly message: string | null
}

/** An error as it crosses the boundary; `stack` is the worker's stack. */
export interface SerializedError {
  readonly name: string
  readonly message: string
  readonly stack: string | undefined
}

/** Worker → parent: the attempt's outcome. */
export type ResultMessage =
  | { readonly type: 'result'; readonly id: number; readonly ok: true; readonly value: unknown }
  | {
      readonly type: 'result'
      readonly id: number
      readonly ok: false
      readonly error: SerializedError
    }

/** Anything a worker sends. */
export type WorkerMessage = LogMessage | ProgressMessage | ResultMessage

/** Rebuilds an Error from a worker, keeping the worker's stack. */
export function deserializeError(error: SerializedError): Error {
  const rebuilt = new Error(error.message)
  rebuilt.name = error.name
  rebuilt.stack = error.stack ?? `${error.name}: ${error.message}`
  return rebuilt
}
