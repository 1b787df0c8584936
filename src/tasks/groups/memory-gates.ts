/**
 * The task gates of one process: what a manager without a durable store (or with a store that
 * has no gates) limits its grouped and rate-limited queues with. Every step is synchronous, so
 * it is atomic by construction.
 */
import type { GateDecision, GateHold, GateRequest, TaskGateStore } from '../stores/ports.js'
import {
  changeHolds,
  decideAcquire,
  holdersByKey,
  requestKeys,
  type GateState,
  type StoredGate,
} from './gate-rules.js'

/** Gates kept before spent ones are swept (each sweep drops every gate past its expiry). */
const SWEEP_AT = 10_000

/** In-process task gates. */
export function memoryGates(): TaskGateStore {
  const gates = new Map<string, StoredGate>()
  const sweep = (now: number): void => {
    if (gates.size < SWEEP_AT) return
    for (const [key, gate] of gates) if (gate.expiresAt < now) gates.delete(key)
  }
  return {
    acquire(request: GateRequest): Promise<GateDecision> {
      sweep(request.now)
      if (request.release !== undefined) {
        change(gates, request.release, null, Number.NEGATIVE_INFINITY)
      }
      const states = new Map<string, GateState | undefined>()
      for (const key of requestKeys(request)) states.set(key, gates.get(key)?.state)
      const outcome = decideAcquire(request, states)
      for (const [key, gate] of outcome.writes) gates.set(key, gate)
      return Promise.resolve(outcome.result)
    },
    release(holds: readonly GateHold[]): Promise<void> {
      // A release filters no lease by time: the caller's clock is not needed to drop its own holds.
      change(gates, holds, null, Number.NEGATIVE_INFINITY)
      return Promise.resolve()
    },
    renew(holds: readonly GateHold[], leaseUntil: number, now: number): Promise<void> {
      change(gates, holds, leaseUntil, now)
      return Promise.resolve()
    },
  }
}

function change(
  gates: Map<string, StoredGate>,
  holds: readonly GateHold[],
  leaseUntil: number | null,
  now: number,
): void {
  for (const [key, holders] of holdersByKey(holds)) {
    const next = changeHolds(gates.get(key)?.state, holders, leaseUntil, now)
    if (next === null) gates.delete(key)
    else gates.set(key, next)
  }
}
