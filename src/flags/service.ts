/**
 * The flag service: the operations on flags and segments (save, get, list,
 * delete, enable, disable, merge-patch, scheduled changes), the in-memory replica the
 * evaluator reads, and evaluation itself.
 *
 * Writes are validated completely before anything is stored, then go to the {@link FlagStore},
 * then are applied to this replica at once (so the very next evaluation here sees them) and
 * reported as an audit {@link Operation}. Other instances sharing the store receive the
 * store's change events and apply them with {@link FlagService.applyRemote}. Writes of one
 * service run one at a time, so validation always sees the state the write will land on.
 */
import type { Clock } from '../core/clock.js'
import { systemClock } from '../core/clock.js'
import { ConfigError, toError, ValidationError } from '../core/errors.js'
import { auditDiff, type AuditDiff } from '../core/audit-diff.js'
import type { ActorOptions, Operation } from '../core/operations.js'
import { compileFlag, compileSegment } from './compile.js'
import { FLAG_BOOKKEEPING_FIELDS } from './history.js'
import { toEvaluationContext, type FlatContext } from './context.js'
import {
  FlagExistsError,
  FlagInUseError,
  FlagNotFoundError,
  FlagScheduleNotFoundError,
  FlagVersionNotFoundError,
  SegmentInUseError,
  SegmentNotFoundError,
} from './errors.js'
import { evaluateFlag, type FlagSnapshot } from './evaluator.js'
import { memoryFlagStore } from './stores/memory.js'
import { applyMergePatch } from './merge-patch.js'
import type {
  EvaluationContext,
  Flag,
  ResolutionDetails,
  ScheduledChange,
  Segment,
} from './model.js'
import { MAX_SCHEDULED_CHANGES, scheduledChangeFromInput } from './schedule-input.js'
import type { FlagChangeEvent, FlagChangeListener, FlagStore, FlagVersion } from './ports.js'
import { EvaluationStream, TrackingStream, type EvaluationStreamOptions } from './stream.js'
import { FlagReplica } from './replica.js'
import { SyncFlagClient } from './sync-client.js'
import {
  checkDepth,
  checkImmutable,
  checkPatterns,
  checkPrerequisiteGraph,
  checkReferences,
  normalizeFlag,
  normalizeSegment,
} from './validate.js'

/** Options of {@link FlagService}. */
export interface FlagServiceOptions {
  /** Persistence; default a fresh in-memory store. */
  store?: FlagStore
  clock?: Clock
  /** Receives one {@link Operation} per audited change (the engine's audit log and webhooks). */
  report?: (operation: Operation) => void
  /** Receives faults the service recovers from (a remote record that does not compile, a listener that throws). */
  onError?: (error: Error, what: string) => void
  /** Options of the live evaluation stream. */
  stream?: EvaluationStreamOptions
  /** Versions kept per flag (its history); the oldest are dropped beyond it. Default 100. */
  historyLimit?: number
}

/** Versions kept per flag unless {@link FlagServiceOptions.historyLimit} says otherwise. */
export const DEFAULT_FLAG_HISTORY_LIMIT = 100

/** Options of every write. */
export interface FlagWriteOptions extends ActorOptions {
  /** Overrides the audit action (the audit entry's `action`); default by operation. */
  action?: string | null
  /** False skips the audit entry (`audit`, default true). */
  audit?: boolean
  /** Free text kept in the audit entry. */
  reason?: string
}

/** A scheduled change that {@link FlagService.runDueScheduledChanges} applied (or dropped). */
export interface AppliedScheduledChange {
  flag_key: string
  change_id: string
  action: 'enable' | 'disable' | 'update'
  /** False when the change no longer validated; it was removed and reported as `flag_schedule_failed`. */
  applied: boolean
}

/**
 * Whether the flags can be trusted (OpenFeature providers report it as their status):
 *
 * - `not_ready` until the first load;
 * - `ready` once loaded and following the store's changes;
 * - `stale` while the store's change feed came back after a gap or delivered a message it
 *   could not read: changes may have been missed, and the reload that catches up is running
 *   (the flags held stay in force);
 * - `error` while the store cannot be read — unreachable at startup, its change feed lost, a
 *   reload that failed — so fresh values cannot be served (the flags last loaded, if any, stay
 *   in force); retries run in the background and a successful load makes it `ready` again;
 * - `fatal` after a configuration error no retry can fix (a corrupt state file); final.
 */
