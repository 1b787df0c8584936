/**
 * The `async` executor: runs the task function on the event loop, inside the task context (and,
 * since it is called from the `addTask` call or from a queue slot that restored it, inside the
 * caller's async context). With `maxConcurrentTasks`, a semaphore caps how many async tasks run
 * at once across all queues.
 *
 * Cancelling a running async task aborts `getTaskContext().signal` and the runner records
 * `cancelled` at once; code that honours the signal stops, code that ignores it runs on but its
 * outcome is discarded.
 */
import { runInTaskContext } from '../context.js'
import { toError } from '../errors.js'
import { Semaphore } from './semaphore.js'
import {
  returned,
  SKIPPED,
  type ExecutionOutcome,
  type ExecutionRequest,
  type TaskExecutor,
} from './types.js'

/** Options of the async executor. */
export interface AsyncExecutorOptions {
  /** Cap on simultaneous async tasks; null for no cap. */
  maxConcurrentTasks: number | null
}

/** Creates the event-loop executor. */
export function asyncExecutor(options: AsyncExecutorOptions): TaskExecutor {
  const limit = options.maxConcurrentTasks
  const drain = (): Promise<void> => Promise.resolve()
  if (limit === null) {
    return { kind: 'async', execute: (request) => run(request, null), drain, close: drain }
  }
  const semaphore = new Semaphore(limit)
  const runHeld = (request: ExecutionRequest): ExecutionOutcome | undefined => {
    const outcome = run(request, semaphore)
    if (outcome !== undefined) semaphore.release()
    return outcome
  }
  return {
    kind: 'async',
    execute(request) {
      const held = semaphore.acquire(request.cancellation)
      if (held === true) return runHeld(request)
      if (held === false) return SKIPPED
      void held.then((granted) => {
        const outcome = granted ? runHeld(request) : SKIPPED
        if (outcome !== undefined) request.settle(outcome)
      })
      return undefined
    },
    drain,
    close: drain,
  }
}

const toThrew = (error: unknown): ExecutionOutcome => ({ kind: 'threw', error: toError(error) })

/**
 * Runs the function: the outcome when it is known at once, else undefined and the outcome goes
 * to `request.settle` (after the semaphore permit, if any, is given back).
 */
function run(request: ExecutionRequest, semaphore: Semaphore | null): ExecutionOutcome | undefined {
  if (!request.begin()) return SKIPPED
  let result: unknown
  try {
    result = runInTaskContext(request, request.fn, ...request.args())
  } catch (error) {
    return toThrew(error)
  }
  if (result instanceof Promise) {
    settleLater(result, request, semaphore)
    return undefined
  }
  if (isThenable(result)) {
    settleLater(Promise.resolve(result), request, semaphore)
    return undefined
  }
  return returned(result)
}

/** One reaction on the task's promise: the only promise a task adds to the one it returns. */
function settleLater(
  result: Promise<unknown>,
  request: ExecutionRequest,
  semaphore: Semaphore | null,
): void {
  result.then(
    (value) => {
      semaphore?.release()
      request.settle(returned(value))
    },
    (error: unknown) => {
      semaphore?.release()
      request.settle(toThrew(error))
    },
  )
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { then?: unknown }).then === 'function'
  )
}
