/**
 * The file {@link FlagStore}: flags and segments kept in two named sections (`flags`,
 * `segments`) of the file store's JSON document, each an object from key to record. They are
 * written with the same atomic, grouped write as every route-control record, so a crash leaves
 * either the old document or the new one.
 *
 * Why every call reads the section afresh instead of caching it: the document is the one
 * source of truth, loaded by the route-control store's `connect()`; reading it at the moment
 * of each call means this store needs no lifecycle of its own. A read-modify-write is atomic
 * because reading and replacing a section are both synchronous (only durability is awaited).
 * Changes are delivered to subscribers of this process once durable: the file backend is
 * single-process by design.
 */
import { ConfigError, toError } from '../../core/errors.js'
import type { FileSections } from '../../stores/types.js'
import type { Flag, Segment } from '../model.js'
import type { FlagChangeEvent, FlagChangeListener, FlagStore, FlagVersion } from '../ports.js'

/** Names of the document sections this store owns (`flag_versions`: history by flag key, newest first). */
export const FLAG_SECTIONS = {
  flags: 'flags',
  segments: 'segments',
  versions: 'flag_versions',
} as const

type Records<T> = Record<string, T>

/** Runs a synchronous read as a promise, so that a failure is a rejection, never a throw. */
function attempt<T>(read: () => T): Promise<T> {
  try {
    return Promise.resolve(read())
  } catch (error) {
    return Promise.reject(toError(error))
  }
}

/** Creates a flag store on the file store's sections. `onListenerError` receives subscriber errors. */
export function fileFlagStore(
  sections: FileSections,
  onListenerError: (error: unknown, event: FlagChangeEvent) => void = () => undefined,
): FlagStore {
  const listeners = new Set<FlagChangeListener>()
  const publish = (event: FlagChangeEvent): void => {
    for (const listener of listeners) {
      try {
        listener(structuredClone(event))
      } catch (error) {
        onListenerError(error, event)
      }
    }
  }
  const read = <T>(name: string): Records<T> => {
    const value = sections.read(name)
    if (value === undefined || value === null) return {}
    if (typeof value !== 'object' || Array.isArray(value))
      throw new ConfigError(
        `The "${name}" section of the state file is not an object of records by key; fix or remove it and restart.`,
        { section: name },
      )
    return value as Records<T>
  }

  /** Stores a copy of `record`; resolves with that copy once durable. */
  async function put<T extends { key: string }>(name: string, record: T): Promise<T> {
    const copy = structuredClone(record)
    const records = read<T>(name)
    records[copy.key] = copy
    await sections.write(name, records)
    return copy
  }

  async function remove(name: string, key: string): Promise<boolean> {
    const records = read<unknown>(name)
    if (!Object.hasOwn(records, key)) return false
    await sections.write(
      name,
      Object.fromEntries(Object.entries(records).filter(([recordKey]) => recordKey !== key)),
    )
    return true
  }

  return {
    listFlags: () => attempt(() => Object.values(read<Flag>(FLAG_SECTIONS.flags))),
    async putFlag(flag) {
      const stored = await put(FLAG_SECTIONS.flags, flag)
      publish({ type: 'flag', key: stored.key, flag: stored })
    },
    async deleteFlag(key) {
      const existed = await remove(FLAG_SECTIONS.flags, key)
      if (existed) publish({ type: 'flag', key, flag: null })
      return existed
    },
    async addFlagVersion(key, entry, keep) {
      const all = read<FlagVersion[]>(FLAG_SECTIONS.versions)
      const versions = Object.hasOwn(all, key) ? (all[key] ?? []) : []
      const stored: FlagVersion = {
        version: (versions[0]?.version ?? 0) + 1,
        ...structuredClone(entry),
      }
      all[key] = [stored, ...versions].slice(0, keep)
      await sections.write(FLAG_SECTIONS.versions, all)
      return structuredClone(stored)
    },
    listFlagVersions: (key) =>
      attempt(() => {
        const all = read<FlagVersion[]>(FLAG_SECTIONS.versions)
        return Object.hasOwn(all, key) ? (all[key] ?? []) : []
      }),
    async deleteFlagVersions(key) {
      await remove(FLAG_SECTIONS.versions, key)
    },
    listSegments: () => attempt(() => Object.values(read<Segment>(FLAG_SECTIONS.segments))),
    async putSegment(segment) {
      const stored = await put(FLAG_SECTIONS.segments, segment)
      publish({ type: 'segment', key: stored.key, segment: stored })
    },
    async deleteSegment(key) {
      const existed = await remove(FLAG_SECTIONS.segments, key)
      if (existed) publish({ type: 'segment', key, segment: null })
      return existed
    },
    subscribe(listener) {
      listeners.add(listener)
      return () => listeners.delete(listener)
    },
  }
}