export type FlagServiceStatus = 'not_ready' | 'ready' | 'stale' | 'error' | 'fatal'

/** Receives the new status and, for `stale`, `error` and `fatal`, the error behind it. */
export type FlagStatusListener = (status: FlagServiceStatus, error: Error | null) => void

const statusOf = (flag: Flag | null | undefined): string | null =>
  flag ? (flag.enabled ? 'enabled' : 'disabled') : null

/** Receives a flag's key and the result of one evaluation (see {@link FlagService.onEvaluation}). */
export type EvaluationObserver = (key: string, result: ResolutionDetails) => void

/** Feature flags and segments: operations, replica and evaluation. */
export class FlagService {
  /** The live evaluation stream (zero cost while nobody subscribes). */
  readonly stream: EvaluationStream
  /** The live stream of OpenFeature tracking events (`client.track()`), bounded like {@link stream}. */
  readonly tracking: TrackingStream
  /** The synchronous client (`engine.flags.sync`). */
  readonly sync: SyncFlagClient
  private readonly store: FlagStore
  private readonly clock: Clock
  private readonly report: (operation: Operation) => void
  private readonly onError: (error: Error, what: string) => void
  private readonly replica: FlagReplica
  private readonly historyLimit: number
  /** What the evaluator reads (the replica's compiled flags and segments). */
  readonly snapshot: FlagSnapshot
  private writes: Promise<unknown> = Promise.resolve()
  private unsubscribe: (() => void) | null = null
  private currentStatus: FlagServiceStatus = 'not_ready'
  private currentStatusError: Error | null = null
  private everLoaded = false
  private readonly statusListeners = new Set<FlagStatusListener>()
  /** Told of every evaluation (the metrics' counter); an array so that none costs one check. */
  private evaluationObservers: readonly EvaluationObserver[] = []

  constructor(options: FlagServiceOptions = {}) {
    this.store = options.store ?? memoryFlagStore()
    this.clock = options.clock ?? systemClock
    this.report = options.report ?? (() => undefined)
    this.onError = options.onError ?? (() => undefined)
    this.historyLimit = options.historyLimit ?? DEFAULT_FLAG_HISTORY_LIMIT
    if (!Number.isInteger(this.historyLimit) || this.historyLimit < 1)
      throw new ValidationError(
        `The flag history limit must be a positive integer, got ${String(options.historyLimit)}.`,
        { details: [{ field: 'historyLimit', message: 'expected a positive integer' }] },
      )
    this.stream = new EvaluationStream({
      now: () => this.clock.now(),
      onListenerError: (error) => this.onError(toError(error), 'evaluation stream listener'),
      ...options.stream,
    })
    this.tracking = new TrackingStream({
      now: () => this.clock.now(),
      onListenerError: (error) => this.onError(toError(error), 'tracking stream listener'),
      ...options.stream,
    })
    this.replica = new FlagReplica(this.onError)
    this.snapshot = this.replica.snapshot
    this.sync = new SyncFlagClient(this)
  }

  /**
   * Loads every record from the store and follows its change feed. Safe to call again
   * (reloads). A load that fails makes the status `error` (`fatal` for a {@link ConfigError})
   * and rejects; the flags held stay in force.
   */
  async start(): Promise<void> {
    this.unsubscribe ??= this.store.subscribe((event) => this.replica.apply(event))
    let flags: Flag[]
    let segments: Segment[]
    try {
      ;[flags, segments] = await Promise.all([this.store.listFlags(), this.store.listSegments()])
    } catch (error) {
      this.markUnavailable(toError(error), error instanceof ConfigError)
      throw error
    }
    this.replica.load(flags, segments)
    this.everLoaded = true
    this.setStatus('ready', null)
  }

  /** True once the flags were loaded (they stay in force through later failures). */
  get loaded(): boolean {
    return this.everLoaded
  }

  /** See {@link FlagServiceStatus}. */
  get status(): FlagServiceStatus {
    return this.currentStatus
  }

  /** The error behind a `stale`, `error` or `fatal` status, else null. */
  get statusError(): Error | null {
    return this.currentStatusError
  }

  /** Adds a listener for status changes; returns the unsubscriber. */
  onStatus(listener: FlagStatusListener): () => void {
    this.statusListeners.add(listener)
    return () => this.statusListeners.delete(listener)
  }

