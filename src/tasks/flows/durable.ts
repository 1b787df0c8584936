/**
 * Flows on a durable store, the manager's side: what follows a flow write (claim a released
 * parent, fail a parent whose child failed, put a parent back to waiting when a retry took the
 * failed child's place), the reading of a parent's child results, and the cancel of a parent
 * that waits in the store. The counters themselves change in the store, with the records (see
 * `TaskFlowStore`); everything here reads the stored state first, so doing it twice (two
 * instances, or a maintenance round after a crash) changes nothing more.
 */
import type { Logger } from '../../common/logger.js'
import type { ArgumentCipher } from '../encryption.js'
import { FlowChildFailedError, TaskValidationError } from '../errors.js'
import type { StoredTask } from '../record.js'
import { describe } from '../runner.js'
import {
  MAX_PER_PAGE,
  type DurableTaskStore,
  type FlowEffects,
  type TaskFlowStore,
} from '../stores/ports.js'
import { toIso, type TaskClock } from '../time.js'
import { FLOW_FAILED_PREFIX } from './local.js'
import { decodeFlowResult } from './results.js'

/** What the coordinator needs of the manager. */
export interface DurableFlowDeps {
  readonly store: DurableTaskStore
  readonly clock: TaskClock
  readonly logger: Logger
  readonly cipher: ArgumentCipher | null
  /** Claims pending work now (a parent was released). */
  claimSoon(): void
  /** Cancels a task (a pending child of a cancelled parent). */
  cancel(taskId: string): Promise<unknown>
}

/** The store's flows, or a clear error for a store without them. */
export function flowsOf(store: DurableTaskStore): TaskFlowStore {
  if (store.flows === undefined) {
    throw new TaskValidationError(
      'This task store does not support flows (every built-in store does).',
    )
  }
  return store.flows
}

/** The follow-ups and reads of flows on a durable store. */
export class DurableFlows {
  constructor(private readonly deps: DurableFlowDeps) {}

  /** Acts on the effects of a flow write (never throws: failures are logged). */
  effects(effects: FlowEffects): void {
    if (effects.released.length > 0) this.deps.claimSoon()
    for (const [parent, child] of effects.failing) {
      this.#guard(this.fail(parent, child === '' ? null : child))
    }
    for (const parent of new Set(effects.unfailing)) this.#guard(this.#rewait(parent))
  }

  #guard(work: Promise<void>): void {
    work.catch((error: unknown) => {
      this.deps.logger.error({ err: error }, 'a flow step failed')
    })
  }

  /** Fails `parentId` (`FLOW_CHILD_FAILED`) when it still waits and has a failed child. */
  async fail(parentId: string, childId: string | null): Promise<void> {
    const { store } = this.deps
    const parent = await store.records.get(parentId)
    if (parent?.record.status !== 'pending' || parent.flow_children === undefined) return
    const counters = await flowsOf(store).counters(parentId)
    if (counters === null || counters.failed <= 0) return
    const error = new FlowChildFailedError(
      childId === null
        ? 'A child of this flow task ended without success; the task did not run.'
        : `Child task ${childId} ended without success; the task did not run.`,
    )
    const record = parent.record
    record.status = 'failed'
    record.error = describe(error)
    record.end_time = toIso(this.deps.clock.now())
    // Conditional in the store: a parent cancelled or claimed meanwhile stays as it is.
    const effects = await flowsOf(store).endWaiting(parent)
    if (effects !== null) this.effects(effects)
  }

  /** Puts a parent failed by its children back to waiting once no child of it is failed. */
  async #rewait(parentId: string): Promise<void> {
    const { store } = this.deps
    const flows = flowsOf(store)
    const parent = await store.records.get(parentId)
    if (parent?.record.status !== 'failed') return
    if (!(parent.record.error ?? '').startsWith(FLOW_FAILED_PREFIX)) return
    const counters = await flows.counters(parentId)
    if (counters === null || counters.failed > 0) return
    Object.assign(parent.record, { status: 'pending', error: null, end_time: null, duration: 0 })
    // When its children all succeeded while it was failed, the save releases it at once.
    const effects = await flows.save([parent], { holds: [{ task_id: parentId, children: null }] })
    this.deps.claimSoon()
    this.effects(effects)
  }

  /**
   * The results of the children of `task` that succeeded, by child id (a retry of a parent reads
   * those of the parent it retries).
   */
  async childResults(task: StoredTask): Promise<Map<string, unknown>> {
    const results = new Map<string, unknown>()
    const flow = task.flow_id ?? null
    if (flow === null) return results
    const parents = new Set([task.record.task_id, task.flow_children_of ?? task.record.task_id])
    const flows = this.deps.store.flows
    if (flows?.results !== undefined) {
      const stored = await flows.results(flow, [...parents])
      for (const [id, result] of stored) {
        results.set(id, decodeFlowResult(result, id, this.deps.cipher))
      }
      return results
    }
    for (let page = 1; ; page++) {
      const chunk = await this.deps.store.records.list({ flow, page, perPage: MAX_PER_PAGE })
      for (const node of chunk.items) {
        const parent = node.record.parent_id ?? null
        if (parent === null || !parents.has(parent) || node.record.status !== 'success') continue
        results.set(
          node.record.task_id,
          decodeFlowResult(node.flow_result, node.record.task_id, this.deps.cipher),
        )
      }
      if (chunk.items.length < MAX_PER_PAGE) break
    }
    return results
  }

  /**
   * Cancels a parent that waits in the store (no instance has claimed it): its record ends
   * `cancelled`, which fails its own parent, and its pending children are cancelled. Null when
   * `taskId` is not such a parent — including one whose release and claim won the race: the
   * store settles the two with a compare-and-set, so a cancelled parent never runs.
   */
  async cancelWaiting(taskId: string): Promise<StoredTask | null> {
    const { store } = this.deps
    const task = await store.records.get(taskId)
    if (task?.record.status !== 'pending' || task.flow_children === undefined) return null
    task.record.status = 'cancelled'
    task.record.end_time = toIso(this.deps.clock.now())
    const effects = await flowsOf(store).endWaiting(task)
    if (effects === null) return null
    this.effects(effects)
    const flow = task.flow_id ?? taskId
    const pending: string[] = []
    for (let page = 1; ; page++) {
      const chunk = await store.records.list({
        flow,
        status: 'pending',
        page,
        perPage: MAX_PER_PAGE,
      })
      for (const node of chunk.items) {
        if (node.record.parent_id === taskId) pending.push(node.record.task_id)
      }
      if (chunk.items.length < MAX_PER_PAGE) break
    }
    for (const child of pending) {
      await this.deps.cancel(child).catch((error: unknown) => {
        this.deps.logger.warn({ err: error }, `could not cancel flow child ${child}`)
      })
    }
    return task
  }
}
