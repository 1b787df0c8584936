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
  RETURNED,
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
  const semaphore = limit === null ? null : new Semaphore(limit)
  const release = (outcome: ExecutionOutcome): ExecutionOutcome => {
    semaphore?.release()
    return outcome
  }
  const runHeld = (request: ExecutionRequest): ExecutionOutcome | Promise<ExecutionOutcome> => {
    const outcome = run(request)
    return outcome instanceof Promise ? outcome.then(release) : release(outcome)
  }
  return {
    kind: 'async',
    execute(request) {
      if (semaphore === null) return run(request)
      const held = semaphore.acquire(request.cancellation)
      if (held === true) return runHeld(request)
      if (held === false) return SKIPPED
      return held.then((granted) => (granted ? runHeld(request) : SKIPPED))
    },
    drain: () => Promise.resolve(),
    close: () => Promise.resolve(),
  }
}

const toThrew = (error: unknown): ExecutionOutcome => ({ kind: 'threw', error: toError(error) })
const toReturned = (): ExecutionOutcome => RETURNED

function run(request: ExecutionRequest): ExecutionOutcome | Promise<ExecutionOutcome> {
  if (!request.begin()) return SKIPPED
  let result: unknown
  try {
    result = runInTaskContext(request, request.fn, ...request.args())
  } catch (error) {
    return toThrew(error)
  }
  if (result instanceof Promise) return result.then(toReturned, toThrew)
  if (isThenable(result)) return Promise.resolve(result).then(toReturned, toThrew)
  return RETURNED
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { then?: unknown }).then === 'function'
  )
}
