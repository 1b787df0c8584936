/**
 * The task admin's audit, queue configs and session revocations for a manager without a
 * durable store: in memory, one set per manager, so that two mounts of one manager share them.
 */
import type { TaskManager } from '../manager.js'
import { memoryAdminData, memorySessions } from '../stores/memory.js'
import type { SessionRevocationStore, TaskAdminStore } from '../stores/ports.js'

const byManager = new WeakMap<
  TaskManager,
  { data: TaskAdminStore; revocations: SessionRevocationStore }
>()

/** The admin data of `manager`: its durable store's ports, or the in-memory ones. */
export function adminDataOf(manager: TaskManager): {
  data: TaskAdminStore
  revocations: SessionRevocationStore
} {
  const store = manager.durableStore
  if (store !== null) return { data: store.admin, revocations: store.sessions }
  let local = byManager.get(manager)
  if (local === undefined) {
    local = { data: memoryAdminData(), revocations: memorySessions() }
    byManager.set(manager, local)
  }
  return local
}