  /**
   * Reports that the store cannot be read (the engine calls it): `fatal` for a configuration
   * error no retry can fix, otherwise `error` until the next successful {@link start}.
   */
  markUnavailable(error: Error, fatal: boolean): void {
    this.setStatus(fatal ? 'fatal' : 'error', error)
  }

  /**
   * Reports that changes may have been missed (the change feed resumed after a gap): `stale`
   * until the reload the caller runs next succeeds. Only a `ready` service becomes stale: one
   * in `error` stays there until that reload, one not yet loaded has nothing to be stale.
   */
  markStale(error: Error): void {
    if (this.currentStatus === 'ready') this.setStatus('stale', error)
  }

  private setStatus(status: FlagServiceStatus, error: Error | null): void {
    if (this.currentStatus === status || this.currentStatus === 'fatal') return
    this.currentStatus = status
    this.currentStatusError = error
    for (const listener of this.statusListeners) {
      try {
        listener(status, error)
      } catch (failure) {
        this.onError(toError(failure), 'flag status listener')
      }
    }
  }

  /** Stops following the store's change feed. */
  close(): void {
    this.unsubscribe?.()
    this.unsubscribe = null
  }

  /** Adds a listener for every change applied to this replica (local or remote); returns the unsubscriber. */
  onChange(listener: FlagChangeListener): () => void {
    return this.replica.onChange(listener)
  }

  /**
   * Applies a change received from another transport than this service's own store
   * subscription (e.g. an SDK event stream). Idempotent; a record that does not compile is
   * reported to `onError` and ignored.
   */
  applyRemote(event: FlagChangeEvent): void {
    this.replica.apply(event)
  }

  /** Evaluates a flag. `defaultValue` replaces the null value of DEFAULT and ERROR results. */
  evaluate(
    key: string,
    context?: EvaluationContext | FlatContext | null,
    defaultValue?: unknown,
  ): ResolutionDetails {
    return this.evaluateContext(key, toEvaluationContext(context), defaultValue)
  }

  /** {@link evaluate} for a context already in the structured shape (the providers' hot path). */
  evaluateContext(
    key: string,
    context: EvaluationContext | null,
    defaultValue?: unknown,
  ): ResolutionDetails {
    const result = evaluateFlag(this.snapshot, key, context)
    if (this.evaluationObservers.length > 0) this.observe(key, result)
    if (this.stream.active) this.stream.record(key, context?.key, result.variation, result.reason)
    if (defaultValue !== undefined && result.variation === null)
      return { ...result, value: defaultValue }
    return result
  }

  /**
   * Calls `observer` synchronously with every evaluation's result, unsampled (the live
   * {@link stream} is sampled and may drop events); returns the remover. It must be cheap: it
   * runs inside each evaluation. What it throws is reported and never reaches the caller.
   */
  onEvaluation(observer: EvaluationObserver): () => void {
    this.evaluationObservers = [...this.evaluationObservers, observer]
    return () => {
      this.evaluationObservers = this.evaluationObservers.filter((o) => o !== observer)
    }
  }

  private observe(key: string, result: ResolutionDetails): void {
    for (const observer of this.evaluationObservers) {
      try {
        observer(key, result)
      } catch (error) {
        this.onError(toError(error), 'evaluation observer')
      }
    }
  }

  /**
   * Records an OpenFeature tracking event (`client.track()`) on {@link tracking}; a no-op
   * while nobody listens. Throws a `ValidationError` for an empty or over-long name.
   */
  track(
    eventName: string,
    contextKey: unknown,
    details: Readonly<Record<string, unknown>> = {},
  ): void {
    if (typeof eventName !== 'string' || eventName.trim() === '' || eventName.length > 200) {
      throw new ValidationError('A tracking event needs a name of 1 to 200 characters.', {
        details: [{ field: 'trackingEventName', message: 'expected 1 to 200 characters' }],
      })
    }
    if (this.tracking.active) this.tracking.record(eventName, contextKey, details)
  }

  /** The flag, or null. */
  getFlag(key: string): Promise<Flag | null> {
    const flag = this.replica.flags.get(key)
    return Promise.resolve(flag === undefined ? null : structuredClone(flag))
  }

  /** Every flag, sorted by key. */
  listFlags(): Promise<Flag[]> {
    return Promise.resolve(
      sortByKey([...this.replica.flags.values()]).map((flag) => structuredClone(flag)),
    )
  }

