/**
 * The persistence seam of the task manager.
 *
 * The manager keeps live records in its {@link RecordBook}; a `TaskStore` is where records go to
 * outlive the process and where idempotency keys are claimed. Only the in-memory implementation
 * lives here; SQL and Redis stores implement the same interface, so that an idempotency key
 * claimed on one instance is seen by every other instance sharing the store.
 */
import { TaskValidationError } from '../errors.js'
import type { StoredTask } from '../record.js'
import { checkClaims } from './rows.js'
import type {
  IdempotencyClaim,
  SessionRevocationStore,
  StoredQueueConfig,
  StoredScheduleControl,
  TaskAdminStore,
  TaskAuditEntry,
} from './ports.js'

/** A value or a promise of it: the in-memory store answers synchronously on the hot path. */
export type MaybePromise<T> = T | Promise<T>

/** Where task records and idempotency keys are kept beyond one process. */
export interface TaskStore {
  /** Inserts or replaces tasks (by `task_id`). Called for persisted tasks on completion. */
  saveTasks(tasks: readonly StoredTask[]): MaybePromise<void>
  /** Every stored task, for history loading at startup. Read-only. */
  loadTasks(): MaybePromise<StoredTask[]>
  /**
   * Atomically claims `key` for `taskId`. When another task already holds the key (a task that is
   * not failed), returns that task's id and changes nothing; otherwise records `taskId` as the
   * holder and returns null.
   */
  claimIdempotencyKey(key: string, taskId: string): MaybePromise<string | null>
  /**
   * {@link claimIdempotencyKey} of many distinct keys in one step: for each claim, in order, the
   * holder's id, or null when won (or already held by that task). Optional: without it, callers
   * claim the keys one at a time.
   */
  claimIdempotencyKeys?(claims: readonly IdempotencyClaim[]): MaybePromise<(string | null)[]>
  /** Frees `key` if (and only if) `taskId` holds it; called when that task fails or is rejected. */
  releaseIdempotencyKey(key: string, taskId: string): MaybePromise<void>
  /** Releases connections; the store is not used afterwards. */
  close(): MaybePromise<void>
}

/** Default `maxTasks` of {@link memoryTaskStore}. */
export const MEMORY_STORE_MAX_TASKS = 100_000

/**
 * A process-local store: saved tasks and idempotency keys live in maps. It keeps the
 * `maxTasks` most recently first-saved tasks (default 100,000; the oldest go first), as the
 * manager keeps a bounded history without a durable store.
 */
export function memoryTaskStore(options: { maxTasks?: number } = {}): TaskStore {
  const maxTasks = options.maxTasks ?? MEMORY_STORE_MAX_TASKS
  if (!Number.isInteger(maxTasks) || maxTasks < 1)
    throw new TaskValidationError(`maxTasks must be a positive integer, got ${String(maxTasks)}.`)
  const tasks = new Map<string, StoredTask>()
  const keys = new Map<string, string>()
  return {
    saveTasks(batch) {
      for (const task of batch) tasks.set(task.record.task_id, structuredClone(task))
      if (tasks.size <= maxTasks) return
      for (const id of tasks.keys()) {
        tasks.delete(id)
        if (tasks.size <= maxTasks) return
      }
    },
    loadTasks() {
      return [...tasks.values()].map((task) => structuredClone(task))
    },
    claimIdempotencyKey(key, taskId) {
      const holder = keys.get(key)
      if (holder !== undefined) return holder
      keys.set(key, taskId)
      return null
    },
    claimIdempotencyKeys(claims) {
      checkClaims(claims)
      return claims.map(({ key, task_id }) => {
        const holder = keys.get(key)
        if (holder === undefined) keys.set(key, task_id)
        return holder === undefined || holder === task_id ? null : holder
      })
    },
    releaseIdempotencyKey(key, taskId) {
      if (keys.get(key) === taskId) keys.delete(key)
    },
    close() {
      tasks.clear()
      keys.clear()
    },
  }
}

/** Most audit entries the in-memory admin data keeps (the oldest go first). */
const MEMORY_AUDIT_LIMIT = 10_000
/** Most revoked sessions kept in memory (expired ones go first, then the oldest). */
const MEMORY_REVOCATION_LIMIT = 100_000

/**
 * The task admin's data in process memory, for a manager without a durable store: queue
 * configs (kept, but a restart forgets them) and the audit, bounded to the newest 10,000
 * entries.
 */
export function memoryAdminData(): TaskAdminStore {
  const configs = new Map<string, StoredQueueConfig>()
  const controls = new Map<string, StoredScheduleControl>()
  const audit: TaskAuditEntry[] = []
  let nextId = 1
  return {
    queueConfigs: () =>
      Promise.resolve([...configs.values()].sort((x, y) => x.name.localeCompare(y.name))),
    putQueueConfig(config) {
      configs.set(config.name, { ...config, paused: config.paused === true })
      return Promise.resolve()
    },
    scheduleControls: () =>
      Promise.resolve([...controls.values()].sort((x, y) => x.name.localeCompare(y.name))),
    putScheduleControl(control) {
      controls.set(control.name, { ...control })
      return Promise.resolve()
    },
    appendAudit(entry) {
      const full: TaskAuditEntry = { id: nextId++, ...entry }
      audit.push(full)
      if (audit.length > MEMORY_AUDIT_LIMIT) audit.shift()
      return Promise.resolve(full)
    },
    listAudit(page, perPage) {
      const newest = audit.length - (page - 1) * perPage
      const items = audit.slice(Math.max(0, newest - perPage), Math.max(0, newest)).reverse()
      return Promise.resolve({ items, total: audit.length, page, per_page: perPage })
    },
  }
}

/** Session revocations in process memory (one instance: nobody else needs to see them). */
export function memorySessions(): SessionRevocationStore {
  const revoked = new Map<string, number>()
  return {
    revoke(tokenId, expiresAt) {
      revoked.delete(tokenId)
      revoked.set(tokenId, expiresAt)
      if (revoked.size > MEMORY_REVOCATION_LIMIT) {
        const now = Date.now()
        for (const [id, until] of revoked) if (until <= now) revoked.delete(id)
        if (revoked.size > MEMORY_REVOCATION_LIMIT) {
          const oldest = revoked.keys().next().value
          if (oldest !== undefined) revoked.delete(oldest)
        }
      }
      return Promise.resolve()
    },
    isRevoked(tokenId, now) {
      const until = revoked.get(tokenId)
      return Promise.resolve(until !== undefined && until > now)
    },
  }
}
