/**
 * The live replica: every route state and maintenance configuration this engine enforces,
 * held in memory so that the per-request check never waits on the store. It is loaded at
 * startup and kept current by the change feed (and by this engine's own writes, applied at
 * once so the very next request sees them).
 */
import type { ChangeEvent } from './events.js'
import {
  compileMaintenance,
  MAINTENANCE_OFF,
  type CompiledMaintenance,
  type MaintenanceConfig,
} from './maintenance.js'
import type { RouteRegistry } from './registry.js'
import type { RouteState } from './route-state.js'
import type { RouteSlot } from './route-slot.js'

const overrideKey = (service: string, route: string) => `${service}\u0000${route}`

/** In-memory copy of the shared state, applied to the registry's slots. */
export class Replica {
  /** Overrides by service + route, including those of routes not registered (yet) here. */
  private readonly overrides = new Map<string, RouteState>()
  /** The compiled global maintenance configuration. */
  global: CompiledMaintenance = compileMaintenance(MAINTENANCE_OFF)
  /** Compiled per-service maintenance configurations. */
  readonly services = new Map<string, CompiledMaintenance>()

  constructor(private readonly registry: RouteRegistry) {}

  /** Replaces everything with a full snapshot from the store. */
  load(snapshot: {
    overrides: RouteState[]
    global: MaintenanceConfig | null
    services: Map<string, MaintenanceConfig>
  }): void {
    const previous = [...this.overrides.values()]
    this.overrides.clear()
    for (const state of snapshot.overrides)
      this.overrides.set(overrideKey(state.service, state.route), state)
    for (const state of previous) {
      if (!this.overrides.has(overrideKey(state.service, state.route))) {
        this.registry.get(state.service, state.route)?.setOverride(null)
      }
    }
    for (const state of snapshot.overrides)
      this.registry.get(state.service, state.route)?.setOverride(state)
    this.global = compileMaintenance(snapshot.global ?? MAINTENANCE_OFF)
    this.services.clear()
    for (const [service, config] of snapshot.services)
      this.services.set(service, compileMaintenance(config))
  }

  /** Applies one change event (idempotent: applying the same event twice changes nothing). */
  apply(event: ChangeEvent): void {
    switch (event.type) {
      case 'route_state': {
        const key = overrideKey(event.service, event.route)
        if (event.state === null) this.overrides.delete(key)
        else this.overrides.set(key, event.state)
        this.registry.get(event.service, event.route)?.setOverride(event.state)
        return
      }
      case 'global_maintenance':
        this.global = compileMaintenance(event.config)
        return
      case 'service_maintenance':
        this.services.set(event.service, compileMaintenance(event.config))
        return
    }
  }

  /** Gives a newly registered slot the override already known for it. */
  attach(slot: RouteSlot): void {
    const override = this.overrides.get(overrideKey(slot.service, slot.route))
    if (override !== undefined && slot.override !== override) slot.setOverride(override)
  }

  /** The maintenance configuration of one service (off when none is stored). */
  serviceMaintenance(service: string): CompiledMaintenance {
    return this.services.get(service) ?? OFF
  }
}

const OFF = compileMaintenance(MAINTENANCE_OFF)
