/**
 * Which gates a manager's grouped and rate-limited queues ask: its durable store's, shared by
 * every instance; else (no store, or a custom store without gates) this process's own, whose
 * holds need no lease (they end with the tasks that hold them, in this process).
 */
import type { Logger } from '../../common/logger.js'
import type { DurableTaskStore } from '../stores/ports.js'
import type { TaskClock } from '../time.js'
import type { GateContext } from './group-dispatch.js'
import { memoryGates } from './memory-gates.js'

/** The lease of in-process holds: longer than any run (a century, in ms). */
const PROCESS_LEASE_MS = 100 * 365 * 86_400_000

/** The gate context of a manager with `store` (null: none). */
export function taskGateContext(
  store: DurableTaskStore | null,
  leaseMs: number,
  clock: TaskClock,
  logger: Pick<Logger, 'error'>,
): GateContext {
  const shared = store?.gates
  return {
    gates: shared ?? memoryGates(),
    now: () => clock.now(),
    leaseMs: shared === undefined ? PROCESS_LEASE_MS : leaseMs,
    error: (message, error) => logger.error({ err: error }, message),
  }
}
