/**
 * The persistence port of the flag subsystem: flags and segments as first-class records with
 * small, explicit async methods. Every backend implements it (memory here; the lead's file and
 * Redis stores adapt their own storage to it), and every instance's replica is kept current
 * through {@link FlagStore.subscribe}.
 */
import type { Flag, Segment } from './model.js'

/**
 * A change of one record, as stores publish it and replicas apply it (the `flag` and
 * `segment` SSE event types of the admin stream). `null` means the record was deleted.
 */
export type FlagChangeEvent =
  | { type: 'flag'; key: string; flag: Flag | null }
  | { type: 'segment'; key: string; segment: Segment | null }

/** One stored version of a flag: the whole flag as one write left it. */
export interface FlagVersion {
  /** 1 for the first write of the flag, then one more for each write. */
  version: number
  /** ISO 8601 UTC. */
  changed_at: string
  /** Who made the write. */
  actor: string
  /** The flag after the write. */
  flag: Flag
}

/** What {@link FlagStore.addFlagVersion} is given: a version without its number. */
export type NewFlagVersion = Omit<FlagVersion, 'version'>

/** Receives {@link FlagChangeEvent}s. */
export type FlagChangeListener = (event: FlagChangeEvent) => void

/**
 * Storage of flags and segments.
 *
 * Semantics every implementation keeps: `put*` creates or replaces the whole record by key and
 * resolves once it is durable; `delete*` resolves true when a record existed; `list*` returns
 * every record in no particular order, as copies the caller may keep. After a durable write
 * the store publishes one event to every subscriber — on every instance sharing the store,
 * including the one that wrote (replicas apply events idempotently).
 */
export interface FlagStore {
  listFlags(): Promise<Flag[]>
  putFlag(flag: Flag): Promise<void>
  deleteFlag(key: string): Promise<boolean>
  /**
   * Appends a version to the flag's history, numbered one more than the newest kept (1 for the
   * first), and drops the oldest beyond `keep`; resolves with the stored version once durable.
   * Writing the flag and its version are two calls: a crash between them loses that version,
   * never the flag.
   */
  addFlagVersion(key: string, entry: NewFlagVersion, keep: number): Promise<FlagVersion>
  /** The flag's kept versions, newest first (empty when it has none). */
  listFlagVersions(key: string): Promise<FlagVersion[]>
  /** Forgets the flag's history (after the flag was deleted); numbering starts over. */
  deleteFlagVersions(key: string): Promise<void>
  listSegments(): Promise<Segment[]>
  putSegment(segment: Segment): Promise<void>
  deleteSegment(key: string): Promise<boolean>
  /** Adds a listener for changes; returns the function that removes it. */
  subscribe(listener: FlagChangeListener): () => void
  /**
   * True when another process owns the records and sends every write back as a change event
   * (an SDK app's store forwards to its server): the service then neither applies its own
   * writes to the replica nor audits them, so the replica only ever holds the owner's records
   * and each change is audited once, by the owner.
   */
  readonly appliedByFeed?: boolean
}
