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
}

/** Validates the exempt entries and prepares a configuration for the hot path. */
export function compileMaintenance(config: MaintenanceConfig): CompiledMaintenance {
  const exempt = new RouteMatcher(config.exempt_paths)
  return {
    config: { ...config, exempt_paths: exempt.list() },
    active: config.active,
    includeForceActive: config.include_force_active,
    exempt,
  }
}

/** True when a compiled config blocks the given route. */
export function maintenanceBlocks(
  maintenance: CompiledMaintenance,
  method: string,
  path: string,
  forceActive: boolean,
): boolean {
  if (!maintenance.active) return false
  if (forceActive && !maintenance.includeForceActive) return false
  return !maintenance.exempt.matches(method, path)
}
