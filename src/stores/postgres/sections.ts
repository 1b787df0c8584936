/**
 * Named JSON sections on PostgreSQL, for the modules that keep their records as sections of
 * the file store's document (flags and segments, rate-limit policies, SDK registrations): the
 * same `FileSections` port, shared by every instance.
 *
 * Every section is one row (`<prefix>sections`) with its own version. This instance holds the
 * sections it has read in memory, so a read is synchronous as the port requires; a write
 * replaces the held value at once and then stores it only if the row is still at the version
 * this instance last saw (optimistic concurrency). Two instances writing one section at the
 * same moment cannot overwrite each other: the later write is refused with an error, its
 * section reloaded, and the caller may try again. Each stored write is announced on the
 * store's channel (`<version>|<origin>|section|<name>`); other instances reload that section
 * and tell the module owning it, which reloads its records from it.
 */
import { toError } from '../../core/errors.js'
import type { FileSections } from '../types.js'
import type { PostgresConnection } from './connection.js'

/** The {@link FileSections} of the PostgreSQL store, with what the store drives them with. */
export interface PostgresSections extends FileSections {
  /** Reads every section (connect; after the listener reconnected) and tells the listeners. */
  loadAll(): Promise<void>
  /** Another instance stored `name` at `version`: reloads it when newer than the one held. */
  changed(name: string, version: number): Promise<void>
  /** Adds a listener for sections changed by other instances; returns the unsubscriber. */
  onChange(listener: (name: string) => void): () => void
}

interface Held {
  value: unknown
  version: number
  /** The queue of this instance's writes of the section (one at a time, in order). */
  writing: Promise<unknown>
}

/** Creates the sections of a store (`announce(name)`: the notification payload of a write). */
export function postgresSections(
  connection: PostgresConnection,
  prefix: string,
  announce: (name: string) => string,
  onListenerError: (error: unknown) => void,
): PostgresSections {
  const held = new Map<string, Held>()
  const listeners = new Set<(name: string) => void>()
  const table = `${prefix}sections`

  function tell(name: string): void {
    for (const listener of listeners) {
      try {
        listener(name)
      } catch (error) {
        onListenerError(error)
      }
    }
  }

  function entry(name: string): Held {
    let found = held.get(name)
    if (found === undefined) {
      found = { value: undefined, version: 0, writing: Promise.resolve() }
      held.set(name, found)
    }
    return found
  }

  async function reload(name: string): Promise<void> {
    const { rows } = await connection.query<{ value: string; version: string }>(
      `SELECT value, version FROM ${table} WHERE name = $1`,
      [name],
    )
    const target = entry(name)
    const row = rows[0]
    target.value = row === undefined ? undefined : (JSON.parse(row.value) as unknown)
    target.version = row === undefined ? 0 : Number(row.version)
  }

  async function store(name: string, value: unknown): Promise<void> {
    const target = entry(name)
    const rows = await connection
      .query<{ version: string }>(
        `WITH w AS (
           INSERT INTO ${table} (name, value, version) VALUES ($1, $2, 1)
           ON CONFLICT (name) DO UPDATE SET value = excluded.value, version = ${table}.version + 1
           WHERE ${table}.version = $3
           RETURNING version)
         SELECT version, pg_notify($4, version::text || $5) FROM w`,
        [name, JSON.stringify(value), target.version, connection.channel, announce(name)],
      )
      .then(
        (result) => result.rows,
        async (error: unknown) => {
          // Not stored: hold what the database has again (once it answers; until then the
          // reload after the listener reconnects does it), so reads do not show a lost write.
          await reload(name).then(
            () => tell(name),
            () => undefined,
          )
          throw toError(error)
        },
      )
    const row = rows[0]
    if (row === undefined) {
      await reload(name)
      tell(name)
      throw new Error(
        `The "${name}" records were changed by another instance at the same time; this change was not saved, try again.`,
      )
    }
    target.version = Number(row.version)
  }

  return {
    read(name) {
      const value = held.get(name)?.value
      return value === undefined ? undefined : structuredClone(value)
    },
    write(name, value) {
      const target = entry(name)
      target.value = structuredClone(value)
      const done = target.writing.then(() => store(name, value))
      target.writing = done.catch(() => undefined)
      return done
    },
    async loadAll() {
      const { rows } = await connection.query<{ name: string; value: string; version: string }>(
        `SELECT name, value, version FROM ${table}`,
      )
      const seen = new Set<string>()
      for (const row of rows) {
        const target = entry(row.name)
        target.value = JSON.parse(row.value) as unknown
        target.version = Number(row.version)
        seen.add(row.name)
      }
      for (const [name, target] of held) {
        if (seen.has(name)) continue
        target.value = undefined
        target.version = 0
      }
      for (const name of held.keys()) tell(name)
    },
    async changed(name, version) {
      if (version <= (held.get(name)?.version ?? 0)) return
      await entry(name).writing
      await reload(name)
      tell(name)
    },
    onChange(listener) {
      listeners.add(listener)
      return () => listeners.delete(listener)
    },
  }
}