  /** The segment, or null. */
  getSegment(key: string): Promise<Segment | null> {
    const segment = this.replica.segments.get(key)
    return Promise.resolve(segment === undefined ? null : structuredClone(segment))
  }

  /** Every segment, sorted by key. */
  listSegments(): Promise<Segment[]> {
    return Promise.resolve(
      sortByKey([...this.replica.segments.values()]).map((s) => structuredClone(s)),
    )
  }

  /** Keys of the flags whose rules name the segment. */
  flagsUsingSegment(segmentKey: string): string[] {
    return this.replica.flagsUsingSegment(segmentKey)
  }

  /** Creates or replaces a flag; audit `flag_created` or `flag_updated` by prior existence. */
  saveFlag(input: unknown, options: FlagWriteOptions = {}): Promise<Flag> {
    return this.exclusive(() => this.writeFlag(input, options))
  }

  /** Creates a flag; {@link FlagExistsError} when the key is taken. */
  createFlag(input: unknown, options: FlagWriteOptions = {}): Promise<Flag> {
    return this.exclusive(() => {
      const key = keyOf(input)
      if (key !== undefined && this.replica.flags.has(key))
        throw new FlagExistsError(`Flag ${key} already exists.`, { key })
      return this.writeFlag(input, options)
    })
  }

  /** Applies a JSON merge patch (RFC 7396) to a flag, validated after merging; `key` and `type` cannot change. */
  patchFlag(key: string, patch: unknown, options: FlagWriteOptions = {}): Promise<Flag> {
    return this.exclusive(() => {
      const existing = this.requireFlag(key)
      checkDepth(patch, 'patch')
      const merged = applyMergePatch(existing, patch) as Record<string, unknown>
      checkImmutable(existing, merged)
      return this.writeFlag(merged, { ...options, action: options.action ?? 'flag_updated' })
    })
  }

  /** Turns a flag on; audit `flag_enabled`. */
  enableFlag(key: string, options: FlagWriteOptions = {}): Promise<Flag> {
    return this.setEnabled(key, true, options)
  }

  /** Turns a flag off (every evaluation serves off_variation); audit `flag_disabled`. */
  disableFlag(key: string, options: FlagWriteOptions = {}): Promise<Flag> {
    return this.setEnabled(key, false, options)
  }

  /** Deletes a flag; {@link FlagInUseError} while another flag names it as a prerequisite. */
  deleteFlag(key: string, options: FlagWriteOptions = {}): Promise<void> {
    return this.exclusive(async () => {
      const existing = this.requireFlag(key)
      const dependents = this.replica.flagsRequiring(key)
      if (dependents.length > 0)
        throw new FlagInUseError(
          `Flag ${key} is a prerequisite of ${dependents.join(', ')}; remove it there first.`,
          { flags: dependents },
        )
      await this.store.deleteFlag(key)
      if (this.store.appliedByFeed === true) return
      await this.forgetVersions(key)
      this.replica.apply({ type: 'flag', key, flag: null })
      this.audit(options, 'flag_deleted', `[Flag ${key}]`, statusOf(existing), null)
    })
  }

  /** Creates or replaces a segment; audit `segment_created` or `segment_updated`. */
  saveSegment(input: unknown, options: FlagWriteOptions = {}): Promise<Segment> {
    return this.exclusive(async () => {
      const key = keyOf(input)
      const existing = key === undefined ? null : (this.replica.segments.get(key) ?? null)
      const segment = await normalizeSegment(input, this.stamp(options), existing)
      compileSegment(segment)
      checkPatterns(segment.rules)
      await this.store.putSegment(segment)
      if (this.store.appliedByFeed === true) return structuredClone(segment)
      this.replica.apply({ type: 'segment', key: segment.key, segment })
      const action = existing === null ? 'segment_created' : 'segment_updated'
      this.audit(
        options,
        action,
        `[Segment ${segment.key}]`,
        null,
        null,
        changes(existing, segment),
      )
      return structuredClone(segment)
    })
  }

