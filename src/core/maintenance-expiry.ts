/**
 * The end of timed maintenance (global or per service) as a job of the engine's scheduler.
 *
 * Enforcement stops blocking at the end time by itself (`maintenanceBlocks` reads it); this job
 * makes the stored configuration and the audit log catch up, once per cluster: instances race
 * for a claim on the scope and its end time, and the winner turns maintenance off (audited as a
 * disable by `system`, platform `scheduler`). A claimant that dies before writing lets its claim
 * lapse after {@link MAINTENANCE_END_CLAIM_MS}; another instance then ends it at a later tick.
 */
import type { CompiledMaintenance } from './maintenance.js'
import type { MaintenanceOperations, MaintenanceScope } from './maintenance-operations.js'
import type { Replica } from './replica.js'
import type { ScheduledJob } from './scheduler.js'
import type { ClaimStore } from '../stores/types.js'

/** How long a claim on one scope's end keeps the other instances off it (ms). */
export const MAINTENANCE_END_CLAIM_MS = 60_000

/** What {@link maintenanceExpiryJob} needs. */
export interface MaintenanceExpiryDeps {
  replica: Replica
  operations: MaintenanceOperations
  claims: ClaimStore
}

interface Timed {
  scope: MaintenanceScope
  endsAt: number
  /** The stored end time, as written (the claim key and the compare-before-write value). */
  stored: string
}

function* timedScopes(replica: Replica): Generator<Timed> {
  const timed = (scope: MaintenanceScope, compiled: CompiledMaintenance): Timed | null =>
    compiled.active && Number.isFinite(compiled.endsAt)
      ? { scope, endsAt: compiled.endsAt, stored: compiled.config.ends_at ?? '' }
      : null
  const global = timed({ kind: 'global' }, replica.global)
  if (global !== null) yield global
  for (const [service, compiled] of replica.services) {
    const entry = timed({ kind: 'service', service }, compiled)
    if (entry !== null) yield entry
  }
}

/** The maintenance end times as a {@link ScheduledJob}, applied once per cluster. */
export function maintenanceExpiryJob(deps: MaintenanceExpiryDeps): ScheduledJob {
  /** When this instance last tried each claim (won or lost): no round trip per tick. */
  const tried = new Map<string, number>()
  return {
    name: 'maintenance end',
    nextDue(now) {
      let next = Number.POSITIVE_INFINITY
      for (const { endsAt } of timedScopes(deps.replica))
        if (endsAt > now && endsAt < next) next = endsAt
      return Number.isFinite(next) ? next : null
    },
    async runDue(now) {
      let ended = 0
      const due = new Set<string>()
      for (const { scope, endsAt, stored } of timedScopes(deps.replica)) {
        if (endsAt > now) continue
        const name = scope.kind === 'global' ? 'global' : `service:${scope.service}`
        const key = `maintenance_end:${name}:${stored}`
        due.add(key)
        const last = tried.get(key)
        // Tried again once the claim lapsed: its winner may have died before ending it.
        if (last !== undefined && now - last < MAINTENANCE_END_CLAIM_MS) continue
        tried.set(key, now)
        if (!(await deps.claims.claim(key, MAINTENANCE_END_CLAIM_MS))) continue
        if (await deps.operations.end(scope, stored)) ended += 1
      }
      // Bounded by the scopes still due.
      for (const key of tried.keys()) if (!due.has(key)) tried.delete(key)
      return ended
    },
  }
}
