/**
 * Time source of the engine. Everything that depends on "now" (windows, deadlines, audit
 * timestamps) reads it from a {@link Clock}, so tests drive time instead of sleeping.
 */

/** A source of the current time in epoch milliseconds. */
export interface Clock {
  now(): number
}

/** The real clock. */
export const systemClock: Clock = { now: () => Date.now() }

/**
 * A clock that moves only when told to, for testing what depends on time (maintenance windows,
 * `until` deadlines, scheduled flag changes) without waiting: pass it as
 * `createEngine({ clock })`, move it with {@link ManualClock.advance}, then call
 * `engine.runDue()`.
 */
export class ManualClock implements Clock {
  #time: number

  /** Starts at `start` (epoch ms, a `Date` or an ISO string); default: the real time now. */
  constructor(start: number | Date | string = Date.now()) {
    this.#time = typeof start === 'number' ? start : new Date(start).getTime()
    if (!Number.isFinite(this.#time)) throw new RangeError(`Invalid start time: ${String(start)}`)
  }

  /** The clock's time in epoch milliseconds. */
  now(): number {
    return this.#time
  }

  /** Moves the clock forward by `ms` milliseconds (never backward). */
  advance(ms: number): void {
    if (!Number.isFinite(ms) || ms < 0) throw new RangeError(`Cannot advance by ${String(ms)} ms`)
    this.#time += ms
  }

  /** The clock's time plus `offsetMs`, as an ISO 8601 string (for window starts and ends). */
  iso(offsetMs = 0): string {
    return new Date(this.#time + offsetMs).toISOString()
  }
}
