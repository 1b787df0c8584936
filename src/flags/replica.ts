/**
 * The flag replica: every flag and segment this instance evaluates, held in memory as stored
 * records plus their compiled form. It changes only by applying {@link FlagChangeEvent}s —
 * this instance's own writes (applied at once, so the next evaluation sees them) and the
 * store's change feed (other instances' writes). Applying is idempotent, so receiving an own
 * write again through the feed changes nothing and notifies nobody.
 */
import { toError } from '../core/errors.js'
import { compileFlag, compileSegment, type CompiledFlag, type CompiledSegment } from './compile.js'
import type { FlagSnapshot } from './evaluator.js'
import type { Flag, Segment } from './model.js'
import type { FlagChangeEvent, FlagChangeListener } from './ports.js'
import { segmentsOf } from './model.js'
import { patternRefusals } from './validate.js'

/** In-memory flags and segments, compiled, with change notification. */
export class FlagReplica {
  /** Stored records by key (never handed out: callers get copies). */
  readonly flags = new Map<string, Flag>()
  readonly segments = new Map<string, Segment>()
  private readonly compiledFlags = new Map<string, CompiledFlag>()
  private readonly compiledSegments = new Map<string, CompiledSegment>()
  /** What the evaluator reads; its maps are updated in place. */
  readonly snapshot: FlagSnapshot = { flags: this.compiledFlags, segments: this.compiledSegments }
  private readonly listeners = new Set<FlagChangeListener>()

  constructor(private readonly onError: (error: Error, what: string) => void) {}

  /** Adds a listener for every change that altered the replica; returns the unsubscriber. */
  onChange(listener: FlagChangeListener): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  /** Replaces the whole content with a full snapshot from the store (startup, reconnect). */
  load(flags: readonly Flag[], segments: readonly Segment[]): void {
    const flagKeys = new Set(flags.map((flag) => flag.key))
    const segmentKeys = new Set(segments.map((segment) => segment.key))
    for (const segment of segments) this.apply({ type: 'segment', key: segment.key, segment })
    for (const flag of flags) this.apply({ type: 'flag', key: flag.key, flag })
    for (const key of [...this.flags.keys()])
      if (!flagKeys.has(key)) this.apply({ type: 'flag', key, flag: null })
    for (const key of [...this.segments.keys()])
      if (!segmentKeys.has(key)) this.apply({ type: 'segment', key, segment: null })
  }

  /**
   * Applies one change. Idempotent. A record that does not compile is reported to `onError`
   * and ignored (the previous version, if any, stays in force). A record with a regular
   * expression the linear-time engine refuses (written by another version, or by hand) is
   * applied, that pattern never matching, and each such pattern is reported once.
   */
  apply(event: FlagChangeEvent): void {
    try {
      if (event.type === 'flag') {
        // Records stored before flags had metadata are read as having an empty one.
        if (
          event.flag !== null &&
          (event.flag.metadata as Flag['metadata'] | undefined) === undefined
        )
          event = { ...event, flag: { ...event.flag, metadata: {} } }
        if (sameRecord(this.flags.get(event.key) ?? null, event.flag)) return
        if (event.flag === null) {
          this.flags.delete(event.key)
          this.compiledFlags.delete(event.key)
        } else {
          const compiled = compileFlag(event.flag)
          this.flags.set(event.key, event.flag)
          this.compiledFlags.set(event.key, compiled)
        }
      } else {
        if (sameRecord(this.segments.get(event.key) ?? null, event.segment)) return
        if (event.segment === null) {
          this.segments.delete(event.key)
          this.compiledSegments.delete(event.key)
        } else {
          const compiled = compileSegment(event.segment)
          this.segments.set(event.key, event.segment)
          this.compiledSegments.set(event.key, compiled)
        }
      }
    } catch (error) {
      this.onError(toError(error), `applying ${event.type} ${event.key}`)
      return
    }
    const record = event.type === 'flag' ? event.flag : event.segment
    if (record !== null) this.reportRefusedPatterns(record.rules, `${event.type} ${event.key}`)
    for (const listener of this.listeners) {
      try {
        listener(event)
      } catch (error) {
        this.onError(toError(error), 'flag change listener')
      }
    }
  }

  private reportRefusedPatterns(rules: Flag['rules'] | Segment['rules'], what: string): void {
    for (const { field, reason } of patternRefusals(rules))
      this.onError(
        new Error(`The regular expression at ${field} ${reason}; it never matches.`),
        `applying ${what}`,
      )
  }

  /** Keys of the flags whose rules name the segment. */
  flagsUsingSegment(segmentKey: string): string[] {
    return [...this.flags.values()]
      .filter((flag) => segmentsOf(flag).has(segmentKey))
      .map((flag) => flag.key)
  }

  /** Keys of the flags that name `flagKey` as a prerequisite. */
  flagsRequiring(flagKey: string): string[] {
    return [...this.flags.values()]
      .filter((flag) =>
        flag.prerequisites.some((prerequisite) => prerequisite.flag_key === flagKey),
      )
      .map((flag) => flag.key)
  }
}

function sameRecord(current: unknown, next: unknown): boolean {
  if (current === next) return true
  if (current === null || next === null) return false
  return JSON.stringify(current) === JSON.stringify(next)
}
