/**
 * The transition scheduler: persists and audits the automatic transitions of route states.
 *
 *   maintenance window start  → audit `maintenance_on` (the stored record already says so)
 *   maintenance window end    → store ACTIVE, audit `enable`
 *   `disable --until` reached → store ACTIVE, audit `enable`
 *
 * Enforcement does not wait for this: effective status is computed from the stored times at
 * the exact instant (see `route-state.ts`). The scheduler only makes the stored record and
 * the audit log catch up, once, whatever the number of instances sharing the store:
 *
 *   - a stored transition is a compare-and-set on the record's `since` (`replaceIf`): the
 *     first instance wins, the others find a newer record and do nothing; a change made by a
 *     user in the meantime is never overwritten;
 *   - a window start stores nothing, so instances race for a one-time claim instead.
 *
 * Automatic entries have actor `system` and platform `scheduler`. Windows and deadlines that
 * passed while every instance was down are applied at the first tick after startup.
 *
 * Other timed work runs on the same ticks as {@link ScheduledJob}s that the engine's features
 * contribute (the flags' scheduled changes), each making its own once-per-cluster arrangement.
 */
import type { Logger } from '../common/logger.js'
import type { Clock } from './clock.js'
import { toError } from './errors.js'
import type { Operation } from './operations.js'
import type { Replica } from './replica.js'
import { stateTimes, type RouteState } from './route-state.js'
import { toIso } from './time.js'
import type { ClaimStore, RouteStateStore } from '../stores/types.js'

/**
 * Other timed work the scheduler runs at each tick (a feature's, such as the flags' scheduled
 * changes), so every instance has one timer and one place that decides what is due. A job
 * makes its own once-per-cluster arrangement (a claim).
 */
export interface ScheduledJob {
  /** Names the job in log lines. */
  readonly name: string
  /** The next instant after `now` at which the job has something to do, or null. */
  nextDue(now: number): number | null
  /** Does what is due at `now`; resolves with the number of changes this instance applied. */
  runDue(now: number): Promise<number>
}

/** What the scheduler needs. */
export interface SchedulerDeps {
  replica: Replica
  routes: RouteStateStore
  claims: ClaimStore
  clock: Clock
  report(operation: Operation): void
  logger: Pick<Logger, 'error'>
  /** Longest sleep between two checks, in ms (default 30 s), a safety net for clock jumps. */
  maxSleepMs?: number
  /** Further jobs run at every tick, after the route transitions. */
  jobs?: readonly ScheduledJob[]
}

const DAY_MS = 24 * 60 * 60 * 1000
const PLATFORM = 'scheduler'

/** Applies due transitions and sleeps until the next one. */
export class TransitionScheduler {
  private timer: NodeJS.Timeout | null = null
  private running: Promise<number> | null = null
  private started = false
  /** Window-start claims this instance already tried (won or lost): no round trip per tick. */
  private readonly claimed = new Set<string>()
  /** The instant the last tick applied transitions at: anything due later is still to do. */
  private coveredUntil: number | null = null
  /** When the next check is planned (epoch ms), or null when not started (diagnostics). */
  plannedAt: number | null = null

  constructor(private readonly deps: SchedulerDeps) {}

  /** Starts ticking (at once, then at every due time). */
  start(): void {
    this.started = true
    this.wake()
  }

  /** Stops the timer; a tick in progress finishes. */
  stop(): void {
    this.started = false
    this.plannedAt = null
    if (this.timer !== null) clearTimeout(this.timer)
    this.timer = null
  }

  /** Re-plans after a change (a new window or deadline may be sooner than the planned one). */
  wake(): void {
    if (!this.started) return
    void this.tick().catch((error: unknown) => {
      this.deps.logger.error({ err: toError(error) }, 'scheduled transitions failed')
    })
  }

  /**
   * Applies every transition due now and plans the next check. Resolves with the number of
   * transitions this instance applied. Concurrent calls run one after the other.
   */
  async tick(): Promise<number> {
    if (this.running !== null) {
      await this.running.catch(() => 0)
      return this.tick()
    }
    this.running = this.applyDue()
    try {
      return await this.running
    } finally {
      this.running = null
      this.plan()
    }
  }

