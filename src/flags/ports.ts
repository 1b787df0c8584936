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
