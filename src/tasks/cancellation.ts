/**
 * Cancellation of one task: a lighter stand-in for `AbortController` on the hot path.
 *
 * Every task needs a way to be cancelled, but few are; an `AbortController` plus event listeners
 * per task costs more than the rest of a no-op task together. This token keeps a plain listener
 * list and creates the real `AbortSignal` only when someone asks for it (task code reading
 * `getTaskContext().signal`, or a clock waiting on it).
 */

/** Why a task was aborted: cancelled, interrupted by a shutdown, or past its timeout. */
export type TaskAbortKind = 'cancel' | 'interrupt' | 'timeout'

const ABORT_MESSAGES: Record<TaskAbortKind, string> = {
  cancel: 'The task was cancelled.',
  interrupt: 'The task manager shut down.',
  timeout: 'The task ran past its timeout.',
}

/** Why a task was aborted. */
export class TaskAbort extends Error {
  /**
   * `cancel`: the user cancelled it; `interrupt`: the manager shut down; `timeout`: the attempt
   * ran past its `timeout` (only that attempt's signal aborts; a retry gets a fresh one).
   */
  readonly kind: TaskAbortKind

  constructor(kind: TaskAbortKind) {
    super(ABORT_MESSAGES[kind])
    this.name = 'TaskAbort'
    this.kind = kind
  }
}

/** The cancellation state of one task. */
export class Cancellation {
  #reason: TaskAbort | null = null
  #listeners: (() => void)[] | null = null
  #controller: AbortController | null = null

  /** Whether the task was aborted. */
  get aborted(): boolean {
    return this.#reason !== null
  }

  /** Why it was aborted, or null. */
  get reason(): TaskAbort | null {
    return this.#reason
  }

  /** An `AbortSignal` that aborts with this token (created on first access). */
  get signal(): AbortSignal {
    if (this.#controller === null) {
      this.#controller = new AbortController()
      if (this.#reason !== null) this.#controller.abort(this.#reason)
    }
    return this.#controller.signal
  }

  /** Calls `listener` once on abort; returns a function that removes it. */
  onAbort(listener: () => void): () => void {
    const listeners = (this.#listeners ??= [])
    listeners.push(listener)
    return () => {
      const index = listeners.indexOf(listener)
      if (index >= 0) listeners.splice(index, 1)
    }
  }

  /** Aborts (once; later calls do nothing). */
  abort(reason: TaskAbort): void {
    if (this.#reason !== null) return
    this.#reason = reason
    this.#controller?.abort(reason)
    const listeners = this.#listeners
    this.#listeners = null
    if (listeners !== null) for (const listener of listeners) listener()
  }
}
