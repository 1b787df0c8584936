/**
 * Retention: terminal records older than `retentionDays` are pruned from the store and from the
 * manager's memory at startup and about every 6 hours; pending and running records never are.
 * Old schedule slots (past, never re-fired) are forgotten in the same pass.
 */
import { TaskValidationError } from './errors.js'
import type { DurableTaskStore } from './stores/ports.js'
import type { RecordBook } from './records.js'
import type { LoopClock, LoopTimer } from './scheduling/timer.js'
import { TERMINAL_STATUSES } from './status.js'

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

/** Prunes old terminal records on a timer. */
export class RetentionLoop {
  #handle: unknown = null
  #running: Promise<void> | null = null

  constructor(
    private readonly options: {
      maxAgeMs: number
      book: RecordBook
      store: DurableTaskStore | null
      clock: LoopClock
      timer: LoopTimer
      error(message: string, error: unknown): void
    },
  ) {}

  /** Prunes now, then about every 6 hours. */
  start(): void {
    if (this.#handle !== null) return
    this.#handle = this.options.timer.setInterval(() => void this.prune(), RETENTION_INTERVAL_MS)
    void this.prune()
  }

  /** Stops the timer and waits for a pass in progress. */
  async stop(): Promise<void> {
    if (this.#handle !== null) this.options.timer.clearInterval(this.#handle)
    this.#handle = null
    await this.#running
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
    const { book, store, clock, maxAgeMs } = this.options
    const cutoff = clock.now() - maxAgeMs
    const old: string[] = []
    for (const task of book.all()) {
      const record = task.record
      if (!TERMINAL_STATUSES.has(record.status)) continue
      const end = Date.parse(record.end_time ?? record.created_at)
      if (end < cutoff) old.push(record.task_id)
    }
    book.delete(old)
    if (store === null) return
    await store.records.deleteTerminalBefore(Math.round(cutoff))
    await store.slots.prune(Math.round(clock.now() - DAY_MS))
  }
}
