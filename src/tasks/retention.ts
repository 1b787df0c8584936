/**
 * Retention: terminal records older than `retentionDays` are pruned from the store and from the
 * manager's memory at startup and about every 6 hours, with their tags, idempotency keys and
 * metric minutes (the same deletion as `deleteHistory`); pending and running records never are.
 * Old schedule slots (past, never re-fired) are forgotten in the same pass.
 */
import { TaskValidationError } from './errors.js'
import type { ScheduleSlotStore } from './stores/ports.js'
import type { LoopClock, LoopTimer } from './scheduling/timer.js'

/** How often retention runs. */
export const RETENTION_INTERVAL_MS = 6 * 60 * 60 * 1000
const DAY_MS = 24 * 60 * 60 * 1000

/** Validates `retentionDays` (a positive number, or null/undefined = keep forever). */
export function retentionMs(days: number | null | undefined): number | null {
  if (days === undefined || days === null) return null
  if (typeof days !== 'number' || !Number.isFinite(days) || days <= 0) {
    throw new TaskValidationError('retentionDays must be a positive number of days or null.')
  }
  return days * DAY_MS
}

/** Prunes old terminal records on a timer (idle while no retention is set). */
export class RetentionLoop {
  #handle: unknown = null
  #running: Promise<void> | null = null
  #started = false
  #maxAgeMs: number | null

  constructor(
    private readonly options: {
      /** Null: keep forever (the loop idles). */
      maxAgeMs: number | null
      /** Deletes terminal records that ended before the cutoff (epoch ms). */
      deleteBefore: (cutoff: number) => Promise<number>
      slots: ScheduleSlotStore | null
      clock: LoopClock
      timer: LoopTimer
      error(message: string, error: unknown): void
    },
  ) {
    this.#maxAgeMs = options.maxAgeMs
  }

  /** Prunes now, then about every 6 hours (when a retention is set). */
  start(): void {
    this.#started = true
    if (this.#handle !== null || this.#maxAgeMs === null) return
    this.#handle = this.options.timer.setInterval(() => void this.prune(), RETENTION_INTERVAL_MS)
    void this.prune()
  }

  /** Changes the retention (null: keep forever); a running loop prunes with it at once. */
  setMaxAge(maxAgeMs: number | null): void {
    this.#maxAgeMs = maxAgeMs
    if (!this.#started) return
    if (maxAgeMs === null) this.#clearTimer()
    else if (this.#handle === null) this.start()
    else void this.prune()
  }

  /** Stops the timer and waits for a pass in progress. */
  async stop(): Promise<void> {
    this.#started = false
    this.#clearTimer()
    await this.#running
  }

  #clearTimer(): void {
    if (this.#handle !== null) this.options.timer.clearInterval(this.#handle)
    this.#handle = null
  }

  /** One pass; passes never overlap. */
  prune(): Promise<void> {
    this.#running ??= this.#prune()
      .catch((error: unknown) => this.options.error('retention failed', error))
      .finally(() => {
        this.#running = null
      })
    return this.#running
  }

  async #prune(): Promise<void> {
    const { clock, slots } = this.options
    if (this.#maxAgeMs === null) return
    await this.options.deleteBefore(Math.round(clock.now() - this.#maxAgeMs))
    await slots?.prune(Math.round(clock.now() - DAY_MS))
  }
}
