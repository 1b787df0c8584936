/**
 * Capped exponential backoff: the one retry rhythm of everything that reconnects or reloads in
 * the background (the route replica, the flag and rate-limit loaders). The first retry waits
 * `firstMs`, each further failure doubles the wait, never beyond `maxMs`; a success starts over.
 *
 * Why the timer is unref'd: a pending retry must never keep a process alive on its own (a
 * test or a CLI that is done should exit even while a backend is away).
 */

/** The delays of a {@link Backoff}, in milliseconds. */
export interface BackoffSettings {
  /** Wait before the first retry. */
  readonly firstMs: number
  /** Longest wait between two retries. */
  readonly maxMs: number
}

/** The wait before retry number `failures + 1` (`failures` ≥ 0 failed attempts so far). */
export function backoffDelay(settings: BackoffSettings, failures: number): number {
  return Math.min(settings.firstMs * 2 ** failures, settings.maxMs)
}

/** The retries of one background task: counts failures and holds the pending retry. */
export class Backoff {
  private failures = 0
  private timer: NodeJS.Timeout | null = null

  constructor(private readonly settings: BackoffSettings) {}

  /** True when the last attempt failed (and no success came since). */
  get failing(): boolean {
    return this.failures > 0
  }

  /**
   * Counts a failure and schedules `retry` after the next delay (replacing a pending retry).
   * Returns the delay in milliseconds, for the log line.
   */
  schedule(retry: () => void): number {
    this.cancel()
    const delay = backoffDelay(this.settings, this.failures)
    this.failures += 1
    this.timer = setTimeout(() => {
      this.timer = null
      retry()
    }, delay)
    this.timer.unref()
    return delay
  }

  /** Records a success: the next failure waits `firstMs` again. */
  succeeded(): void {
    this.failures = 0
  }

  /** Drops the pending retry, if any. */
  cancel(): void {
    if (this.timer !== null) clearTimeout(this.timer)
    this.timer = null
  }
}
