/**
 * The Redis task store's layout for new pending records, written with plain pipelined
 * commands instead of `save-tasks.lua`: the yardstick for what Redis must spend per task on the
 * keys themselves, whoever writes them (the Redis counterpart of the raw better-sqlite3 writer
 * of the store's own rows). Per record one HSET of the fields the script writes; per batch one
 * ZADD per index key (id, creation time, status, each function, each queue, each tag), the
 * record counts, the owner's set and one change-stream entry. No atomicity and no old state:
 * only the writes.
 *
 * `lean` leaves out what a lean queue would not write for a pending record: the creation-time,
 * function and queue indexes (a record would enter them with its terminal write).
 */
import type { Redis } from 'ioredis'
import type { StoredTask } from '../../src/tasks/record.js'
import { tagHash, taskColumns } from '../../src/tasks/stores/rows.js'

/** Members of one sorted set, flat: score, member, score, member… */
function membersOf(groups: Map<string, (string | number)[]>, key: string): (string | number)[] {
  let members = groups.get(key)
  if (members === undefined) {
    members = []
    groups.set(key, members)
  }
  return members
}

/** Writes `tasks` (new pending records) under `prefix` as the store lays them out. */
export async function writeRawLayout(
  client: Redis,
  prefix: string,
  tasks: readonly StoredTask[],
  owner: string,
  lease: number,
  lean: boolean,
): Promise<void> {
  const pipeline = client.pipeline()
  const sets = new Map<string, (string | number)[]>()
  const counts = new Map<string, number>()
  const ids: string[] = []
  for (const task of tasks) {
    const row = taskColumns(task)
    const tags = Object.entries(task.record.tags).map(([key, value]) => tagHash(key, value))
    const fields: (string | number)[] = [
      'status',
      row.status,
      'func',
      row.func_name,
      'queue',
      row.queue,
      'duration',
      row.duration,
      'body',
      row.body,
    ]
    if (tags.length > 0) fields.push('tags', tags.join(' '))
    fields.push('claimed_by', owner, 'lease_until', lease)
    pipeline.hset(`${prefix}task:${row.task_id}`, ...fields)
    ids.push(row.task_id)
    membersOf(sets, `${prefix}idx:id`).push(0, row.task_id)
    membersOf(sets, `${prefix}idx:status:${row.status}`).push(row.created_ms, row.task_id)
    if (!lean) {
      membersOf(sets, `${prefix}idx:all`).push(row.created_ms, row.task_id)
      membersOf(sets, `${prefix}idx:func:${row.func_name}`).push(row.created_ms, row.task_id)
      membersOf(sets, `${prefix}idx:queue:${row.queue}`).push(row.created_ms, row.task_id)
    }
    for (const hash of tags)
      membersOf(sets, `${prefix}idx:tag:${hash}`).push(row.created_ms, row.task_id)
    const cell = `${row.func_name}\n${row.status}`
    counts.set(cell, (counts.get(cell) ?? 0) + 1)
  }
  for (const [key, members] of sets) pipeline.zadd(key, ...members)
  for (const [cell, n] of counts) pipeline.hincrby(`${prefix}agg:count`, cell, n)
  pipeline.sadd(`${prefix}owner:${owner}`, ...ids)
  pipeline.xadd(`${prefix}changes`, 'MAXLEN', '~', 10_000, '*', 'o', 'bench', 'ids', ids.join(','))
  const replies = await pipeline.exec()
  for (const [error] of replies ?? []) if (error !== null) throw error
}
