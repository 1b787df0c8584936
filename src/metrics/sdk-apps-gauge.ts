/**
 * The central server's gauge of connected SDK apps, shared by the plugin and `switchyard serve`.
 */
import type { Engine } from '../core/engine.js'
import type { GaugeDefinition } from './registry.js'

/**
 * `switchyard_sdk_apps_connected{service}`: open SDK event streams of each service the engine
 * knows (0 when none), so the series stay as bounded as the services.
 */
export function sdkAppsGauge(engine: Engine, read: () => Map<string, number>): GaugeDefinition {
  return {
    name: 'switchyard_sdk_apps_connected',
    help: 'SDK apps connected to this central server (open event streams), by service.',
    labelNames: ['service'],
    read: () => {
      const counts = read()
      return engine
        .listServices()
        .map((service) => ({ labels: { service }, value: counts.get(service) ?? 0 }))
    },
  }
}
