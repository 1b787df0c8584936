/**
 * The in-memory store: the default backend. Nothing is shared between processes and nothing
 * survives a restart; changes are delivered synchronously to listeners of this process.
 */
import { LocalChangeFeed } from '../core/events.js'
import type { MaintenanceConfig } from '../core/maintenance.js'
import type { RouteState } from '../core/route-state.js'
import type { Store } from './types.js'

const clone = <T>(value: T): T => structuredClone(value)

/** Creates an in-memory {@link Store}. Values are copied in and out, as a real backend would. */
export function memoryStore(): Store {
  const feed = new LocalChangeFeed((error) => {
    console.error('[switchyard] change listener failed:', error)
  })
  const overrides = new Map<string, RouteState>()
  const services = new Map<string, MaintenanceConfig>()
  let global: MaintenanceConfig | null = null
  const overrideKey = (service: string, route: string) => `${service}\u0000${route}`

  return {
    kind: 'memory',
    changes: feed,
    routes: {
      list: () => Promise.resolve([...overrides.values()].map(clone)),
      put(state) {
        overrides.set(overrideKey(state.service, state.route), clone(state))
        feed.publish({
          type: 'route_state',
          service: state.service,
          route: state.route,
          state: clone(state),
        })
        return Promise.resolve()
      },
      delete(service, route) {
        const existed = overrides.delete(overrideKey(service, route))
        if (existed) feed.publish({ type: 'route_state', service, route, state: null })
        return Promise.resolve(existed)
      },
    },
    maintenance: {
      getGlobal: () => Promise.resolve(global === null ? null : clone(global)),
      putGlobal(config) {
        global = clone(config)
        feed.publish({ type: 'global_maintenance', config: clone(config) })
        return Promise.resolve()
      },
      listServices: () =>
        Promise.resolve(new Map([...services].map(([name, c]) => [name, clone(c)]))),
      putService(service, config) {
        services.set(service, clone(config))
        feed.publish({ type: 'service_maintenance', service, config: clone(config) })
        return Promise.resolve()
      },
    },
    connect: () => Promise.resolve(),
    close: () => Promise.resolve(),
  }
}
