/**
 * Picks the {@link FlagStore} for a route-control store's backend, so flags and segments live
 * wherever the rest of the engine's state lives:
 *
 *   memory → {@link memoryFlagStore} (this process only)
 *   file   → {@link fileFlagStore}, the `flags` and `segments` sections of the same document
 *   redis  → {@link redisFlagStore}, hashes under `<prefix>flags:` and its own change channel
 *   postgres → {@link fileFlagStore} over the PostgreSQL store's shared sections; a change made
 *            by another instance reaches this one as a resync (a full reload of the flags)
 *
 * Every result has the same lifecycle ({@link ManagedFlagStore}): `connect()` after the route
 * store's `connect()`, `close()` before the route store's, and `onResync` for a reload after
 * events may have been lost (only Redis ever signals it).
 */
import type { Store } from '../../stores/types.js'
import { FLAG_SECTIONS, fileFlagStore } from './file.js'
import { memoryFlagStore } from './memory.js'
import type { FlagStore } from '../ports.js'
import { redisFlagStore, type ManagedFlagStore } from './redis.js'

export type { ManagedFlagStore } from './redis.js'

/** Options of {@link flagStoreFor}. */
export interface FlagStoreForOptions {
  /** Receives faults the store recovers from (a throwing subscriber, a malformed message). */
  onError?: (error: Error, what: string) => void
  /** Where ignored change messages are reported, as warnings (once per kind and type). */
  warn?: (message: string) => void
}

/** The flag store on the backend of `store`. */
export function flagStoreFor(
  store: Pick<Store, 'backend'>,
  options: FlagStoreForOptions = {},
): ManagedFlagStore {
  const onError = options.onError ?? (() => undefined)
  const onListenerError = (error: unknown) =>
    onError(error instanceof Error ? error : new Error(String(error)), 'flag change listener')
  const backend = store.backend
  switch (backend.kind) {
    case 'memory':
      return withoutLifecycle(memoryFlagStore(onListenerError))
    case 'file':
      return withoutLifecycle(fileFlagStore(backend.sections, onListenerError))
    case 'redis':
      return redisFlagStore(backend.redis, {
        onError,
        ...(options.warn === undefined ? {} : { warn: options.warn }),
      })
    case 'postgres': {
      const sections = backend.postgres.sections
      const names = new Set<string>(Object.values(FLAG_SECTIONS))
      return {
        ...withoutLifecycle(fileFlagStore(sections, onListenerError)),
        onResync: (listener) =>
          sections.onChange((name) => {
            if (names.has(name)) listener()
          }),
      }
    }
  }
}

/** A store that needs no connection of its own and never misses events. */
function withoutLifecycle(store: FlagStore): ManagedFlagStore {
  return {
    listFlags: () => store.listFlags(),
    putFlag: (flag) => store.putFlag(flag),
    deleteFlag: (key) => store.deleteFlag(key),
    addFlagVersion: (key, entry, keep) => store.addFlagVersion(key, entry, keep),
    listFlagVersions: (key) => store.listFlagVersions(key),
    deleteFlagVersions: (key) => store.deleteFlagVersions(key),
    listSegments: () => store.listSegments(),
    putSegment: (segment) => store.putSegment(segment),
    deleteSegment: (key) => store.deleteSegment(key),
    subscribe: (listener) => store.subscribe(listener),
    connect: () => Promise.resolve(),
    close: () => Promise.resolve(),
    onResync: () => () => undefined,
  }
}
