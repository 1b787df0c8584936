/**
 * The manager's periodic schedules: `manager.schedule(trigger, fn, options)` registers `fn` as a
 * task and a {@link SchedulerLoop} entry; each slot this instance wins in the store becomes an
 * `addTask` with `source: "scheduled"` and the slot time in the `slot` tag, created only if no
 * task with the slot's id exists (with a durable store: one create-only write of its pending
 * record), so a slot fired by both a slow claimer and the instance that took it over runs once.
 *
 * Why the slot store falls back to memory: without a durable store there is only this instance,
 * and a map of claimed slots gives it the same never-twice rule.
 *
 * Operators pause and resume a schedule (no slot fires on any instance while it is paused; the
 * slots that come due then are skipped, not caught up) and run it now (a `manual` run outside
 * any slot). Pauses are stored in the admin store and announced on its change feed, so every
 * instance applies them within a second and a restart keeps them.
 */
import { TaskValidationError, toError } from './errors.js'
import type { ExecutorKind } from './record.js'
import type { TaskFunction, TaskHandle, TaskOptions } from './registry.js'
import { ScheduleError, ScheduleNotFoundError } from './scheduling/errors.js'
import { memorySlotStore } from './scheduling/memory-slot-store.js'
import { SchedulerLoop, type SlotStore } from './scheduling/scheduler-loop.js'
import type { LoopClock, LoopTimer } from './scheduling/timer.js'
import type { DurableTaskStore } from './stores/ports.js'
import { PeriodicTrigger, type ScheduleTrigger } from './scheduling/trigger.js'
import { slotTaskId } from './slot-task-id.js'
import { toIso } from './time.js'

/** Options of `manager.schedule(trigger, fn, options)`. Durations are seconds. */
export interface ScheduleOptions {
  /** Schedule and task name; default: the function's name. Unique per manager. */
  name?: string
  /** Also run once when the manager starts (on this instance, outside any slot). */
  runOnStartup?: boolean
  retries?: number
  delay?: number
  backoff?: number
  executor?: ExecutorKind
  queue?: string
  /** Thread/process tasks: the declaring module (see `TaskOptions.module`). */
  module?: string | URL
  /** Seconds each run's attempt may take (see `TaskOptions.timeout`). */
  timeout?: number
}

/** A periodic schedule as the manager lists it. */
export interface ScheduleInfo {
  name: string
  /** e.g. `every 5s` or `cron 0 9 * * 1 (UTC)`. */
  trigger: string
  /** Next slot (epoch ms), or null when the cron never runs again. */
  next_run: number | null
  /**
   * How late (seconds) this instance enqueued the last slot it fired: from the slot's due time
   * to the enqueue. Null until this instance fires a slot (another instance may fire them all).
   */
  last_lag_seconds: number | null
  /** Paused by an operator: no slot fires on any instance. */
  paused: boolean
}

/** What the schedules need of the manager. */
export interface ScheduleHost {
  register(options: TaskOptions, fn: TaskFunction<[]>): TaskHandle<[]>
  /** Enqueues a run outside any slot (a fresh task id); resolves its task id. */
  enqueue(handle: TaskHandle<[]>, source: 'scheduled' | 'manual'): Promise<string>
  /**
   * Enqueues a slot's run (`source: "scheduled"`, the slot time in the `slot` tag) under
   * `taskId` only if no task with that id exists — in the durable store when there is one, in
   * one atomic write; resolves whether this call created it. Rejects, having created nothing,
   * when it could not.
   */
  enqueueSlot(handle: TaskHandle<[]>, slot: string, taskId: string): Promise<boolean>
  error(message: string, error: unknown): void
}

/** The periodic schedules of one manager. */
export class ManagerSchedules {
  readonly #loop: SchedulerLoop
  readonly #host: ScheduleHost
  readonly #entries = new Map<
    string,
    {
      handle: TaskHandle<[]>
      trigger: PeriodicTrigger
      runOnStartup: boolean
      lastLagSeconds: number | null
    }
  >()
  readonly #clock: LoopClock
  /** Names of the paused schedules, as last stored or loaded (may name unknown schedules). */
  readonly #paused = new Set<string>()
  readonly #controls: DurableTaskStore | null
  #started = false

