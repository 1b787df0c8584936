/**
 * Task statuses and the only transitions between them (docs/tasks.md, "Statuses").
 *
 * The table is data, not scattered `if`s, so the record book can refuse every other move with a
 * compare-and-set: a task can only go from `pending` to `running` if it is still `pending`, which
 * is what guarantees that a cancelled task never starts.
 */

/** Every status a task record can hold. */
export const TASK_STATUSES = [
  'pending',
  'running',
  'success',
  'failed',
  'cancelled',
  'interrupted',
  'rejected',
  'expired',
] as const

/** A task record's status. */
export type TaskStatus = (typeof TASK_STATUSES)[number]

/** Statuses a new record may be created in. */
export const INITIAL_STATUSES: readonly TaskStatus[] = ['pending', 'rejected']

/** Statuses that never change again. */
export const TERMINAL_STATUSES: ReadonlySet<TaskStatus> = new Set<TaskStatus>([
  'success',
  'failed',
  'cancelled',
  'interrupted',
  'rejected',
  'expired',
])

/**
 * Allowed moves. `running → pending` exists only for shutdown with `requeueOnInterrupt`: the
 * record is saved as pending so that a later startup can run it again. `pending → expired` is
 * the only way into `expired`: a task that has started is no longer subject to its expiry.
 * `pending → failed` and `failed → pending` belong to flow parents only: a parent waiting for its
 * children fails when one of them fails for good (`FLOW_CHILD_FAILED`, it never ran), and waits
 * again when a retry of that child takes its place.
 */
const transitions: Readonly<Record<TaskStatus, readonly TaskStatus[]>> = {
  pending: ['running', 'cancelled', 'expired', 'failed'],
  running: ['success', 'failed', 'cancelled', 'interrupted', 'pending'],
  success: [],
  failed: ['pending'],
  cancelled: [],
  interrupted: [],
  rejected: [],
  expired: [],
}

/** Whether a record may move from `from` to `to`. */
export function canTransition(from: TaskStatus, to: TaskStatus): boolean {
  return transitions[from].includes(to)
}

/** Statuses from which the retry operation creates a new record. */
export const RETRYABLE_STATUSES: ReadonlySet<TaskStatus> = new Set<TaskStatus>([
  'failed',
  'interrupted',
])
