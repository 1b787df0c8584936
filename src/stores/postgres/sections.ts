/**
 * Named JSON sections on PostgreSQL, for the modules that keep their records as sections of
 * the file store's document (flags and segments, rate-limit policies, SDK registrations): the
 * same `FileSections` port, shared by every instance.
 *
 * Every section is one row (`<prefix>sections`) with its own version. This instance holds the
 * sections it has read in memory, so a read is synchronous as the port requires; a write
 * replaces the held value at once and then stores it only if the row is still at the version
 * this instance last saw (optimistic concurrency). Two instances writing one section at the
 * same moment cannot overwrite each other: the later write is refused with a
 * {@link ConcurrentWriteError} (409 in the admin API), its section reloaded, and the caller
 * may try again. A write is refused the same way when another instance's change was applied
 * here after the caller read the section, since its value was built on what it read.
 *
 * Each stored write is announced on the store's channel with the records (top-level members)
 * it changed: `<version>|<origin>|section|"flags"|["checkout"]`. Another instance that holds
 * the version just before reads only those records (`value::json -> key`, which keeps their
 * text as written), applies them to the section it holds and tells the module owning it which
 * records changed. The whole section is read again instead when the receiver missed a version,
 * when a write changed more than {@link MAX_ANNOUNCED_KEYS} records or their names would make
 * the payload long or hold a NUL (then announced as `section|"flags"`), after the listener
 * reconnected, and after a refused write. A read only ever moves a held section forward: reads
 * and notifications cross on the way, and a reload must not undo a change applied meanwhile.
 */
import { ConcurrentWriteError, toError } from '../../core/errors.js'
import type { FileSections } from '../types.js'
import type { PostgresConnection } from './connection.js'

/** Most records a write names in its notification; a larger change announces the section. */
const MAX_ANNOUNCED_KEYS = 32

/** Longest list of record names (as JSON) a notification carries. */
const MAX_KEYS_BYTES = 2000

/** The {@link FileSections} of the PostgreSQL store, with what the store drives them with. */
export interface PostgresSections extends FileSections {
  /** Reads every section (connect; after the listener reconnected) and tells the listeners. */
  loadAll(): Promise<void>
  /**
   * Another instance stored `name` at `version`, changing the records `keys` (absent: not
   * said): applies those records when this instance holds the version before, else reloads
   * the section.
   */
  changed(name: string, version: number, keys?: readonly string[]): Promise<void>
  /**
   * Adds a listener for sections changed by other instances; returns the unsubscriber.
   * `keys`: the records that changed, or absent when the whole section was read again.
   */
  onChange(listener: (name: string, keys?: readonly string[]) => void): () => void
  /** A copy of one record of a held section (an object of records), or undefined. */
  record(name: string, key: string): unknown
}

interface Held {
  value: unknown
  version: number
  /**
   * Counts the changes applied here that did not come from this instance's writes (reloads,
   * other instances' records): a write built before one of them is refused.
   */
  generation: number
  /** The queue of this instance's writes of the section (one at a time, in order). */
  writing: Promise<unknown>
}

type Records = Record<string, unknown>

