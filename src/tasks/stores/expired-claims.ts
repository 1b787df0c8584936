/**
 * The end of the tasks a pending-queue claim found expired (see `PendingQueueStore.claim`),
 * shared by the SQL and Redis queues: a flow node is written through the flows, so that its
 * parent counts it as a failed child in the same atomic step (a parent whose expired child
 * skipped its counters would wait for ever); any other task as a plain record.
 */
import type { StoredTask } from '../record.js'
import type { ClaimPendingRequest, TaskFlowStore } from './ports.js'

/** Writes the expired tasks of a claim; `request.flowEffects` hears what their parents need. */
export async function saveExpired(
  expired: readonly StoredTask[],
  request: ClaimPendingRequest,
  saveRecords: (tasks: readonly StoredTask[]) => Promise<unknown>,
  flows: TaskFlowStore,
): Promise<void> {
  const nodes = expired.filter((task) => (task.flow_id ?? null) !== null)
  const plain = nodes.length === 0 ? expired : expired.filter((task) => !nodes.includes(task))
  if (plain.length > 0) await saveRecords(plain)
  if (nodes.length === 0) return
  const effects = await flows.save(nodes)
  request.flowEffects?.(effects)
}
