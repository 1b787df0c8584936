/**
 * The periodic scheduler: ticks every second, works out which slots of each schedule came due
 * since its last tick, and fires a slot only if this instance wins the store's insert-if-absent
 * of `(schedule name, slot time)`. Every instance covers every slot, and the store lets exactly
 * one of them fire it: no slot is missed while any instance runs, none fires twice, and no lock
 * TTL has to be guessed.
 */
import { ScheduleError } from './errors.js'
import { systemLoopTimer, type LoopClock, type LoopTimer } from './timer.js'
import { PeriodicTrigger, type ScheduleTrigger } from './trigger.js'

/** Fires one slot of a schedule (the manager enqueues the task with `source: "scheduled"`). */
export type SlotFire = (scheduleName: string, slotTime: number) => void | Promise<void>

/**
 * The store operation the loop needs (the durable stores' `slots.claim`): an insert-if-absent
 * of the slot that answers true to exactly one caller.
 */
export interface SlotStore {
  claim(scheduleName: string, slotTime: number, owner: string): Promise<boolean>
}

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

  constructor(private readonly options: SchedulerLoopOptions) {
    this.#timer = options.timer ?? systemLoopTimer
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

  /** One tick: claims and fires every slot due since the last one. Ticks never overlap. */
  tick(): Promise<void> {
    this.#ticking ??= this.#tick().finally(() => {
      this.#ticking = null
    })
    return this.#ticking
  }

  async #tick(): Promise<void> {
    const now = this.options.clock.now()
    const maxCatchUp = this.options.maxCatchUp ?? 100
    for (const [name, schedule] of this.#schedules) {
      const slots = schedule.trigger.slotsBetween(
        schedule.checkedUntil,
        now,
        Number.MAX_SAFE_INTEGER,
      )
      schedule.checkedUntil = now
      for (const slot of slots.slice(-maxCatchUp)) {
        try {
          if (await this.options.store.claim(name, slot, this.options.owner)) {
            await this.options.fire(name, slot)
          }
        } catch (error) {
          this.options.onError?.(error, name)
        }
      }
    }
  }
}
