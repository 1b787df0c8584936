/**
 * Store selection by backend name (`CTL_BACKEND`). Backends with drivers are loaded lazily so
 * that a user of the memory default installs nothing else.
 */
import { ConfigError } from '../core/errors.js'
import { memoryStore } from './memory.js'
import type { Store } from './types.js'

/** Backend names accepted by `CTL_BACKEND`. */
export const BACKENDS = ['memory'] as const

/** One of {@link BACKENDS}. */
export type BackendName = (typeof BACKENDS)[number]

/** Creates the store for a backend name; an unknown name is a {@link ConfigError}, never a silent fallback. */
export function createStore(backend: string): Store {
  switch (backend) {
    case 'memory':
      return memoryStore()
    default:
      throw new ConfigError(
        `Unknown backend ${JSON.stringify(backend)} (CTL_BACKEND): expected one of ${BACKENDS.join(', ')}.`,
      )
  }
}

export { memoryStore }
export type { Store, RouteStateStore, MaintenanceStore, ChangeFeedPort } from './types.js'