  /** Deletes a segment; {@link SegmentInUseError} while a flag's rules name it. */
  deleteSegment(key: string, options: FlagWriteOptions = {}): Promise<void> {
    return this.exclusive(async () => {
      if (!this.replica.segments.has(key))
        throw new SegmentNotFoundError(`Segment ${key} does not exist.`, { key })
      const users = this.replica.flagsUsingSegment(key)
      if (users.length > 0)
        throw new SegmentInUseError(
          `Segment ${key} is used by ${users.join(', ')}; remove it there first.`,
          { flags: users },
        )
      await this.store.deleteSegment(key)
      if (this.store.appliedByFeed === true) return
      this.replica.apply({ type: 'segment', key, segment: null })
      this.audit(options, 'segment_deleted', `[Segment ${key}]`, null, null)
    })
  }

  /**
   * Applies every scheduled change due at `now` (epoch ms), oldest first, each removed from
   * its flag as it is applied, audited with actor `system` and platform `scheduler`. A change
   * that no longer validates is removed and reported as `flag_schedule_failed`. Call it from a
   * scheduler that runs once per cluster.
   */
  async runDueScheduledChanges(now: number = this.clock.now()): Promise<AppliedScheduledChange[]> {
    const due = [...this.replica.flags.values()]
      .flatMap((flag) => flag.scheduled_changes.map((change) => ({ key: flag.key, change })))
      .filter(({ change }) => Date.parse(change.at) <= now)
      .sort((a, b) => a.change.at.localeCompare(b.change.at))
    const applied: AppliedScheduledChange[] = []
    for (const { key, change } of due) {
      const outcome = await this.exclusive(() => this.applyScheduled(key, change.id))
      if (outcome !== null) applied.push(outcome)
    }
    return applied
  }

  private async applyScheduled(
    key: string,
    changeId: string,
  ): Promise<AppliedScheduledChange | null> {
    const flag = this.replica.flags.get(key)
    const change = flag?.scheduled_changes.find((item) => item.id === changeId)
    if (flag === undefined || change === undefined) return null // applied or removed meanwhile
    const remaining = flag.scheduled_changes.filter((item) => item.id !== changeId)
    const options: FlagWriteOptions = {
      actor: 'system',
      platform: 'scheduler',
      reason: `scheduled change ${change.id}`,
    }
    let next: Record<string, unknown> = { ...flag, scheduled_changes: remaining }
    if (change.action === 'update')
      next = applyMergePatch(next, change.patch ?? {}) as Record<string, unknown>
    else next.enabled = change.action === 'enable'
    const action =
      change.action === 'update'
        ? 'flag_updated'
        : change.action === 'enable'
          ? 'flag_enabled'
          : 'flag_disabled'
    try {
      checkImmutable(flag, next)
      await this.writeFlag({ ...next, scheduled_changes: remaining }, { ...options, action })
      return { flag_key: key, change_id: change.id, action: change.action, applied: true }
    } catch (error) {
      this.onError(toError(error), `scheduled change ${change.id} of flag ${key}`)
      await this.writeFlag({ ...flag, scheduled_changes: remaining }, { ...options, audit: false })
      this.audit(
        { ...options, reason: `${options.reason ?? ''}: ${toError(error).message}` },
        'flag_schedule_failed',
        `[Flag ${key}]`,
        statusOf(flag),
        statusOf(flag),
      )
      return { flag_key: key, change_id: change.id, action: change.action, applied: false }
    }
  }

  private setEnabled(key: string, enabled: boolean, options: FlagWriteOptions): Promise<Flag> {
    return this.exclusive(() => {
      const existing = this.requireFlag(key)
      const action = enabled ? 'flag_enabled' : 'flag_disabled'
      return this.writeFlag(
        { ...existing, enabled },
        { ...options, action: options.action ?? action },
      )
    })
  }

  /**
   * Adds a scheduled change to a flag (`{at, action, patch?}`, see
   * {@link scheduledChangeFromInput}) and returns it with its new id; audit
   * `flag_change_scheduled`. An `update` is tried on the flag as it is now, so a patch that
   * would make it invalid is refused at once rather than dropped when due. At most
   * {@link MAX_SCHEDULED_CHANGES} pending per flag. {@link FlagNotFoundError} for an unknown
   * flag; every refusal changes nothing.
   */
  scheduleChange(
    key: string,
    input: unknown,
    options: FlagWriteOptions = {},
  ): Promise<ScheduledChange> {
    return this.exclusive(async () => {
      const existing = this.requireFlag(key)
      checkDepth(input, 'scheduled change')
      const change = scheduledChangeFromInput(input, this.clock.now())
      if (existing.scheduled_changes.length >= MAX_SCHEDULED_CHANGES)
        throw new ValidationError(
          `Flag ${key} already has ${String(MAX_SCHEDULED_CHANGES)} pending scheduled changes; cancel one first.`,
          { details: [{ field: 'at', message: 'too many pending scheduled changes' }] },
        )
      if (change.patch !== null) await this.tryPatch(existing, change.patch, options)
      await this.writeFlag(
        { ...existing, scheduled_changes: [...existing.scheduled_changes, change] },
        {
          ...options,
          action: options.action ?? 'flag_change_scheduled',
          reason:
            options.reason ?? `scheduled change ${change.id}: ${change.action} at ${change.at}`,
        },
      )
      return structuredClone(change)
    })
  }