function isRecords(value: unknown): value is Records {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/**
 * The records that differ between two values of a section, or undefined when the section is
 * not an object of records or too many changed to name.
 */
function changedKeys(before: unknown, after: unknown): string[] | undefined {
  const previous = before === undefined ? {} : before
  if (!isRecords(previous) || !isRecords(after)) return undefined
  const keys: string[] = []
  for (const key of new Set([...Object.keys(previous), ...Object.keys(after)])) {
    // PostgreSQL text cannot hold NUL, so such a record cannot be read by its name (rate-limit
    // route records are keyed `service\0route`): the receivers read the whole section instead.
    if (key.includes('\u0000')) return undefined
    const was = Object.hasOwn(previous, key) ? JSON.stringify(previous[key]) : undefined
    const is = Object.hasOwn(after, key) ? JSON.stringify(after[key]) : undefined
    if (was === is) continue
    keys.push(key)
    if (keys.length > MAX_ANNOUNCED_KEYS) return undefined
  }
  return JSON.stringify(keys).length > MAX_KEYS_BYTES ? undefined : keys
}

/**
 * Creates the sections of a store (`announce(name, keys)`: the notification payload of a
 * write, `keys` absent when the whole section is announced).
 */
export function postgresSections(
  connection: PostgresConnection,
  prefix: string,
  announce: (name: string, keys?: readonly string[]) => string,
  onListenerError: (error: unknown) => void,
): PostgresSections {
  const held = new Map<string, Held>()
  const listeners = new Set<(name: string, keys?: readonly string[]) => void>()
  const table = `${prefix}sections`

  function tell(name: string, keys?: readonly string[]): void {
    for (const listener of listeners) {
      try {
        listener(name, keys)
      } catch (error) {
        onListenerError(error)
      }
    }
  }

  function entry(name: string): Held {
    let found = held.get(name)
    if (found === undefined) {
      found = { value: undefined, version: 0, generation: 0, writing: Promise.resolve() }
      held.set(name, found)
    }
    return found
  }

  async function reload(name: string): Promise<void> {
    const { rows } = await connection.query<{ value: string; version: string }>(
      `SELECT value, version FROM ${table} WHERE name = $1`,
      [name],
    )
    hold(name, rows[0])
  }

  /**
   * Holds a row read by a reload. A row older than what is held is skipped: another
   * instance's change may have been applied here while the read was on its way, and the read
   * must not roll it back. A missing row leaves a held section alone for the same reason (a
   * read sent before the section's first write); sections are never deleted.
   */
  function hold(name: string, row: { value: string; version: string } | undefined): void {
    const target = entry(name)
    const version = row === undefined ? 0 : Number(row.version)
    if (version < target.version || (row === undefined && target.version > 0)) return
    target.value = row === undefined ? undefined : (JSON.parse(row.value) as unknown)
    target.version = version
    target.generation++
  }

  /** Holds what the database has again and says so; a refused write's value is dropped. */
  async function restore(name: string): Promise<void> {
    await reload(name)
    tell(name)
  }

  async function store(
    name: string,
    value: unknown,
    keys: string[] | undefined,
    generation: number,
  ): Promise<void> {
    const target = entry(name)
    if (target.generation !== generation) {
      // Another change was applied here after the caller read the section: its value may
      // lack that change, so it is not stored over it.
      await restore(name).catch(() => undefined)
      throw conflict(name)
    }
    const rows = await connection
      .query<{ version: string }>(
        `WITH w AS (
           INSERT INTO ${table} (name, value, version) VALUES ($1, $2, 1)
           ON CONFLICT (name) DO UPDATE SET value = excluded.value, version = ${table}.version + 1
           WHERE ${table}.version = $3
           RETURNING version)
         SELECT version, pg_notify($4, version::text || $5) FROM w`,
        [name, JSON.stringify(value), target.version, connection.channel, announce(name, keys)],
      )
      .then(
        (result) => result.rows,
        async (error: unknown) => {
          // Not stored: hold what the database has again (once it answers; until then the
          // reload after the listener reconnects does it), so reads do not show a lost write.
          await restore(name).catch(() => undefined)
          throw toError(error)
        },
      )
    const row = rows[0]
    if (row === undefined) {
      await restore(name)
      throw conflict(name)
    }
    target.version = Number(row.version)
  }

  /**
   * Applies the records `keys` of another instance's write at `version`, read from the row:
   * `applied`; `superseded` when a reload ran meanwhile and holds this version or a newer one
   * (it told the listeners); `whole` when the section must be read whole instead (a missed
   * version, a section that is not an object of records, a record name PostgreSQL cannot take
   * as text, a row that is gone, a reload that read the row before this version).
   */
  async function applyRecords(
    name: string,
    version: number,
    keys: readonly string[],
  ): Promise<'applied' | 'superseded' | 'whole'> {
    const target = entry(name)
    if (version !== target.version + 1 || keys.length > MAX_ANNOUNCED_KEYS) return 'whole'
    if (keys.some((key) => key.includes('\u0000'))) return 'whole'
    if (target.value !== undefined && !isRecords(target.value)) return 'whole'
    const generation = target.generation
    const found = new Map<string, unknown>()
    if (keys.length > 0) {
      const { rows } = await connection.query<{ key: string; record: string | null }>(
        `SELECT k.key, (s.value::json -> k.key)::text AS record
           FROM ${table} s CROSS JOIN unnest($2::text[]) AS k(key)
          WHERE s.name = $1`,
        [name, keys],
      )
      if (rows.length !== keys.length) return 'whole'
      for (const row of rows) {
        if (row.record !== null) found.set(row.key, JSON.parse(row.record) as unknown)
      }
    }
    // A reload ran meanwhile. Its read may have been sent before this change was stored, so
    // the section is read again unless what it holds now is at least this version.
    if (target.generation !== generation) return target.version >= version ? 'superseded' : 'whole'
    const named = new Set(keys)
    // Built from entries, so that any key (even `__proto__`) is an own record.
    target.value = Object.fromEntries([
      ...Object.entries(isRecords(target.value) ? target.value : {}).filter(
        ([key]) => !named.has(key),
      ),
      ...found,
    ])
    target.version = version
    target.generation++
    return 'applied'
  }

  return {
    read(name) {
      const value = held.get(name)?.value
      return value === undefined ? undefined : structuredClone(value)
    },
    record(name, key) {
      const value = held.get(name)?.value
      if (!isRecords(value) || !Object.hasOwn(value, key)) return undefined
      return structuredClone(value[key])
    },
    write(name, value) {
      const target = entry(name)
      const keys = changedKeys(target.value, value)
      const generation = target.generation
      target.value = structuredClone(value)
      const done = target.writing.then(() => store(name, value, keys, generation))
      target.writing = done.catch(() => undefined)
      return done
    },
    async loadAll() {
      const { rows } = await connection.query<{ name: string; value: string; version: string }>(
        `SELECT name, value, version FROM ${table}`,
      )
      const seen = new Set<string>()
      for (const row of rows) {
        hold(row.name, row)
        seen.add(row.name)
      }
      for (const name of held.keys()) if (!seen.has(name)) hold(name, undefined)
      for (const name of held.keys()) tell(name)
    },
    async changed(name, version, keys) {
      if (version <= (held.get(name)?.version ?? 0)) return
      const target = entry(name)
      await target.writing
      if (version <= target.version) return
      const outcome = keys === undefined ? 'whole' : await applyRecords(name, version, keys)
      if (outcome === 'applied') tell(name, keys)
      else if (outcome === 'whole') await restore(name)
    },
    onChange(listener) {
      listeners.add(listener)
      return () => listeners.delete(listener)
    },
  }
}

function conflict(name: string): ConcurrentWriteError {
  return new ConcurrentWriteError(
    `The "${name}" records were changed by another instance at the same time; this change was not saved, try again.`,
    { section: name },
  )
}
