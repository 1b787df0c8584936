/**
 * Global and per-service maintenance configurations. While one is active, every route it
 * covers answers 503, except exempt routes and (unless `include_force_active`) force-active
 * routes. Individual route states are kept and apply again once it is turned off.
 */
import { RouteMatcher } from './route-key.js'

/** A maintenance configuration as stored and returned by the admin API. */
export interface MaintenanceConfig {
  active: boolean
  reason: string
  include_force_active: boolean
  /** Bare `/path` (every method) or `METHOD:/path` entries. */
  exempt_paths: string[]
  /**
   * When maintenance ends by itself (ISO 8601). Absent or null: it lasts until turned off.
   * Enforcement stops at this instant; the scheduler then stores and audits the end.
   */
  ends_at?: string | null
}

/** The configuration in force when none was ever stored. */
export const MAINTENANCE_OFF: Readonly<MaintenanceConfig> = Object.freeze({
  active: false,
  reason: '',
  include_force_active: false,
  exempt_paths: [],
})

/** A configuration prepared for per-request checks. */
export interface CompiledMaintenance {
  readonly config: MaintenanceConfig
  readonly active: boolean
  readonly includeForceActive: boolean
  readonly exempt: RouteMatcher
  /** Epoch ms at which maintenance stops blocking (infinity when it has no end). */
  readonly endsAt: number
}

/** Validates the exempt entries and prepares a configuration for the hot path. */
export function compileMaintenance(config: MaintenanceConfig): CompiledMaintenance {
  const exempt = new RouteMatcher(config.exempt_paths)
  const endsAt =
    config.ends_at === undefined || config.ends_at === null
      ? Number.POSITIVE_INFINITY
      : Date.parse(config.ends_at)
  return {
    config: { ...config, exempt_paths: exempt.list() },
    active: config.active,
    includeForceActive: config.include_force_active,
    exempt,
    // An unreadable end (never written by the engine) is treated as no end: fail closed.
    endsAt: Number.isNaN(endsAt) ? Number.POSITIVE_INFINITY : endsAt,
  }
}

/** True while a compiled config is on at `now` (epoch ms): active and its end not reached. */
export function maintenanceOn(maintenance: CompiledMaintenance, now: number): boolean {
  return maintenance.active && now < maintenance.endsAt
}

/**
 * True when a compiled config blocks the given route at `now` (epoch ms; the end time is
 * honoured at the exact instant, before the scheduler stores the end).
 */
export function maintenanceBlocks(
  maintenance: CompiledMaintenance,
  method: string,
  path: string,
  forceActive: boolean,
  now: number,
): boolean {
  if (!maintenanceOn(maintenance, now)) return false
  if (forceActive && !maintenance.includeForceActive) return false
  return !maintenance.exempt.matches(method, path)
}
