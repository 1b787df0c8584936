/**
 * The pending queue on Redis (the {@link PendingQueueStore} port; see it for the semantics):
 * claims, renewals and releases are Lua scripts, so two instances can never both win a record.
 */
import { splitExpired } from '../../expiry.js'
import type { TaskStatus } from '../../status.js'
import { saveExpired } from '../expired-claims.js'
import type { ClaimedTask, LeaseRequest, PendingQueueStore, TaskFlowStore } from '../ports.js'
import { checkLease, checkPendingBatch, claimWanted, parseTask } from '../rows.js'
import type { RedisOps } from './ops.js'
import { createTask, writeTasks } from './records.js'

async function claimTasks(
  ops: RedisOps,
  status: TaskStatus,
  request: LeaseRequest & { limit: number },
  funcNames: readonly string[] | null,
): Promise<ClaimedTask[]> {
  if (!claimWanted(request)) return []
  const found = (await ops.run(
    'claim-tasks',
    [],
    [
      ops.prefix,
      status,
      request.owner,
      request.leaseUntil,
      request.now,
      request.limit,
      funcNames === null ? '0' : '1',
      ...(funcNames ?? []),
    ],
  )) as string[]
  return found.map((body) => ({
    task: parseTask(body),
    claimed_by: request.owner,
    lease_until: request.leaseUntil,
  }))
}

/** The pending queue on Redis (expired flow nodes are written through `flows`). */
export function redisPendingQueue(
  ops: RedisOps,
  origin: string,
  flows: TaskFlowStore,
): PendingQueueStore {
  return {
    async enqueue(tasks, lease) {
      checkPendingBatch(tasks, lease)
      await writeTasks(ops, origin, tasks, lease.owner, String(lease.leaseUntil))
    },
    async create(task, lease) {
      checkPendingBatch([task], lease)
      return createTask(ops, origin, task, lease.owner, String(lease.leaseUntil))
    },
    async claim(request) {
      if (request.funcNames.length === 0) return []
      const claimed = await claimTasks(ops, 'pending', request, request.funcNames)
      const { live, expired } = splitExpired(
        claimed.map((c) => c.task),
        request.now,
      )
      if (expired.length === 0) return claimed
      // The claim makes this caller the only writer of these records: it ends them here.
      await saveExpired(expired, request, (tasks) => writeTasks(ops, origin, tasks, '', ''), flows)
      const kept = new Set(live)
      return claimed.filter((c) => kept.has(c.task))
    },
    claimOrphans: (request) => claimTasks(ops, 'running', request, null),
    async renewLeases(owner, leaseUntil) {
      checkLease(owner, leaseUntil)
      return Number(await ops.run('renew-leases', [], [ops.prefix, owner, leaseUntil]))
    },
    async release(taskIds, owner) {
      if (taskIds.length === 0) return
      await ops.run('release-tasks', [], [ops.prefix, owner, ...taskIds])
    },
  }
}