  /** The flag's pending scheduled changes, soonest first; {@link FlagNotFoundError} for an unknown flag. */
  listScheduledChanges(key: string): Promise<ScheduledChange[]> {
    return settled(() => {
      const pending = [...this.requireFlag(key).scheduled_changes]
      pending.sort((a, b) => a.at.localeCompare(b.at) || a.id.localeCompare(b.id))
      return structuredClone(pending)
    })
  }

  /** One pending scheduled change; {@link FlagScheduleNotFoundError} when the flag has none of that id. */
  getScheduledChange(key: string, id: string): Promise<ScheduledChange> {
    return settled(() => structuredClone(this.requireScheduledChange(key, id)))
  }

  /**
   * Removes a pending scheduled change; audit `flag_schedule_cancelled`.
   * {@link FlagScheduleNotFoundError} for an id the flag does not hold (already applied or
   * cancelled).
   */
  cancelScheduledChange(key: string, id: string, options: FlagWriteOptions = {}): Promise<void> {
    return this.exclusive(async () => {
      const change = this.requireScheduledChange(key, id)
      const existing = this.requireFlag(key)
      await this.writeFlag(
        { ...existing, scheduled_changes: existing.scheduled_changes.filter((c) => c !== change) },
        {
          ...options,
          action: options.action ?? 'flag_schedule_cancelled',
          reason: options.reason ?? `scheduled change ${id}: ${change.action} at ${change.at}`,
        },
      )
    })
  }

  private requireScheduledChange(key: string, id: string): ScheduledChange {
    const change = this.requireFlag(key).scheduled_changes.find((item) => item.id === id)
    if (change === undefined)
      throw new FlagScheduleNotFoundError(
        `Flag ${key} has no pending scheduled change ${id} (applied or cancelled already?).`,
        { key, id },
      )
    return change
  }

  /** Validates the flag a scheduled patch would make now, storing nothing. */
  private async tryPatch(
    flag: Flag,
    patch: Record<string, unknown>,
    options: FlagWriteOptions,
  ): Promise<void> {
    const merged = applyMergePatch(flag, patch) as Record<string, unknown>
    try {
      checkImmutable(flag, merged)
      await this.validFlag(merged, options)
    } catch (error) {
      if (!(error instanceof ValidationError)) throw error
      throw new ValidationError(
        `The scheduled patch would make flag ${flag.key} invalid: ${error.message}`,
        { ...error.details },
      )
    }
  }

  /** Normalises a flag and runs every check of a write against the current records. */
  private async validFlag(input: unknown, options: FlagWriteOptions): Promise<Flag> {
    const key = keyOf(input)
    const existing = key === undefined ? null : (this.replica.flags.get(key) ?? null)
    const flag = await normalizeFlag(input, this.stamp(options), existing)
    compileFlag(flag)
    checkPatterns(flag.rules)
    checkReferences(flag, this.replica.flags, new Set(this.replica.segments.keys()))
    checkPrerequisiteGraph(flag, this.replica.flags)
    return flag
  }

  /** Validates and stores a flag; runs inside {@link exclusive}. */
  private async writeFlag(input: unknown, options: FlagWriteOptions): Promise<Flag> {
    const key = keyOf(input)
    const existing = key === undefined ? null : (this.replica.flags.get(key) ?? null)
    const flag = await this.validFlag(input, options)
    await this.store.putFlag(flag)
    if (this.store.appliedByFeed === true) return structuredClone(flag)
    await this.keepVersion(flag, options)
    this.replica.apply({ type: 'flag', key: flag.key, flag })
    const action = existing === null ? 'flag_created' : 'flag_updated'
    this.audit(
      options,
      action,
      `[Flag ${flag.key}]`,
      statusOf(existing),
      statusOf(flag),
      changes(existing, flag),
    )
    return structuredClone(flag)
  }

