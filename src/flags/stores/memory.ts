/**
 * The in-memory {@link FlagStore}: records live in Maps of this process; changes are delivered
 * synchronously to subscribers. Records are copied on the way in and out, so a caller that
 * mutates what it passed or received never changes the store behind its back.
 */
import type { Flag, Segment } from '../model.js'
import type { FlagChangeEvent, FlagChangeListener, FlagStore, FlagVersion } from '../ports.js'

/** Creates an in-memory flag store. `onListenerError` receives errors thrown by subscribers. */
export function memoryFlagStore(
  onListenerError: (error: unknown, event: FlagChangeEvent) => void = () => undefined,
): FlagStore {
  const flags = new Map<string, Flag>()
  const segments = new Map<string, Segment>()
  /** Versions by flag key, newest first; bounded per flag by each append's `keep`. */
  const history = new Map<string, FlagVersion[]>()
  const listeners = new Set<FlagChangeListener>()
  const publish = (event: FlagChangeEvent): void => {
    for (const listener of listeners) {
      try {
        listener(event)
      } catch (error) {
        onListenerError(error, event)
      }
    }
  }
  return {
    listFlags: () => Promise.resolve([...flags.values()].map((flag) => structuredClone(flag))),
    putFlag(flag) {
      const copy = structuredClone(flag)
      flags.set(flag.key, copy)
      publish({ type: 'flag', key: flag.key, flag: structuredClone(copy) })
      return Promise.resolve()
    },
    deleteFlag(key) {
      const existed = flags.delete(key)
      if (existed) publish({ type: 'flag', key, flag: null })
      return Promise.resolve(existed)
    },
    addFlagVersion(key, entry, keep) {
      const versions = history.get(key) ?? []
      const stored: FlagVersion = {
        version: (versions[0]?.version ?? 0) + 1,
        ...structuredClone(entry),
      }
      history.set(key, [stored, ...versions].slice(0, keep))
      return Promise.resolve(structuredClone(stored))
    },
    listFlagVersions: (key) => Promise.resolve(structuredClone(history.get(key) ?? [])),
    deleteFlagVersions(key) {
      history.delete(key)
      return Promise.resolve()
    },
    listSegments: () =>
      Promise.resolve([...segments.values()].map((segment) => structuredClone(segment))),
    putSegment(segment) {
      const copy = structuredClone(segment)
      segments.set(segment.key, copy)
      publish({ type: 'segment', key: segment.key, segment: structuredClone(copy) })
      return Promise.resolve()
    },
    deleteSegment(key) {
      const existed = segments.delete(key)
      if (existed) publish({ type: 'segment', key, segment: null })
      return Promise.resolve(existed)
    },
    subscribe(listener) {
      listeners.add(listener)
      return () => listeners.delete(listener)
    },
  }
}