  constructor(options: {
    host: ScheduleHost
    store: SlotStore | null
    /** Where pauses are kept and announced; null keeps them in this process only. */
    controls: DurableTaskStore | null
    owner: string
    clock: LoopClock
    timer?: LoopTimer
  }) {
    this.#host = options.host
    this.#clock = options.clock
    this.#controls = options.controls
    this.#loop = new SchedulerLoop({
      paused: (name) => this.#paused.has(name),
      store: options.store ?? memorySlotStore(),
      owner: options.owner,
      clock: options.clock,
      timer: options.timer,
      fire: (name, slot) => this.#fire(name, slot),
      onError: (error, name) => options.host.error(`schedule ${name} failed`, error),
    })
  }

  /**
   * Registers a periodic schedule. Throws {@link ScheduleError} for an invalid trigger or a
   * duplicate name, `TaskValidationError` for bad task options; nothing is registered then.
   */
  add(
    trigger: ScheduleTrigger,
    fn: TaskFunction<[]>,
    options: ScheduleOptions = {},
  ): TaskHandle<[]> {
    if (typeof fn !== 'function') throw new TaskValidationError('schedule needs a function.')
    if (typeof trigger !== 'object' || (trigger as unknown) === null) {
      throw new ScheduleError('schedule needs { every } or { cron, timezone }.')
    }
    const periodic = new PeriodicTrigger(trigger)
    const name = options.name ?? fn.name
    if (typeof name !== 'string' || name === '') {
      throw new ScheduleError('A schedule needs a name (options.name or a named function).')
    }
    if (this.#entries.has(name)) throw new ScheduleError(`A schedule named "${name}" exists.`)
    const handle = this.#host.register(
      {
        name,
        retries: options.retries,
        delay: options.delay,
        backoff: options.backoff,
        executor: options.executor,
        queue: options.queue,
        module: options.module,
        timeout: options.timeout,
      },
      fn,
    )
    this.#loop.add(name, periodic)
    this.#entries.set(name, {
      handle,
      trigger: periodic,
      runOnStartup: options.runOnStartup === true,
      lastLagSeconds: null,
    })
    if (this.#started && options.runOnStartup === true) void this.#run(name)
    return handle
  }

  /** Every periodic schedule with its next slot. */
  list(): ScheduleInfo[] {
    return [...this.#entries].map(([name, entry]) => ({
      name,
      trigger: entry.trigger.description,
      next_run: this.#loop.nextRun(name),
      last_lag_seconds: entry.lastLagSeconds,
      paused: this.#paused.has(name),
    }))
  }

  /**
   * Pauses (`paused` true) or resumes a schedule here at once, stores it and tells the other
   * instances. Throws {@link ScheduleNotFoundError} (nothing changes); rejects when the store
   * fails (the change holds here, not yet elsewhere).
   */
  async setPaused(name: string, paused: boolean): Promise<ScheduleInfo> {
    this.#entry(name)
    if (paused) this.#paused.add(name)
    else this.#paused.delete(name)
    if (this.#controls !== null) {
      await this.#controls.admin.putScheduleControl({
        name,
        paused,
        updated_ms: Math.round(this.#clock.now()),
      })
      await this.#controls.changes.announceControls()
    }
    return this.list().find((info) => info.name === name) as ScheduleInfo
  }

  /**
   * Enqueues a run of the schedule now (`source: "manual"`, outside any slot; also while it is
   * paused: the operator asked for it). Throws {@link ScheduleNotFoundError}; resolves the id.
   */
  runNow(name: string): Promise<string> {
    try {
      return this.#host.enqueue(this.#entry(name).handle, 'manual')
    } catch (error) {
      return Promise.reject(toError(error))
    }
  }

  /** Applies the stored pauses (startup, maintenance rounds and announcements). */
  async load(): Promise<void> {
    if (this.#controls === null) return
    const controls = await this.#controls.admin.scheduleControls()
    this.#paused.clear()
    for (const control of controls) if (control.paused) this.#paused.add(control.name)
  }

  #entry(name: string) {
    const entry = typeof name === 'string' ? this.#entries.get(name) : undefined
    if (entry === undefined) {
      throw new ScheduleNotFoundError(`No schedule named ${JSON.stringify(name)}.`, {
        schedule: name,
      })
    }
    return entry
  }

  /** Starts the loop and fires `runOnStartup` schedules. */
  start(): void {
    if (this.#started) return
    this.#started = true
    this.#loop.start()
    for (const [name, entry] of this.#entries) {
      if (entry.runOnStartup) void this.#run(name)
    }
  }

  /** Stops the loop and waits for a tick in progress. */
  async stop(): Promise<void> {
    await this.#loop.stop()
  }

  /**
   * Creates a slot's task unless it exists; throws when it could not (the loop retries after
   * the lease). Its id is the slot's on every instance, so whether this instance claimed the
   * slot or took it over from a claimer that died or stalled, the task is created once: by
   * whichever of them gets there first, and the other finds it and runs nothing.
   */
  async #fire(name: string, slot: number): Promise<void> {
    const entry = this.#entries.get(name)
    if (entry === undefined) return
    const created = await this.#host.enqueueSlot(entry.handle, toIso(slot), slotTaskId(name, slot))
    // Measured after the enqueue: a slow store is part of what makes a schedule late.
    if (created) entry.lastLagSeconds = Math.max(0, this.#clock.now() - slot) / 1000
  }

  async #run(name: string): Promise<void> {
    const entry = this.#entries.get(name)
    if (entry === undefined) return
    try {
      await this.#host.enqueue(entry.handle, 'scheduled')
    } catch (error) {
      this.#host.error(`schedule ${name} could not enqueue its task`, error)
    }
  }
}
