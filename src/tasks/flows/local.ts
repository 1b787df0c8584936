/**
 * Flows of a manager without a durable store: the parents' counters in process memory. The same
 * rules as the stores' (see `TaskFlowStore`): a child's success counts its parent's `waiting`
 * down (at 0 the parent runs), any other end counts `failed` up and fails a waiting parent, and
 * a retry taking a failed child's place counts `failed` down (at 0 a parent failed by its
 * children waits again).
 */
import type { StoredTask } from '../record.js'
import type { TaskHandle } from '../registry.js'
import { TERMINAL_STATUSES } from '../status.js'

/** Most parents whose counters are kept; past it the oldest finished ones are forgotten. */
export const LOCAL_FLOW_PARENTS = 100_000

/** The prefix of a parent's `error` when its children failed it (`describe` of the error). */
export const FLOW_FAILED_PREFIX = 'FlowChildFailedError:'

interface Parent {
  task: StoredTask
  handle: TaskHandle
  waiting: number
  failed: number
  /** Stored results of the children that succeeded, by child id. */
  results: Map<string, string | null>
}

/** What the tracker asks of the intake. */
export interface LocalFlowHost {
  /** Fails a waiting parent (`FLOW_CHILD_FAILED`) because `childId` ended without success. */
  fail(parent: StoredTask, handle: TaskHandle, childId: string): void
  /** Puts a parent failed by its children back to waiting; true when it moved. */
  rewait(parent: StoredTask): boolean
  /** Starts a parent whose children all succeeded, with their stored results. */
  release(parent: StoredTask, handle: TaskHandle, results: ReadonlyMap<string, string | null>): void
  /** Cancels a pending task (a child of a cancelled parent). */
  cancel(taskId: string): void
}

/** The counters of the flow parents of one manager. */
export class LocalFlows {
  readonly #parents = new Map<string, Parent>()
  /** Child ids by parent (to cancel pending children with their parent). */
  readonly #children = new Map<string, Set<string>>()

  constructor(private readonly host: LocalFlowHost) {}

  /** A new parent waiting for `childIds`. */
  register(task: StoredTask, handle: TaskHandle, childIds: readonly string[]): void {
    const id = task.record.task_id
    this.#parents.set(id, { task, handle, waiting: childIds.length, failed: 0, results: new Map() })
    this.#children.set(id, new Set(childIds))
    if (this.#parents.size > LOCAL_FLOW_PARENTS) this.#forgetOldest()
  }

  /** The stored results of `parentId`'s children that succeeded. */
  results(parentId: string): ReadonlyMap<string, string | null> {
    return this.#parents.get(parentId)?.results ?? new Map()
  }

  /** A flow node reached a terminal status. */
  ended(task: StoredTask): void {
    const id = task.record.task_id
    const status = task.record.status
    if (status === 'cancelled') {
      for (const child of this.#children.get(id) ?? []) this.host.cancel(child)
    }
    const parentId = task.record.parent_id ?? null
    const parent = parentId === null ? undefined : this.#parents.get(parentId)
    if (parent === undefined) return
    if (status === 'success') {
      parent.waiting--
      parent.results.set(id, task.flow_result ?? null)
      if (parent.waiting <= 0 && parent.failed <= 0 && parent.task.record.status === 'pending') {
        this.host.release(parent.task, parent.handle, parent.results)
      }
      return
    }
    if (!TERMINAL_STATUSES.has(status)) return
    parent.failed++
    if (parent.task.record.status === 'pending') this.host.fail(parent.task, parent.handle, id)
  }

  /** A retry (`retry`) takes the place of the failed child `originalId` of its parent. */
  retried(originalId: string, retry: StoredTask): void {
    const parentId = retry.record.parent_id ?? null
    const parent = parentId === null ? undefined : this.#parents.get(parentId)
    if (parentId === null || parent === undefined) return
    const children = this.#children.get(parentId)
    children?.delete(originalId)
    children?.add(retry.record.task_id)
    this.#uncount(parent)
  }

  /** One failed child of `parent` less; at none, a parent failed by its children waits again. */
  #uncount(parent: Parent): void {
    parent.failed--
    if (parent.failed > 0 || parent.task.record.status !== 'failed') return
    if (!(parent.task.record.error ?? '').startsWith(FLOW_FAILED_PREFIX)) return
    if (!this.host.rewait(parent.task)) return
    const above = parent.task.record.parent_id ?? null
    const grand = above === null ? undefined : this.#parents.get(above)
    if (grand !== undefined) this.#uncount(grand)
  }

  #forgetOldest(): void {
    for (const [id, parent] of this.#parents) {
      if (this.#parents.size <= LOCAL_FLOW_PARENTS) return
      if (parent.task.record.status === 'pending') continue
      this.#parents.delete(id)
      this.#children.delete(id)
    }
  }
}
