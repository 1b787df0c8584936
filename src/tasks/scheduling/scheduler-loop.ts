/**
 * The periodic scheduler: ticks every second, works out which slots of each schedule came due
 * since its last tick, and fires a slot only if this instance wins the store's insert-if-absent
 * of `(schedule name, slot time)`. Every instance covers every slot, and the store lets exactly
 * one of them fire it.
 *
 * A claim stays unconfirmed until the slot's task is enqueued. If the winner dies in between (or
 * its enqueue fails), its claim goes stale: after a lease, any instance running the schedule
 * takes it over (an atomic conditional update in the store), fires the slot and confirms it. So
 * no slot is lost while any instance runs.
 *
 * A takeover cannot tell a dead claimer from a slow one (stalled past the lease between claim
 * and enqueue), so both may fire the slot. The fire is what keeps that from running it twice: a
 * slot's task has the same id on every instance and is created only if no task with that id
 * exists (one atomic create-only write in the store), so whichever fire comes second finds the
 * task and runs nothing.
 */
import type { ScheduleSlotStore } from '../stores/ports.js'
import { ScheduleError } from './errors.js'
import { systemLoopTimer, type LoopClock, type LoopTimer } from './timer.js'
import { PeriodicTrigger, type ScheduleTrigger } from './trigger.js'

/**
 * Fires one slot of a schedule (the manager enqueues the task with `source: "scheduled"`).
 * `takenOver` is true when the slot was claimed by an instance that never confirmed it: that
 * instance may have fired it too (it died after, or is only slow), so a fire must create the
 * slot's task at most once whoever calls it (the manager's is create-only, by the slot's id).
 */
export type SlotFire = (
  scheduleName: string,
  slotTime: number,
  takenOver: boolean,
) => void | Promise<void>

/**
 * The store operations the loop needs (the durable stores' `slots`, see
 * {@link ScheduleSlotStore} for their semantics): the unconfirmed claim, its confirmation, and
 * the look-up and atomic takeover of stale unconfirmed claims. The in-memory store has no
 * `prune`.
 */
export type SlotStore = Pick<ScheduleSlotStore, 'claim' | 'confirm' | 'unconfirmed' | 'takeOver'>

/**
 * The shortest claim lease: below it claims whose enqueue is merely slow would be taken over
 * all the time (harmless to the slot, which is created once, but a store round trip each).
 */
export const MIN_SLOT_LEASE_MS = 1000

/** Options of {@link SchedulerLoop}. */
export interface SchedulerLoopOptions {
  store: SlotStore
  /** This instance's id, recorded with the slots it claims. */
  owner: string
  clock: LoopClock
  fire: SlotFire
  /** Called with errors of claims and fires (the loop keeps going). */
  onError?: (error: unknown, scheduleName: string) => void
  timer?: LoopTimer
  /** Tick period in ms; default 1000 (the scheduler tick). */
  tickMs?: number
  /** Most slots one schedule fires in one tick after a stall; older ones are skipped. */
  maxCatchUp?: number
  /**
   * How long (ms) a claim may stay unconfirmed before another instance takes it over; default
   * 30 000, at least {@link MIN_SLOT_LEASE_MS}. Keep it above the clock skew between instances.
   */
  leaseMs?: number
  /** Claims made longer ago than this (ms) are never taken over; default one hour. */
  takeoverWindowMs?: number
  /** Most stale claims one schedule takes over in one tick; default 10. */
  maxTakeovers?: number
  /**
   * Whether an operator paused the schedule: its due slots are skipped (neither claimed nor
   * caught up later) and its stale claims are left alone. Default: never paused.
   */
  paused?: (scheduleName: string) => boolean
}

interface Registered {
  trigger: PeriodicTrigger
  /** Slots up to and including this instant have been handled. */
  checkedUntil: number
}

/** Claims and fires due periodic slots every tick. */
export class SchedulerLoop {
  readonly #schedules = new Map<string, Registered>()
  readonly #timer: LoopTimer
  #handle: unknown = null
  #ticking: Promise<void> | null = null