  private async applyDue(): Promise<number> {
    const now = this.deps.clock.now()
    this.coveredUntil = now
    let applied = 0
    const seen = new Set<string>()
    for (const state of this.deps.replica.overrideStates()) {
      try {
        if (await this.transition(state, now, seen)) applied += 1
      } catch (error) {
        this.deps.logger.error(
          { err: toError(error), route: state.route },
          `scheduled transition of ${state.route} failed`,
        )
      }
    }
    for (const key of this.claimed) if (!seen.has(key)) this.claimed.delete(key)
    for (const job of this.deps.jobs ?? []) {
      try {
        applied += await job.runDue(now)
      } catch (error) {
        this.deps.logger.error({ err: toError(error) }, `scheduled ${job.name} failed`)
      }
    }
    return applied
  }

  private async transition(state: RouteState, now: number, seen: Set<string>): Promise<boolean> {
    const times = stateTimes(state)
    if (state.status === 'maintenance' && state.window !== null) {
      if (times.windowEnd <= now) {
        return this.persistActive(state, now, 'maintenance', 'maintenance window ended')
      }
      const since = Date.parse(state.since)
      // Only a window stored before its start has a start transition to record; one that
      // started at once was recorded by the command itself.
      if (state.window.start !== null && times.windowStart <= now && since < times.windowStart) {
        const key = `window_start:${state.service}:${state.route}:${state.window.start}`
        seen.add(key)
        if (this.claimed.has(key)) return false // decided already, by this or another instance
        const ttl =
          (Number.isFinite(times.windowEnd) ? times.windowEnd - now : 30 * DAY_MS) + DAY_MS
        const claimed = await this.deps.claims.claim(key, ttl)
        this.claimed.add(key)
        if (!claimed) return false
        this.deps.report(operation(state, 'maintenance_on', 'active', 'maintenance', state.reason))
        return true
      }
      return false
    }
    if (state.status === 'disabled' && times.until <= now) {
      return this.persistActive(state, now, 'disabled', 'disable deadline reached')
    }
    return false
  }

  private async persistActive(
    state: RouteState,
    now: number,
    previous: string,
    reason: string,
  ): Promise<boolean> {
    const next: RouteState = {
      ...state,
      status: 'active',
      reason: '',
      window: null,
      until: null,
      since: toIso(now),
    }
    if (!(await this.deps.routes.replaceIf(next, state.since))) return false
    this.deps.replica.apply({
      type: 'route_state',
      service: state.service,
      route: state.route,
      state: next,
    })
    this.deps.report(operation(state, 'enable', previous, 'active', reason))
    return true
  }

  /** The next instant something becomes due, or null. */
  nextDue(now = this.deps.clock.now()): number | null {
    let next = Number.POSITIVE_INFINITY
    for (const state of this.deps.replica.overrideStates()) {
      const times = stateTimes(state)
      for (const at of [times.windowStart, times.windowEnd, times.until]) {
        if (at > now && at < next) next = at
      }
    }
    for (const job of this.deps.jobs ?? []) {
      const at = job.nextDue(now)
      if (at !== null && at > now && at < next) next = at
    }
    return Number.isFinite(next) ? next : null
  }

  private plan(): void {
    if (!this.started) return
    if (this.timer !== null) clearTimeout(this.timer)
    const maxSleep = this.deps.maxSleepMs ?? 30_000
    const now = this.deps.clock.now()
    // Planned from what the last tick covered, not from now: a deadline that fell between the
    // two (a timer may fire a millisecond before the clock shows the deadline, and the tick
    // takes time) is due at once instead of being skipped until the safety-net wake-up.
    const due = this.nextDue(this.coveredUntil ?? now)
    const delay = Math.min(due === null ? maxSleep : due - now, maxSleep)
    this.plannedAt = now + Math.max(0, delay)
    this.timer = setTimeout(
      () => {
        this.timer = null
        this.wake()
      },
      Math.max(0, delay),
    )
    this.timer.unref()
  }
}

function operation(
  state: RouteState,
  action: string,
  previous: string,
  next: string,
  reason: string,
): Operation {
  return {
    action,
    route: state.route,
    service: state.service,
    actor: 'system',
    platform: PLATFORM,
    reason,
    previous_status: previous,
    new_status: next,
  }
}
