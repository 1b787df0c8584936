/**
 * The manager's view of its store: a durable store (the ports) or the small {@link TaskStore}
 * seam (the in-memory default, or a user's own), and the seam a durable store offers through
 * its ports, so the manager's hot path speaks to both the same way.
 */
import type { TaskStore } from './memory.js'
import type { DurableTaskStore } from './ports.js'

/** What the manager's `store` option holds once resolved. */
export type AnyTaskStore = TaskStore | DurableTaskStore

/** Whether `store` is a durable store (the ports), not only the small seam. */
export function isDurableStore(store: AnyTaskStore): store is DurableTaskStore {
  const candidate = store as Partial<DurableTaskStore>
  return (
    typeof candidate.init === 'function' &&
    typeof candidate.records === 'object' &&
    typeof candidate.pending === 'object'
  )
}

/** The seam of `store`: itself, or the seam over a durable store's ports. */
export function seamOf(store: AnyTaskStore): TaskStore {
  if (!isDurableStore(store)) return store
  return {
    saveTasks: (tasks) => store.records.save(tasks),
    loadTasks: () => store.records.loadAll(),
    claimIdempotencyKey: (key, taskId) => store.idempotency.claim(key, taskId),
    claimIdempotencyKeys: (claims) => store.idempotency.claimMany(claims),
    releaseIdempotencyKey: (key, taskId) => store.idempotency.release(key, taskId),
    close: () => store.close(),
  }
}
