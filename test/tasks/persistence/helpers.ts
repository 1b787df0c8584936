/**
 * Real servers for the store tests: PostgreSQL (127.0.0.1:5432, db `test`, trust), MariaDB
 * (127.0.0.1:3306, root, db `test`) and Redis (127.0.0.1:6379). A suite skips only when `CI`
 * is unset and its server is unreachable, with a loud warning. Every file uses its own prefix.
 */
import { randomUUID } from 'node:crypto'
import type { StoredTask } from '../../../src/tasks/record.js'
import { TASK_TABLES } from '../../../src/tasks/stores/sql/schema.js'

export const PG_URL = process.env.SY_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
export const MYSQL_URL = process.env.SY_TEST_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test'
export { TEST_REDIS_URL as REDIS_URL } from '../../helpers/redis.js'

/** The tables of the SQL schema (for cleanup). */
export const TABLES: readonly string[] = TASK_TABLES

export { serverEnabled } from '../../helpers/servers.js'

/** A unique table or key prefix. */
export function uniquePrefix(name: string): string {
  return `t_${name}_${randomUUID().slice(0, 8)}_`
}

let sequence = 0

/** A stored task for tests. */
export function makeTask(
  overrides: Partial<StoredTask['record']> & { created?: number } = {},
): StoredTask {
  const created = overrides.created ?? Date.parse('2026-11-21T12:00:00Z') + sequence++
  const { created: _c, ...record } = overrides
  return {
    record: {
      task_id: randomUUID(),
      func_name: 'work',
      status: 'pending',
      created_at: new Date(created).toISOString().replace('Z', '+00:00'),
      start_time: null,
      end_time: null,
      duration: 0,
      retries_used: 0,
      error: null,
      logs: [],
      stacktrace: null,
      tags: {},
      source: 'manual',
      priority: null,
      executor: 'async',
      queue: 'default',
      progress: null,
      progress_message: null,
      expires_at: null,
      worker: null,
      retry_of: null,
      retried_as: null,
      parent_id: null,
      ...record,
    },
    args: [1, 'two'],
    encrypted_args: null,
    idempotency_key: null,
  }
}

/** `task` ended in `status` 1.5 s after its creation (a copy; `patch` overrides record fields). */
export function finished(task: StoredTask, status: 'success' | 'failed', patch = {}): StoredTask {
  const end = new Date(Date.parse(task.record.created_at) + 1500).toISOString()
  return {
    ...task,
    record: {
      ...task.record,
      status,
      start_time: task.record.created_at,
      end_time: end.replace('Z', '+00:00'),
      duration: 1.5,
      ...patch,
    },
  }
}