  /**
   * The flag's kept versions, newest first; {@link FlagNotFoundError} for an unknown flag.
   */
  async listFlagVersions(key: string): Promise<FlagVersion[]> {
    this.requireFlag(key)
    return this.store.listFlagVersions(key)
  }

  /**
   * Writes a new version of the flag equal to its version `version` (audit `flag_updated`
   * with reason `rollback to version N` unless one is given). The flag's pending scheduled
   * changes are kept as they are now: restoring old ones would apply changes already applied.
   * {@link FlagNotFoundError} for an unknown flag, {@link FlagVersionNotFoundError} for a
   * version not kept; the restored flag is validated like any write (a segment it names may
   * have been deleted since), and nothing changes when it fails.
   */
  rollbackFlag(key: string, version: number, options: FlagWriteOptions = {}): Promise<Flag> {
    return this.exclusive(async () => {
      const current = this.requireFlag(key)
      const versions = await this.store.listFlagVersions(key)
      const target = versions.find((entry) => entry.version === version)
      if (target === undefined)
        throw new FlagVersionNotFoundError(
          `Flag ${key} has no version ${String(version)}${versions.length === 0 ? '' : ` (kept: ${String(versions.at(-1)?.version)} to ${String(versions[0]?.version)})`}.`,
          { key, version },
        )
      const restored = { ...target.flag, scheduled_changes: current.scheduled_changes }
      return this.writeFlag(restored, {
        ...options,
        action: options.action ?? 'flag_updated',
        reason: options.reason ?? `rollback to version ${String(version)}`,
      })
    })
  }

  /** Appends the written flag to its history; a failure is reported, the write stands. */
  private async keepVersion(flag: Flag, options: FlagWriteOptions): Promise<void> {
    try {
      await this.store.addFlagVersion(
        flag.key,
        { changed_at: flag.updated_at, actor: options.actor ?? 'system', flag },
        this.historyLimit,
      )
    } catch (error) {
      this.onError(toError(error), `history of flag ${flag.key}`)
    }
  }

  private async forgetVersions(key: string): Promise<void> {
    try {
      await this.store.deleteFlagVersions(key)
    } catch (error) {
      this.onError(toError(error), `history of deleted flag ${key}`)
    }
  }

  private requireFlag(key: string): Flag {
    const flag = this.replica.flags.get(key)
    if (flag === undefined) throw new FlagNotFoundError(`Flag ${key} does not exist.`, { key })
    return flag
  }

  private stamp(options: FlagWriteOptions): { now: number; actor: string } {
    return { now: this.clock.now(), actor: options.actor ?? 'system' }
  }

  private audit(
    options: FlagWriteOptions,
    defaultAction: string,
    label: string,
    previous: string | null,
    next: string | null,
    diff?: AuditDiff,
  ): void {
    if (options.audit === false) return
    try {
      this.report({
        action: options.action ?? defaultAction,
        route: label,
        service: null,
        actor: options.actor ?? 'system',
        platform: options.platform ?? '',
        reason: options.reason ?? '',
        previous_status: previous,
        new_status: next,
        ...(diff === undefined ? {} : { diff }),
      })
    } catch (error) {
      this.onError(toError(error), 'audit report')
    }
  }

  /** Runs writes one at a time; a failed write does not block the next. */
  private exclusive<T>(write: () => T | Promise<T>): Promise<T> {
    const result = this.writes.then(write)
    this.writes = result.catch(() => undefined)
    return result
  }
}

/** The audit diff of an update (none for a creation). */
function changes(before: object | null, after: object): AuditDiff | undefined {
  return before === null ? undefined : auditDiff(before, after, FLAG_BOOKKEEPING_FIELDS)
}

/** The value of `read` as a promise, which rejects (rather than throws) when `read` throws. */
function settled<T>(read: () => T): Promise<T> {
  try {
    return Promise.resolve(read())
  } catch (error) {
    return Promise.reject(toError(error))
  }
}

function keyOf(input: unknown): string | undefined {
  if (input === null || typeof input !== 'object') return undefined
  const key = (input as { key?: unknown }).key
  return typeof key === 'string' ? key : undefined
}

function sortByKey<T extends { key: string }>(records: T[]): T[] {
  return records.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
}
