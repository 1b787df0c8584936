/**
 * Periodic triggers and their slots. A slot is the exact instant a periodic schedule is due;
 * every instance computes the same slots (intervals are aligned to the Unix epoch, cron times
 * are cron times), which is what lets the store decide, per slot, who fires it.
 */
import { Cron } from 'croner'
import { OneOffNextRunError, ScheduleError } from './errors.js'

/**
 * `{ every }` seconds (≥ 1, may be fractional), or a five-field `cron` in a `timezone`; never
 * both (refused at run time too, with any key not listed here).
 */
export type ScheduleTrigger =
  | { every: number; cron?: never; timezone?: never }
  | { cron: string; timezone?: string; every?: never }

/** A validated trigger that computes slot times. */
export class PeriodicTrigger {
  readonly #everyMs: number | null
  readonly #cron: Cron | null
  /** Human-readable form, e.g. `every 5s` or `cron 0 9 * * 1 (UTC)`. */
  readonly description: string

  /** Validates `trigger`; throws {@link ScheduleError} with the reason. */
  constructor(trigger: ScheduleTrigger) {
    checkTriggerKeys(trigger)
    if ('every' in trigger) {
      const every = trigger.every
      if (typeof every !== 'number' || !Number.isFinite(every) || every < 1) {
        throw new ScheduleError(`every must be a number of seconds ≥ 1 (got ${String(every)}).`)
      }
      this.#everyMs = Math.round(every * 1000)
      this.#cron = null
      this.description = `every ${every}s`
      return
    }
    const expression = typeof trigger.cron === 'string' ? trigger.cron.trim() : ''
    if (expression.split(/\s+/).length !== 5) {
      throw new ScheduleError(
        `cron must be a five-field expression (minute hour day month weekday), got "${trigger.cron}".`,
      )
    }
    const timezone = trigger.timezone ?? 'UTC'
    try {
      this.#cron = new Cron(expression, { paused: true, timezone })
      // Croner validates timezones lazily: computing one run surfaces a bad one now.
      this.#cron.nextRun(new Date(0))
    } catch (error) {
      throw new ScheduleError(
        `Invalid cron schedule "${expression}" (${timezone}): ${error instanceof Error ? error.message : String(error)}`,
        { cron: expression, timezone },
      )
    }
    this.#everyMs = null
    this.description = `cron ${expression} (${timezone})`
  }

  /** The first slot strictly after `after` (epoch ms), or null when the cron never runs again. */
  nextSlot(after: number): number | null {
    if (this.#everyMs !== null) return (Math.floor(after / this.#everyMs) + 1) * this.#everyMs
    const next = this.#cron?.nextRun(new Date(after)) ?? null
    return next === null ? null : next.getTime()
  }

  /** Slots in `(from, to]`, oldest first, at most `limit`. */
  slotsBetween(from: number, to: number, limit: number): number[] {
    const slots: number[] = []
    let slot = this.nextSlot(from)
    while (slot !== null && slot <= to && slots.length < limit) {
      slots.push(slot)
      slot = this.nextSlot(slot)
    }
    return slots
  }
}

/** Every key a trigger object may have. */
const TRIGGER_KEYS: ReadonlySet<string> = new Set(['every', 'cron', 'timezone'])

/**
 * Refuses a trigger that is not an object, names both `every` and `cron`, or has keys a trigger
 * does not know: a misspelt key (`evry`, `tz`) would otherwise be ignored and the schedule would
 * run at a time the caller did not ask for.
 */
function checkTriggerKeys(trigger: unknown): void {
  if (typeof trigger !== 'object' || trigger === null || Array.isArray(trigger)) {
    throw new ScheduleError('A trigger must be { every } or { cron, timezone }.')
  }
  const unknown = Object.keys(trigger).filter((key) => !TRIGGER_KEYS.has(key))
  if (unknown.length > 0) {
    throw new ScheduleError(
      `Unknown trigger key${unknown.length > 1 ? 's' : ''} ${unknown.map((key) => JSON.stringify(key)).join(', ')}: a trigger takes every, or cron with an optional timezone.`,
      { unknown_keys: unknown, allowed_keys: [...TRIGGER_KEYS] },
    )
  }
  const hasEvery = Object.hasOwn(trigger, 'every')
  const hasCron = Object.hasOwn(trigger, 'cron')
  if (hasEvery && hasCron) {
    throw new ScheduleError('Give either every or cron, not both.')
  }
  if (!hasEvery && !hasCron) {
    throw new ScheduleError('A trigger needs every (seconds) or cron (a five-field expression).')
  }
  if (hasEvery && Object.hasOwn(trigger, 'timezone')) {
    throw new ScheduleError('timezone applies to cron triggers only; an every trigger has none.')
  }
}

/**
 * A scheduled entry (docs/scheduling-tasks.md): periodic with a trigger, or one-off. Its next run
 * is defined only for periodic entries.
 */
export class ScheduledEntry {
  /** Set when the entry was cancelled; it never fires again. */
  cancelled = false

  constructor(
    readonly name: string,
    readonly trigger: PeriodicTrigger | null,
    readonly once: boolean,
  ) {}

  /** Whether the entry repeats. */
  get recurring(): boolean {
    return !this.once
  }

  /** The next slot after `after`; throws {@link OneOffNextRunError} for a one-off entry. */
  nextRun(after: number): number | null {
    if (this.once || this.trigger === null) {
      throw new OneOffNextRunError(`The one-off entry "${this.name}" has no next run to compute.`)
    }
    return this.trigger.nextSlot(after)
  }
}
