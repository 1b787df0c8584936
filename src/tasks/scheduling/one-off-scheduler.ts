/**
 * The one-off scheduler. Entries live in the store; this instance keeps only a window of those
 * due within the horizon (default 300 s, the manager's `oneOffHorizon`), refilled every 150 s
 * (`oneOffRefillInterval`), so 100k future entries never sit in memory. A due entry is claimed with a lease, fired, then marked done: exactly one instance
 * fires it, and when the claimer dies between claim and done the lease ends and a later refill
 * (here or elsewhere) claims it again.
 */
import { ScheduleError, ScheduleOnceUnsupportedError } from './errors.js'
import { systemLoopTimer, type LoopClock, type LoopTimer } from './timer.js'

/** What the scheduler needs of a one-off entry (the store's `OneOffEntry` has more). */
export interface OneOffRun {
  run_key: string
  /** Epoch ms. */
  run_at: number
}

/**
 * The store operations the one-off scheduler uses; the durable stores' `oneOffs` port implements them (see its
 * port for the exact semantics). Declared here so scheduling does not depend on the stores.
 */
export interface OneOffStore<E extends OneOffRun = OneOffRun> {
  readonly supportsOneOff: boolean
  fetchWindow(until: number, now: number, limit: number): Promise<E[]>
  claim(
    runKey: string,
    lease: { owner: string; leaseUntil: number; now: number },
  ): Promise<{ entry: E; claim_token: string } | null>
  complete(runKey: string, claimToken: string): Promise<boolean>
}

/** Options of {@link OneOffScheduler}. */
export interface OneOffSchedulerOptions<E extends OneOffRun = OneOffRun> {
  store: OneOffStore<E>
  owner: string
  clock: LoopClock
  /** Dispatches the entry's task; resolve once it is enqueued (not finished). */
  fire: (entry: E) => void | Promise<void>
  onError?: (error: unknown, runKey: string) => void
  timer?: LoopTimer
  /** How far ahead the window reaches, in ms; default 300_000. */
  horizonMs?: number
  /** Ms between refills of the window, at most the horizon; default 150_000. */
  refillMs?: number
  /** Claim lease in ms; default 60_000, at least 1000 (the minimum lock TTL). */
  leaseMs?: number
  /** Default 1000. */
  tickMs?: number
  /** Most entries held in the window; default 10_000. */
  windowLimit?: number
}

/** Throws {@link ScheduleOnceUnsupportedError} unless `store` supports one-off schedules. */
export function assertOneOffSupport(store: { supportsOneOff?: boolean } | null | undefined): void {
  if (store?.supportsOneOff !== true) {
    throw new ScheduleOnceUnsupportedError(
      'scheduleOnce needs a task store with one-off schedule support (SQLite, PostgreSQL, MySQL or Redis).',
    )
  }
}

/** Fires one-off entries from a refilled horizon window. */
export class OneOffScheduler<E extends OneOffRun = OneOffRun> {
  /** run_key → run_at of entries due within the horizon. */
  readonly #window = new Map<string, number>()
  readonly #timer: LoopTimer
  #handle: unknown = null
  #lastRefill = Number.NEGATIVE_INFINITY
  #ticking: Promise<void> | null = null

  constructor(private readonly options: OneOffSchedulerOptions<E>) {
    assertOneOffSupport(options.store)
    const leaseMs = options.leaseMs ?? 60_000
    // The floor for a schedule lock: shorter leases could end while a claim is in use.
    if (!Number.isFinite(leaseMs) || leaseMs < 1000) {
      throw new ScheduleError(`leaseMs must be at least 1000 ms (got ${String(leaseMs)}).`)
    }
    this.#timer = options.timer ?? systemLoopTimer
  }

  /** Entries currently in the in-memory window. */
  get windowSize(): number {
    return this.#window.size
  }

  /** Starts ticking; the first tick refills the window (re-arming entries after a restart). */
  start(): void {
    if (this.#handle !== null) return
    this.#lastRefill = Number.NEGATIVE_INFINITY
    this.#handle = this.#timer.setInterval(() => void this.tick(), this.options.tickMs ?? 1000)
  }

  /** Stops ticking and waits for a tick in progress. */
  async stop(): Promise<void> {
    if (this.#handle !== null) this.#timer.clearInterval(this.#handle)
    this.#handle = null
    await this.#ticking
  }

  /** Call after `upsertOneOff`: an entry due within the horizon joins the window at once. */
  arm(entry: OneOffRun): void {
    if (entry.run_at <= this.options.clock.now() + this.#horizon()) {
      this.#window.set(entry.run_key, entry.run_at)
    } else this.#window.delete(entry.run_key)
  }

  /** Call after `cancelOneOff`. */
  disarm(runKey: string): void {
    this.#window.delete(runKey)
  }

  #horizon(): number {
    return this.options.horizonMs ?? 300_000
  }

  /** One tick: refill when due, then claim, fire and complete every due entry. */
  tick(): Promise<void> {
    this.#ticking ??= this.#tick().finally(() => {
      this.#ticking = null
    })
    return this.#ticking
  }

  async #tick(): Promise<void> {
    const now = this.options.clock.now()
    if (now - this.#lastRefill >= (this.options.refillMs ?? 150_000)) {
      try {
        const entries = await this.options.store.fetchWindow(
          now + this.#horizon(),
          now,
          this.options.windowLimit ?? 10_000,
        )
        this.#window.clear()
        for (const entry of entries) this.#window.set(entry.run_key, entry.run_at)
        this.#lastRefill = now
      } catch (error) {
        this.options.onError?.(error, '*')
      }
    }
    const due = [...this.#window].filter(([, runAt]) => runAt <= now).sort((x, y) => x[1] - y[1])
    for (const [runKey] of due) {
      this.#window.delete(runKey)
      try {
        const claimed = await this.options.store.claim(runKey, {
          owner: this.options.owner,
          leaseUntil: now + (this.options.leaseMs ?? 60_000),
          now,
        })
        if (claimed === null) continue
        await this.options.fire(claimed.entry)
        await this.options.store.complete(runKey, claimed.claim_token)
      } catch (error) {
        // Not completed: the lease ends and a later refill claims the entry again.
        this.options.onError?.(error, runKey)
      }
    }
  }
}
