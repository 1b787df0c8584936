/**
 * Which maintenance, if any, answers a route's requests instead of its own state: what a client
 * actually gets. Global maintenance is checked before service maintenance and both before the
 * route's own state, as enforcement does, so a disabled route of a service in maintenance answers
 * 503 maintenance, and the console must say so rather than show the route's own status.
 */
import {
  compileMaintenance,
  maintenanceBlocks,
  MAINTENANCE_OFF,
  type CompiledMaintenance,
  type MaintenanceConfig,
} from '../../core/maintenance.js'
import type { RouteState } from '../../core/route-state.js'

/** The maintenance that covers a route: `global`, its `service`'s, or none (null). */
export type CoveringMaintenance = 'global' | 'service' | null

/** The global and per-service maintenance in force, compiled once per render. */
export class MaintenanceCoverage {
  readonly #global: CompiledMaintenance
  readonly #services = new Map<string, CompiledMaintenance>()
  readonly #now: number

  /** `now` (epoch ms): the instant coverage is judged at (an end time may have passed). */
  constructor(
    global: MaintenanceConfig,
    services: Iterable<readonly [string, MaintenanceConfig]>,
    now = Date.now(),
  ) {
    this.#now = now
    this.#global = compileMaintenance(global)
    for (const [name, config] of services) {
      // Only active ones matter; the others would be compiled for nothing on every render.
      if (config.active) this.#services.set(name, compileMaintenance(config))
    }
  }

  /** No maintenance anywhere (a route's own state is what clients get). */
  static readonly NONE = new MaintenanceCoverage(MAINTENANCE_OFF, [])

  /** The maintenance that answers `state`'s requests, or null when its own state does. */
  of(state: RouteState): CoveringMaintenance {
    if (maintenanceBlocks(this.#global, state.method, state.path, state.force_active, this.#now))
      return 'global'
    const service = this.#services.get(state.service)
    if (
      service !== undefined &&
      maintenanceBlocks(service, state.method, state.path, state.force_active, this.#now)
    )
      return 'service'
    return null
  }

  /** When the maintenance covering a route of `service` ends by itself (ISO), or null. */
  endsAt(covered: CoveringMaintenance, service: string): string | null {
    const compiled =
      covered === 'global'
        ? this.#global
        : covered === 'service'
          ? this.#services.get(service)
          : undefined
    return compiled?.config.ends_at ?? null
  }
}
