/**
 * The error catalogue of the task half.
 *
 * The task half may not import route control, so it keeps its own small hierarchy with the same
 * shape: every error has a stable `code` and the HTTP status the task admin answers with, and
 * serialises to the shared `{error: {code, message, ...}}` body (the base in `common/errors.ts`).
 */
import { CodedError } from '../common/errors.js'

/** Normalises anything thrown into an Error (re-exported for the task half's modules). */
export { toError } from '../common/errors.js'

/** Base class of every task error: a stable `code`, an HTTP status and optional details. */
export abstract class TaskError extends CodedError {}

/** A bad option, argument or configuration value; nothing was changed. */
export class TaskValidationError extends TaskError {
  readonly code = 'VALIDATION_ERROR'
  readonly statusCode = 400
}

/** `addTask` aimed at a queue whose waiting items already reach its `max_size`. */
export class QueueFullError extends TaskError {
  readonly code = 'QUEUE_FULL'
  readonly statusCode = 429
}

/** Arguments that cannot be serialised for a thread/process executor or for encryption. */
export class TaskArgumentError extends TaskError {
  readonly code = 'TASK_ARGUMENT_ERROR'
  readonly statusCode = 400
}

/** No task record with that id. */
export class TaskNotFoundError extends TaskError {
  readonly code = 'TASK_NOT_FOUND'
  readonly statusCode = 404
}

/** Cancel on a task that is neither pending nor running. */
export class TaskNotCancellableError extends TaskError {
  readonly code = 'TASK_NOT_CANCELLABLE'
  readonly statusCode = 400
}

/** Retry on a task whose status is not `failed` or `interrupted`. */
export class TaskNotRetryableError extends TaskError {
  readonly code = 'TASK_NOT_RETRYABLE'
  readonly statusCode = 400
}

/** Retry of a task that was already retried (its record has `retried_as`): a task is retried once. */
export class TaskAlreadyRetriedError extends TaskError {
  readonly code = 'TASK_ALREADY_RETRIED'
  readonly statusCode = 409
}

/** Retry of a task whose function is no longer registered in this process. */
export class TaskNotRegisteredError extends TaskError {
  readonly code = 'TASK_NOT_REGISTERED'
  readonly statusCode = 409
}

/** `updateQueueConfig` on a queue name the manager does not know. */
export class QueueNotFoundError extends TaskError {
  readonly code = 'QUEUE_NOT_FOUND'
  readonly statusCode = 404
}

/** `addTask` after `shutdown()`. */
export class ManagerClosedError extends TaskError {
  readonly code = 'MANAGER_CLOSED'
  readonly statusCode = 503
}

/** A thread or process worker died (or was killed) while it ran a task attempt. */
export class WorkerCrashedError extends TaskError {
  readonly code = 'WORKER_CRASHED'
  readonly statusCode = 500
}

/**
 * An attempt ran past the task's `timeout`: its signal was aborted and whatever it does later is
 * discarded. Retries apply as for any other failure.
 */
export class TaskTimeoutError extends TaskError {
  readonly code = 'TASK_TIMEOUT'
  readonly statusCode = 500
}

/**
 * Recorded as the error of a flow parent when one of its children failed for good (after its
 * retries), was cancelled or expired: the parent never runs, and its own parent fails the same
 * way. Retrying the failed child lets the flow go on.
 */
export class FlowChildFailedError extends TaskError {
  readonly code = 'FLOW_CHILD_FAILED'
  readonly statusCode = 409
}

/**
 * Recorded as the error of a flow child whose result is larger than the manager's
 * `maxResultBytes` (as JSON): its parent needs the result, so the child fails instead.
 */
export class FlowResultTooLargeError extends TaskError {
  readonly code = 'FLOW_RESULT_TOO_LARGE'
  readonly statusCode = 413
}

/** Every error class of the task catalogue, for docs and tests that keep them in sync. */
export const taskErrorCatalogue = [
  TaskValidationError,
  QueueFullError,
  TaskArgumentError,
  TaskNotFoundError,
  TaskNotCancellableError,
  TaskNotRetryableError,
  TaskAlreadyRetriedError,
  TaskNotRegisteredError,
  QueueNotFoundError,
  ManagerClosedError,
  WorkerCrashedError,
  TaskTimeoutError,
  FlowChildFailedError,
  FlowResultTooLargeError,
] as const
