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
