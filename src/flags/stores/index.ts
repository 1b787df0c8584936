/**
 * Picks the {@link FlagStore} for a route-control store's backend, so flags and segments live
 * wherever the rest of the engine's state lives:
 *
 *   memory → {@link memoryFlagStore} (this process only)
 *   file   → {@link fileFlagStore}, the `flags` and `segments` sections of the same document
 *   redis  → {@link redisFlagStore}, hashes under `<prefix>flags:` and its own change channel
 *   postgres → {@link fileFlagStore} over the PostgreSQL store's shared sections; a change made
 *            by another instance reaches this one as the change of each record it names, and
 *            as a resync (a full reload of the flags) when the section was read whole
 *
 * Every result has the same lifecycle ({@link ManagedFlagStore}): `connect()` after the route
 * store's `connect()`, `close()` before the route store's, and `onResync` for a reload after
 * events may have been lost (Redis and PostgreSQL signal it).
 */
import type { PostgresHandle, Store } from '../../stores/types.js'
import { FLAG_SECTIONS, fileFlagStore } from './file.js'
import { memoryFlagStore } from './memory.js'
import type { Flag, Segment } from '../model.js'
import type { FlagChangeEvent, FlagChangeListener, FlagStore } from '../ports.js'
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
    case 'postgres':
      return postgresFlagStore(backend.postgres.sections, onListenerError)
  }
}

/**
 * Flags and segments in the PostgreSQL store's shared sections. Another instance's write names
 * the records it changed: each arrives here as the change event of that flag or segment, read
 * from the section just updated, so the replica applies it alone. When a section was read
 * whole instead (a reconnect, a missed version), `onResync` asks for a full reload.
 */
function postgresFlagStore(
  sections: PostgresHandle['sections'],
  onListenerError: (error: unknown, event: FlagChangeEvent) => void,
): ManagedFlagStore {
  const store = fileFlagStore(sections, onListenerError)
  const names = new Set<string>(Object.values(FLAG_SECTIONS))
  const listeners = new Set<FlagChangeListener>()
  const deliver = (event: FlagChangeEvent): void => {
    for (const listener of listeners) {
      try {
        listener(structuredClone(event))
      } catch (error) {
        onListenerError(error, event)
      }
    }
  }
  let following: (() => void) | null = null
  const follow = (): void => {
    following ??= sections.onChange((name, keys) => {
      if (keys === undefined) return
      for (const key of keys) {
        if (name === FLAG_SECTIONS.flags)
          deliver({ type: 'flag', key, flag: (sections.record(name, key) ?? null) as Flag | null })
        else if (name === FLAG_SECTIONS.segments)
          deliver({
            type: 'segment',
            key,
            segment: (sections.record(name, key) ?? null) as Segment | null,
          })
      }
    })
  }
  follow()
  return {
    ...withoutLifecycle(store),
    subscribe(listener) {
      const local = store.subscribe(listener)
      listeners.add(listener)
      return () => {
        local()
        listeners.delete(listener)
      }
    },
    connect() {
      follow()
      return Promise.resolve()
    },
    close() {
      following?.()
      following = null
      return Promise.resolve()
    },
    onResync: (listener) =>
      sections.onChange((name, keys) => {
        if (keys === undefined && names.has(name)) listener()
      }),
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
