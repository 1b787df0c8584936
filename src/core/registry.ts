/**
 * The route registry: every registered route of every service, by service and route key.
 * A bare path resolves to every method registered under it.
 */
import { RouteNotFoundError } from './errors.js'
import { formatRouteKey, type HttpMethod, type RouteKey } from './route-key.js'
import type { RouteDeclaration } from './route-state.js'
import { RouteSlot } from './route-slot.js'

/** Registered routes, grouped by service. */
export class RouteRegistry {
  private readonly services = new Map<string, Map<string, RouteSlot>>()

  constructor(private readonly env: string) {}

  /**
   * Registers one method of one path (idempotent: registering the same route again returns its
   * slot, so a re-registered app does not lose runtime state).
   */
  register(
    service: string,
    method: HttpMethod,
    path: string,
    declaration: RouteDeclaration | null,
  ): RouteSlot {
    const route = formatRouteKey(method, path)
    let routes = this.services.get(service)
    if (routes === undefined) {
      routes = new Map()
      this.services.set(service, routes)
    }
    const existing = routes.get(route)
    if (existing !== undefined) return existing
    const slot = new RouteSlot({ route, method, path, service }, declaration, this.env)
    routes.set(route, slot)
    return slot
  }

  /**
   * Forgets one registered route (a route an SDK app no longer declares); resolves whether it
   * was registered. Its stored override, if any, stays in the store: a route that comes back
   * finds its runtime state again.
   */
  remove(service: string, route: string): boolean {
    const routes = this.services.get(service)
    if (routes === undefined || !routes.delete(route)) return false
    if (routes.size === 0) this.services.delete(service)
    return true
  }

  /** The slot of one route, if registered. */
  get(service: string, route: string): RouteSlot | undefined {
    return this.services.get(service)?.get(route)
  }

  /**
   * The slots a route key addresses in a service: one for `METHOD:/path`, every method for a
   * bare `/path`. Throws {@link RouteNotFoundError} when nothing matches.
   */
  resolve(service: string, key: RouteKey): RouteSlot[] {
    const routes = this.services.get(service)
    let slots: RouteSlot[] = []
    if (routes !== undefined) {
      if (key.method !== null) {
        const slot = routes.get(formatRouteKey(key.method, key.path))
        if (slot !== undefined) slots = [slot]
      } else {
        slots = [...routes.values()].filter((slot) => slot.path === key.path)
      }
    }
    if (slots.length === 0) {
      const shown = key.method === null ? key.path : formatRouteKey(key.method, key.path)
      throw new RouteNotFoundError(`No route ${shown} is registered in service "${service}".`, {
        route: shown,
        service,
      })
    }
    return slots
  }

  /** Every slot, optionally of one service, sorted by path then method. */
  list(service?: string): RouteSlot[] {
    const groups =
      service === undefined
        ? [...this.services.values()]
        : [this.services.get(service) ?? new Map()]
    const slots = groups.flatMap((routes) => [...routes.values()] as RouteSlot[])
    return slots.sort((a, b) =>
      a.path === b.path ? a.method.localeCompare(b.method) : a.path.localeCompare(b.path),
    )
  }

  /** Names of services with at least one registered route. */
  serviceNames(): string[] {
    return [...this.services.keys()].sort()
  }
}
