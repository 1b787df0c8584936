/**
 * Flows on Redis (the {@link TaskFlowStore} port; see it for the semantics): flow nodes are
 * written by `save-flow.lua`, which runs save-tasks' record write and the counter changes in
 * one script, so a parent's counters and its children's records never disagree.
 */
import type { StoredTask } from '../../record.js'
import { flowEffectsOf, type FlowHold, type TaskFlowStore } from '../ports.js'
import { isoToMs, parseTask } from '../rows.js'
import type { RedisOps } from './ops.js'
import { writeTasks } from './records.js'

/** Nodes of a flow's index that one `flow-results.lua` call looks at. */
const RESULTS_SLICE = 2000

/** The flow operations of `chunk` (groups of 5, see save-flow.lua). */
function operations(
  chunk: readonly StoredTask[],
  holds: ReadonlyMap<string, FlowHold>,
): (string | number)[] {
  const ops: (string | number)[] = []
  const released = new Set<string>()
  // The open run of new leaves of one parent; `first` is the 1-based place of its first record.
  let run: { parent: string; flow: string; first: number; count: number } | null = null
  const closeRun = () => {
    if (run !== null) {
      ops.push('leaves', '', run.parent, run.flow, `${String(run.first)} ${String(run.count)}`)
    }
    run = null
  }
  chunk.forEach((task, index) => {
    const { task_id: id, status, retry_of: retryOf } = task.record
    const parent = task.record.parent_id ?? null
    const flow = task.flow_id ?? null
    if (status === 'pending' && flow !== null) {
      if (!holds.has(id) && parent !== null && retryOf === null) {
        // A leaf: its id and creation time are in its row; consecutive ones share one operation.
        if (
          run !== null &&
          run.parent === parent &&
          run.flow === flow &&
          run.first + run.count === index + 1
        ) {
          run.count++
        } else {
          closeRun()
          run = { parent, flow, first: index + 1, count: 1 }
        }
      } else {
        const children = holds.get(id)?.children ?? 0
        const created = isoToMs(task.record.created_at, 'created_at')
        ops.push('node', id, parent ?? '', flow, `${String(created)} ${String(children)}`)
      }
    }
    if (parent === null) return
    if (status === 'success') {
      ops.push('done', id, parent, '1', '')
      released.add(parent)
    } else if (status === 'pending') {
      if (retryOf !== null) ops.push('retry', id, parent, '', '')
      else if (task.flow_children !== undefined) ops.push('rewait', id, parent, '', '')
    } else if (status !== 'running') ops.push('done', id, parent, '0', '')
  })
  closeRun()
  for (const task of chunk) {
    const hold = holds.get(task.record.task_id)
    if (hold === undefined) continue
    ops.push('hold', task.record.task_id, '', '', '')
    // A parent that waits again is released at once when its children already succeeded.
    if (hold.children === null) released.add(task.record.task_id)
  }
  for (const parent of released) ops.push('release', parent, '', '', '')
  return ops
}

/** Flows on Redis. */
export function redisFlows(ops: RedisOps, origin: string): TaskFlowStore {
  return {
    async save(tasks, options = {}) {
      const holds = new Map((options.holds ?? []).map((hold) => [hold.task_id, hold]))
      const claim = options.claim
      await writeTasks(
        ops,
        origin,
        tasks,
        claim?.owner ?? '',
        claim === undefined ? '' : String(claim.leaseUntil),
        (chunk) => operations(chunk, holds),
      )
      return flowEffectsOf(tasks)
    },

    async endWaiting(task) {
      const id = task.record.task_id
      const written = await writeTasks(ops, origin, [task], '', '', (chunk) => [
        'guard',
        id,
        '',
        '',
        '',
        ...operations(chunk, new Map()),
      ])
      return written > 0 ? flowEffectsOf([task]) : null
    },

    async counters(parentId) {
      const [waiting, failed] = (await ops.call(
        'HMGET',
        ops.key('flow:', parentId),
        'waiting',
        'failed',
      )) as (string | null)[]
      if (waiting === null || waiting === undefined) return null
      return { waiting: Number(waiting), failed: Number(failed ?? 0) }
    },

    async results(flowId, parents) {
      const results = new Map<string, string | null>()
      if (parents.length === 0) return results
      // A slice of the flow's index per call: a huge flow never blocks the server for long.
      for (let offset = 0; ; offset += RESULTS_SLICE) {
        const reply = (await ops.run(
          'flow-results',
          [],
          [ops.prefix, flowId, offset, RESULTS_SLICE, ...parents],
        )) as [number, ...string[]]
        const [scanned, ...found] = reply
        for (let i = 0; i < found.length; i += 2) {
          const body = parseTask(found[i + 1] as string)
          results.set(found[i] as string, body.flow_result ?? null)
        }
        if (scanned < RESULTS_SLICE) break
      }
      return results
    },

    async stalled(limit) {
      const ids = (await ops.call('SRANDMEMBER', ops.key('flows:failing'), limit)) as string[]
      const stalled: string[] = []
      for (const id of ids) {
        const status = (await ops.call('HGET', ops.key('task:', id), 'status')) as string | null
        if (status === 'pending') stalled.push(id)
        // Only a waiting parent can stall; the set keeps no finished ones.
        else await ops.call('SREM', ops.key('flows:failing'), id)
      }
      return stalled
    },
  }
}
