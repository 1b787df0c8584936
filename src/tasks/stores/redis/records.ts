/**
 * Task records on Redis (the {@link TaskRecordStore} port; see it for the semantics). A record
 * is a hash with sorted-set indexes by creation time (all, per status, function and queue), the
 * finished-time set that retention scans and per-(function, status) counters; every write goes
 * through `save-tasks.lua`, so a record and its indexes change in one atomic step.
 */
import { randomUUID } from 'node:crypto'
import { TaskValidationError } from '../../errors.js'
import type { StoredTask } from '../../record.js'
import type { TaskStatus } from '../../status.js'
import type { TaskAggregate, TaskListQuery, TaskPage, TaskRecordStore } from '../ports.js'
import { checkListQuery, parseTask, taskColumns } from '../rows.js'
import type { RedisOps } from './ops.js'

const SAVE_CHUNK = 500
/** Lifetime of a list query's temporary intersection key, should its delete never come. */
const TEMPORARY_TTL_MS = 60_000

/**
 * Upserts `tasks` through `save-tasks.lua`; with an `owner`, the records also take that claim
 * until `lease` (the pending queue's enqueue).
 */
export async function writeTasks(
  ops: RedisOps,
  tasks: readonly StoredTask[],
  owner: string,
  lease: string,
): Promise<void> {
  const rows = tasks.map(taskColumns)
  for (let i = 0; i < rows.length; i += SAVE_CHUNK) {
    const args: (string | number)[] = [ops.prefix, owner, lease]
    for (const row of rows.slice(i, i + SAVE_CHUNK)) {
      args.push(
        row.task_id,
        row.status,
        row.func_name,
        row.queue,
        row.created_ms,
        row.finished_ms ?? '',
        row.duration,
        row.body,
      )
    }
    await ops.run('save-tasks', [], args)
  }
}

/** The stored tasks of `ids`, in order, skipping ids whose record is gone. */
export async function bodies(ops: RedisOps, ids: string[]): Promise<StoredTask[]> {
  const tasks: StoredTask[] = []
  for (const id of ids) {
    const body = (await ops.call('HGET', ops.key('task:', id), 'body')) as string | null
    if (body !== null) tasks.push(parseTask(body))
  }
  return tasks
}

/** Task records on Redis. */
export function redisRecords(ops: RedisOps): TaskRecordStore {
  return {
    save: (tasks) => writeTasks(ops, tasks, '', ''),

    async get(taskId) {
      const body = (await ops.call('HGET', ops.key('task:', taskId), 'body')) as string | null
      return body === null ? null : parseTask(body)
    },

    async list(query: TaskListQuery): Promise<TaskPage> {
      checkListQuery(query)
      const indexes: string[] = []
      if (query.status !== undefined) indexes.push(ops.key('idx:status:', query.status))
      if (query.funcName !== undefined) indexes.push(ops.key('idx:func:', query.funcName))
      if (query.queue !== undefined) indexes.push(ops.key('idx:queue:', query.queue))
      let source = indexes[0] ?? ops.key('idx:all')
      let temporary: string | null = null
      if (indexes.length > 1) {
        temporary = ops.key('tmp:', randomUUID())
        await ops.run('intersect', [temporary, ...indexes], [TEMPORARY_TTL_MS])
        source = temporary
      }
      try {
        const min = query.since === undefined ? '-inf' : query.since
        const offset = (query.page - 1) * query.perPage
        const ids = (await ops.call(
          'ZRANGE',
          source,
          '+inf',
          min,
          'BYSCORE',
          'REV',
          'LIMIT',
          offset,
          query.perPage,
        )) as string[]
        const total = Number(await ops.call('ZCOUNT', source, min, '+inf'))
        return {
          items: await bodies(ops, ids),
          total,
          page: query.page,
          per_page: query.perPage,
        }
      } finally {
        if (temporary !== null) await ops.call('DEL', temporary)
      }
    },

    async loadAll() {
      const ids = (await ops.call('ZRANGE', ops.key('idx:all'), 0, -1)) as string[]
      return bodies(ops, ids)
    },

    async aggregate(): Promise<TaskAggregate[]> {
      const counts = (await ops.call('HGETALL', ops.key('agg:count'))) as string[]
      const durations = (await ops.call('HGETALL', ops.key('agg:duration'))) as string[]
      const duration = new Map<string, number>()
      for (let i = 0; i < durations.length; i += 2) {
        duration.set(durations[i] as string, Number(durations[i + 1]))
      }
      const groups: TaskAggregate[] = []
      for (let i = 0; i < counts.length; i += 2) {
        const field = counts[i] as string
        const count = Number(counts[i + 1])
        if (count <= 0) continue
        const [funcName = '', status = ''] = field.split('\n')
        groups.push({
          func_name: funcName,
          status: status as TaskStatus,
          count,
          total_duration: Math.round((duration.get(field) ?? 0) * 1e6) / 1e6,
        })
      }
      return groups
    },

    async deleteTerminalBefore(cutoff) {
      if (!Number.isFinite(cutoff)) throw new TaskValidationError('cutoff must be epoch ms.')
      let total = 0
      for (;;) {
        const n = Number(await ops.run('delete-terminal', [], [ops.prefix, cutoff, 1000]))
        total += n
        if (n < 1000) return total
      }
    },
  }
}
