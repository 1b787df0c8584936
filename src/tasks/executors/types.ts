/**
 * The executor port: one attempt of one task, wherever it runs (event loop, worker thread, child
 * process). The runner owns retries, records and cancellation; an executor only runs a function
 * once and reports what happened, never by throwing or rejecting.
 */
import type { Cancellation } from '../cancellation.js'
import type { ActiveTask } from '../context.js'
import type { ExecutorKind } from '../record.js'
import type { TaskDefinition, TaskFunction } from '../registry.js'

/**
 * One attempt to run. It is also the task context of the attempt (`task_id`, `func_name`,
 * `attempt`, `tags`, `signal`, `log`), so executors install it as the context store as is.
 */
export interface ExecutionRequest extends ActiveTask {
  readonly definition: TaskDefinition
  /** The function itself (used by the async executor; workers load it from `definition.module`). */
  readonly fn: TaskFunction
  /** Aborted when the task is cancelled or interrupted, or the attempt ran past its timeout. */
  readonly cancellation: Cancellation
  /** The plaintext arguments; decrypts them when encryption is on. Call just before the call. */
  args(): unknown[]
  /**
   * Call right before the function starts. Returns false when the task must not start (it was
   * cancelled while it waited); the executor then reports `skipped` without running anything.
   */
  begin(): boolean
  /**
   * Reports the outcome of an attempt whose `execute` returned undefined: called exactly once,
   * possibly before `execute` returned.
   */
  settle(outcome: ExecutionOutcome): void
}

/** What one attempt came to. */
export type ExecutionOutcome =
  | { readonly kind: 'skipped' }
  | { readonly kind: 'returned'; readonly value?: unknown }
  | { readonly kind: 'threw'; readonly error: Error }
  /** The task was aborted before the function settled; whatever it does later is ignored. */
  | { readonly kind: 'aborted' }

/** Runs task attempts. */
export interface TaskExecutor {
  readonly kind: ExecutorKind
  /**
   * Runs one attempt. Returns the outcome when it is known at once (a sync function, a task that
   * must not start), else undefined, and reports it later through `request.settle`: a callback
   * rather than a promise, because every promise layer costs each task a microtask (and, while an
   * AsyncLocalStorage is in use on Node 20, promise-hook calls). Never throws.
   */
  execute(request: ExecutionRequest): ExecutionOutcome | undefined
  /** Waits up to `timeoutMs` for running attempts to end; starts nothing new meanwhile. */
  drain(timeoutMs: number): Promise<void>
  /** Stops the executor and its workers; attempts still running are reported as `aborted`. */
  close(): Promise<void>
}

/** Shared `skipped` outcome. */
export const SKIPPED: ExecutionOutcome = { kind: 'skipped' }
/** Shared `aborted` outcome. */
export const ABORTED: ExecutionOutcome = { kind: 'aborted' }
/** Shared `returned` outcome of a run that returned nothing (undefined). */
export const RETURNED: ExecutionOutcome = { kind: 'returned' }

/** The `returned` outcome of `value` (the shared one for undefined: no allocation). */
export function returned(value: unknown): ExecutionOutcome {
  return value === undefined ? RETURNED : { kind: 'returned', value }
}
