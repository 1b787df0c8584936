/**
 * The rules of the task gates ({@link TaskGateStore}), as pure functions over their stored
 * states: the memory and SQL gates run them inside their atomic step, and the Redis script
 * mirrors them. A slot gate is a list of holders with leases; a rate gate is the route rate
 * limiter's moving window (the same `step`), so "20/second" means no more than 20 starts in any
 * second, never 40 across a window boundary.
 */
import {
  step,
  type CounterRule,
  type MovingWindowState,
} from '../../common/rate-limits/algorithms.js'
import type { GateDecision, GateHold, GateRate, GateRequest } from '../stores/ports.js'

/** The holders of a slot gate: `[holder, leaseUntil]` pairs. */
export interface SlotState {
  readonly kind: 'slots'
  readonly holders: readonly (readonly [string, number])[]
}

/** The state of one gate. */
export type GateState = SlotState | MovingWindowState

/** A gate's state to store, and when it holds nothing worth keeping (epoch ms). */
export interface StoredGate {
  readonly state: GateState
  readonly expiresAt: number
}

/** What an atomic step decided: the answer and the gates to write (none when refused). */
export interface GateOutcome<T> {
  readonly result: T
  readonly writes: ReadonlyMap<string, StoredGate>
}

/** Every gate key a request touches, sorted (locks are always taken in this order). */
export function requestKeys(request: GateRequest): string[] {
  const keys = new Set<string>()
  for (const slot of request.slots) keys.add(slot.key)
  for (const rate of request.rates) keys.add(rate.key)
  return [...keys].sort()
}

/** The sorted distinct keys of some holds. */
export function holdKeys(holds: readonly GateHold[]): string[] {
  return [...new Set(holds.map((hold) => hold.key))].sort()
}

function rateRule(rate: GateRate): CounterRule {
  return { algorithm: 'moving_window', count: rate.count, periodMs: rate.periodMs, burst: 0 }
}

function liveHolders(state: GateState | undefined, now: number): [string, number][] {
  if (state?.kind !== 'slots') return []
  return state.holders.filter(([, lease]) => lease >= now).map(([holder, lease]) => [holder, lease])
}

function slotGate(holders: readonly (readonly [string, number])[], now: number): StoredGate {
  let expiresAt = now
  for (const [, lease] of holders) expiresAt = Math.max(expiresAt, lease)
  return { state: { kind: 'slots', holders }, expiresAt }
}

/** Decides a start against the current states of its gates (see `TaskGateStore.acquire`). */
export function decideAcquire(
  request: GateRequest,
  states: ReadonlyMap<string, GateState | undefined>,
): GateOutcome<GateDecision> {
  const { now, holder } = request
  const writes = new Map<string, StoredGate>()
  let slotFull = false
  for (const slot of request.slots) {
    const holders = liveHolders(states.get(slot.key), now).filter(([name]) => name !== holder)
    if (holders.length >= slot.limit) slotFull = true
    holders.push([holder, request.leaseUntil])
    writes.set(slot.key, slotGate(holders, now))
  }
  let retryAfterMs: number | null = null
  for (const rate of request.rates) {
    const current = states.get(rate.key)
    const outcome = step(
      rateRule(rate),
      current?.kind === 'moving_window' ? current : undefined,
      now,
    )
    if (!outcome.allowed || outcome.next === undefined) {
      retryAfterMs = Math.max(retryAfterMs ?? 0, outcome.retryAfterMs)
    } else
      writes.set(rate.key, {
        state: outcome.next as MovingWindowState,
        expiresAt: outcome.expiresAt,
      })
  }
  if (slotFull || retryAfterMs !== null) {
    return { result: { allowed: false, retryAfterMs }, writes: new Map() }
  }
  return { result: { allowed: true, retryAfterMs: null }, writes }
}

/**
 * Applies a release (`leaseUntil` null) or a renewal to the holds of one slot gate: its new
 * state, or null when it holds nothing any more (delete it). Holds name slot gates only.
 */
export function changeHolds(
  state: GateState | undefined,
  holders: ReadonlySet<string>,
  leaseUntil: number | null,
  now: number,
): StoredGate | null {
  if (state?.kind !== 'slots') return null
  const kept: [string, number][] = []
  for (const [holder, lease] of liveHolders(state, now)) {
    if (!holders.has(holder)) kept.push([holder, lease])
    else if (leaseUntil !== null) kept.push([holder, Math.max(lease, leaseUntil)])
  }
  return kept.length === 0 ? null : slotGate(kept, now)
}

/** Groups holds by key: key → holders. */
export function holdersByKey(holds: readonly GateHold[]): Map<string, Set<string>> {
  const byKey = new Map<string, Set<string>>()
  for (const { key, holder } of holds) {
    const set = byKey.get(key) ?? new Set<string>()
    set.add(holder)
    byKey.set(key, set)
  }
  return byKey
}
