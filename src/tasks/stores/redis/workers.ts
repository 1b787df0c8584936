/**
 * The workers registry ({@link TaskWorkerStore}) on Redis: the hash `<prefix>workers` holds each
 * instance's last heartbeat (JSON by id) and the sorted set `<prefix>workers:seen` its last_seen
 * (epoch ms), which serves "recently seen, newest first" and pruning. See the ports for the
 * semantics.
 *
 * Pruning is not atomic with a heartbeat: a heartbeat landing between its read and its delete
 * may be dropped, and the instance's next heartbeat writes it again. Only instances that stopped
 * reporting long ago are pruned, so this does not happen to a live one in practice.
 */
import type { StoredWorker, TaskWorkerStore } from '../ports.js'
import { checkWorker, checkWorkerQuery, parseWorker, workerBody } from '../worker-rows.js'
import type { RedisOps } from './ops.js'

async function heartbeat(ops: RedisOps, worker: StoredWorker): Promise<void> {
  checkWorker(worker)
  await ops.call('HSET', ops.key('workers'), worker.id, workerBody(worker))
  await ops.call('ZADD', ops.key('workers:seen'), worker.last_seen, worker.id)
}

async function list(ops: RedisOps, since: number, limit: number): Promise<StoredWorker[]> {
  checkWorkerQuery(since, limit)
  const ids = (await ops.call(
    'ZRANGE',
    ops.key('workers:seen'),
    '+inf',
    since,
    'BYSCORE',
    'REV',
    'LIMIT',
    0,
    limit,
  )) as string[]
  if (ids.length === 0) return []
  const bodies = (await ops.call('HMGET', ops.key('workers'), ...ids)) as (string | null)[]
  return bodies.flatMap((body) => (body === null ? [] : [parseWorker(body)]))
}

async function prune(ops: RedisOps, before: number, keep: number): Promise<number> {
  checkWorkerQuery(before, keep)
  const seen = ops.key('workers:seen')
  const old = (await ops.call('ZRANGE', seen, '-inf', `(${before}`, 'BYSCORE')) as string[]
  // Ranks 0 .. -(keep + 1) are every member but the `keep` highest scores.
  const surplus = (await ops.call('ZRANGE', seen, 0, -(keep + 1))) as string[]
  const ids = [...new Set([...old, ...surplus])]
  if (ids.length === 0) return 0
  await ops.call('ZREM', seen, ...ids)
  return Number(await ops.call('HDEL', ops.key('workers'), ...ids))
}

/** The workers registry on Redis. */
export function redisWorkers(ops: RedisOps): TaskWorkerStore {
  return {
    heartbeat: (worker) => heartbeat(ops, worker),
    list: (since, limit) => list(ops, since, limit),
    prune: (before, keep) => prune(ops, before, keep),
  }
}