  /**
   * Throws {@link ScheduleError} for a `leaseMs` under {@link MIN_SLOT_LEASE_MS}.
   */
  constructor(private readonly options: SchedulerLoopOptions) {
    this.#timer = options.timer ?? systemLoopTimer
    const lease = options.leaseMs ?? 30_000
    if (!Number.isFinite(lease) || lease < MIN_SLOT_LEASE_MS) {
      throw new ScheduleError(`leaseMs must be at least ${MIN_SLOT_LEASE_MS} ms.`)
    }
  }

  /**
   * Adds a schedule; its first slot is the first one after now. Throws {@link ScheduleError} for
   * an invalid trigger or a duplicate name (nothing is added then).
   */
  add(name: string, trigger: ScheduleTrigger | PeriodicTrigger): PeriodicTrigger {
    if (typeof name !== 'string' || name === '') throw new ScheduleError('A schedule needs a name.')
    if (this.#schedules.has(name)) throw new ScheduleError(`A schedule named "${name}" exists.`)
    const periodic = trigger instanceof PeriodicTrigger ? trigger : new PeriodicTrigger(trigger)
    this.#schedules.set(name, { trigger: periodic, checkedUntil: this.options.clock.now() })
    return periodic
  }

  /** Removes a schedule; true when it existed. */
  remove(name: string): boolean {
    return this.#schedules.delete(name)
  }

  /** The next slot of `name` after now, or null. */
  nextRun(name: string): number | null {
    const schedule = this.#schedules.get(name)
    return schedule === undefined ? null : schedule.trigger.nextSlot(this.options.clock.now())
  }

  /** Starts ticking (idempotent). */
  start(): void {
    if (this.#handle !== null) return
    const now = this.options.clock.now()
    for (const schedule of this.#schedules.values()) schedule.checkedUntil = now
    this.#handle = this.#timer.setInterval(() => void this.tick(), this.options.tickMs ?? 1000)
  }

  /** Stops ticking and waits for a tick in progress. */
  async stop(): Promise<void> {
    if (this.#handle !== null) this.#timer.clearInterval(this.#handle)
    this.#handle = null
    await this.#ticking
  }

  /**
   * One tick: claims and fires every slot due since the last one, then takes over and fires
   * the stale unconfirmed claims of each schedule. Ticks never overlap.
   */
  tick(): Promise<void> {
    this.#ticking ??= this.#tick().finally(() => {
      this.#ticking = null
    })
    return this.#ticking
  }

  async #tick(): Promise<void> {
    const { store, owner } = this.options
    const now = this.options.clock.now()
    const maxCatchUp = this.options.maxCatchUp ?? 100
    for (const [name, schedule] of this.#schedules) {
      const slots = schedule.trigger.slotsBetween(
        schedule.checkedUntil,
        now,
        Number.MAX_SAFE_INTEGER,
      )
      schedule.checkedUntil = now
      if (slots.length === 0 || this.options.paused?.(name) === true) continue
      for (const slot of slots.slice(-maxCatchUp)) {
        try {
          if (await store.claim(name, slot, owner, now))
            await this.#fireAndConfirm(name, slot, false)
        } catch (error) {
          this.options.onError?.(error, name)
        }
      }
    }
    for (const name of this.#schedules.keys()) {
      if (this.options.paused?.(name) !== true) await this.#takeOverStale(name, now)
    }
  }

  /** Fires a slot this instance holds; a fire that throws leaves the claim unconfirmed. */
  async #fireAndConfirm(name: string, slot: number, takenOver: boolean): Promise<void> {
    await this.options.fire(name, slot, takenOver)
    await this.options.store.confirm(name, slot, this.options.owner)
  }

  async #takeOverStale(name: string, now: number): Promise<void> {
    const { store, owner } = this.options
    const staleBefore = now - (this.options.leaseMs ?? 30_000)
    let stale: number[]
    try {
      stale = await store.unconfirmed(name, {
        claimedSince: now - (this.options.takeoverWindowMs ?? 3_600_000),
        claimedBefore: staleBefore,
        limit: this.options.maxTakeovers ?? 10,
      })
    } catch (error) {
      this.options.onError?.(error, name)
      return
    }
    for (const slot of stale) {
      // The schedule may have been removed while this tick awaited the store.
      if (!this.#schedules.has(name)) return
      try {
        if (await store.takeOver(name, slot, owner, staleBefore, now)) {
          await this.#fireAndConfirm(name, slot, true)
        }
      } catch (error) {
        this.options.onError?.(error, name)
      }
    }
  }
}
