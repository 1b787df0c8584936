/**
 * One named queue: admission (`max_size` counts waiting items, not running ones), order (higher
 * priority first, FIFO among equals) and concurrency (never more running than the current
 * `concurrency`, also right after it was lowered: running items finish, none start until the
 * count is below the new limit).
 */
import { AsyncResource } from 'node:async_hooks'
import { QueueFullError, TaskValidationError } from '../errors.js'
import { GroupDispatcher, type GateContext, type GroupStats } from '../groups/group-dispatch.js'
import { gatingSettings, NO_GATING, parseQueueGating, type QueueGating } from '../groups/gating.js'
import { PriorityLine } from './priority-line.js'

/**
 * A queue's configuration; null means unlimited. Field names are snake_case, as on the wire.
 * The group and rate limits exist only on a grouped or rate-limited queue (one declared with
 * `groupConcurrency`, `rateLimit` or `groupRateLimit`); limits are limit strings.
 */
export interface QueueConfig {
  concurrency: number | null
  max_size: number | null
  group_concurrency?: number | null
  rate_limit?: string | null
  group_rate_limit?: string | null
}

/** The group and rate fields of {@link QueueConfig}. */
const GATING_FIELDS = ['group_concurrency', 'rate_limit', 'group_rate_limit'] as const

/** Per-queue counters plus the config (the task admin's `GET /queues`). */
export interface QueueStats {
  name: string
  concurrency: number | null
  max_size: number | null
  /** A grouped or rate-limited queue's limits (absent on other queues). */
  group_concurrency?: number | null
  rate_limit?: string | null
  group_rate_limit?: string | null
  /** Paused by an operator: tasks are still admitted, but none starts until it is resumed. */
  paused: boolean
  /** Waiting to start. */
  pending: number
  running: number
  /** Started here and completed (any terminal status). */
  finished: number
  rejected: number
  /**
   * A grouped or rate-limited queue's groups with tasks waiting or running here (ungrouped
   * tasks under `group: null`); absent on other queues.
   */
  groups?: GroupStats[]
}

/**
 * A task waiting for (or holding) a slot in a queue. A parked item gets a `scope`: the async
 * context of the `addTask` call that parked it, so that the task later starts inside the caller's
 * AsyncLocalStorage stores (trace ids) rather than inside whatever task happened to free the
 * slot. An item that starts at once needs none: it runs synchronously inside the caller's context.
 */
export interface QueueItem {
  readonly priority: number
  /** The task's id (a grouped queue's holds are in its name). */
  readonly taskId: string
  /** The task's group, or null (only grouped and rate-limited queues read it). */
  readonly group: string | null
  scope: AsyncResource | undefined
  /** Whether the item waits for a slot (set and cleared by its queue). */
  waiting: boolean
  /**
   * Runs the task and calls `onSettled` once when it is over (possibly before returning: a
   * callback, not a promise, so that a slot costs no microtask). Never throws.
   */
  start(onSettled: () => void): void
}

/** A named queue with priority order, `max_size` admission and a concurrency limit. */
export class TaskQueue {
  readonly name: string
  #config: QueueConfig
  /** Waiting items in start order; an item removed while waiting is dropped when reached. */
  readonly #line = new PriorityLine<QueueItem>()
  /** Items still waiting (the line also holds removed ones until they are reached). */
  #waiting = 0
  #running = 0
  #finished = 0
  #rejected = 0
  /** Shutdown: never starts anything again. */
  #paused = false
  /** An operator's pause ({@link hold}): lifted by {@link release}. */
  #held = false
  #draining = false
  /** Set on a grouped or rate-limited queue: its items wait and start through it. */
  readonly #groups: GroupDispatcher | null = null
  readonly #onSettled = (): void => {
    this.#running--
    this.#finished++
    this.#drain()
  }

  constructor(
    name: string,
    config: QueueConfig,
    gating: { options: QueueGating; context: GateContext } | null = null,
  ) {
    this.name = name
    this.#config = validateQueueConfig(config, name)
    if (gating !== null) {
      const host = {
        name,
        hasRoom: (asking: number) => {
          const limit = this.#config.concurrency
          // An operator's pause holds a grouped queue too.
          return !this.#paused && !this.#held && (limit === null || this.#running + asking < limit)
        },
        start: (item: QueueItem, onEnd: () => void) => {
          this.#waiting--
          this.#running++
          item.start(() => {
            onEnd()
            this.#onSettled()
          })
        },
      }
      this.#groups = new GroupDispatcher(host, gating.options, gating.context)
    }
  }

  /** The group dispatcher of a grouped or rate-limited queue, else null. */
  get groups(): GroupDispatcher | null {
    return this.#groups
  }

  /** The current configuration (a copy), with the group and rate limits of a grouped queue. */
  get config(): QueueConfig {
    if (this.#groups === null) return { ...this.#config }
    return { ...this.#config, ...gatingSettings(this.#groups.gating) }
  }

  /** Throws {@link QueueFullError} (and counts a rejection) when waiting items reach `max_size`. */
  admit(): void {
    const max = this.#config.max_size
    if (max !== null && this.#waiting >= max && !this.#canStartNow()) {
      this.#rejected++
      throw new QueueFullError(
        `Queue ${JSON.stringify(this.name)} is full: ${this.#waiting} tasks waiting (max_size ${max}).`,
        { queue: this.name, max_size: max },
      )
    }
  }

  /** Starts `item` now if a slot is free, else makes it wait. Call {@link admit} first. */
  offer(item: QueueItem): void {
    if (this.#groups !== null) {
      this.#waiting++
      this.#groups.offer(item)
      return
    }
    if (this.#canStartNow()) {
      this.#start(item)
      return
    }
    item.scope = new AsyncResource('switchyard.task')
    item.waiting = true
    this.#waiting++
    this.#line.push(item)
  }

  /** Removes a waiting item (cancelled while pending). Returns whether it was waiting. */
  remove(item: QueueItem): boolean {
    if (this.#groups !== null) {
      const removed = this.#groups.remove(item)
      if (removed) this.#waiting--
      return removed
    }
    if (!item.waiting) return false
    item.waiting = false
    item.scope = undefined
    this.#waiting--
    return true
  }

  /** Changes the config live; fields left undefined keep their value. Throws on bad values, changing nothing. */
  updateConfig(change: Partial<QueueConfig>): QueueConfig {
    const gating = this.#nextGating(change)
    const next = validateQueueConfig({ ...this.#config, ...stripUndefined(change) }, this.name)
    this.#config = next
    if (gating !== null) this.#groups?.setGating(gating)
    this.#drain()
    return this.config
  }

  /**
   * The group and rate limits after `change`, or null when it changes none of them. Throws
   * (changing nothing) on a bad value, or on a queue that was not declared grouped: its tasks
   * do not wait by group, so limits per group could not apply to them.
   */
  #nextGating(change: Partial<QueueConfig>): QueueGating | null {
    if (GATING_FIELDS.every((field) => change[field] === undefined)) return null
    if (this.#groups === null) {
      throw new TaskValidationError(
        `Queue ${JSON.stringify(this.name)} has no group or rate limits: declare groupConcurrency, rateLimit or groupRateLimit in its options to change them at runtime.`,
        {
          details: GATING_FIELDS.filter((field) => change[field] !== undefined).map((field) => ({
            field,
            message: 'the queue is not grouped',
          })),
        },
      )
    }
    const current = gatingSettings(this.#groups.gating)
    const pick = <K extends (typeof GATING_FIELDS)[number]>(field: K) =>
      change[field] === undefined ? current[field] : change[field]
    return (
      parseQueueGating(this.name, {
        groupConcurrency: pick('group_concurrency'),
        rateLimit: pick('rate_limit'),
        groupRateLimit: pick('group_rate_limit'),
      }) ?? NO_GATING
    )
  }

  /** Stops starting waiting items (shutdown). Running items are not touched. */
  pause(): void {
    this.#paused = true
    this.#groups?.stop()
  }

  /**
   * An operator's pause: waiting items stay waiting and new ones are still admitted (up to
   * `max_size`), but none starts until {@link release}. Running items are not touched.
   */
  hold(): void {
    this.#held = true
  }

  /** Lifts {@link hold}: waiting items start again as slots allow. */
  release(): void {
    if (!this.#held) return
    this.#held = false
    this.#drain()
  }

  /** Whether an operator paused the queue ({@link hold}). */
  get held(): boolean {
    return this.#held
  }

  /** Counters and config. */
  stats(): QueueStats {
    return {
      name: this.name,
      concurrency: this.#config.concurrency,
      max_size: this.#config.max_size,
      ...(this.#groups === null ? {} : gatingSettings(this.#groups.gating)),
      paused: this.#held,
      pending: this.#waiting,
      running: this.#running,
      finished: this.#finished,
      rejected: this.#rejected,
      ...(this.#groups === null ? {} : { groups: this.#groups.stats() }),
    }
  }

  #canStartNow(): boolean {
    if (this.#groups !== null) return false
    const limit = this.#config.concurrency
    return (
      !this.#paused &&
      !this.#held &&
      this.#waiting === 0 &&
      (limit === null || this.#running < limit)
    )
  }

  #start(item: QueueItem): void {
    this.#running++
    item.start(this.#onSettled)
  }

  #drain(): void {
    // Tasks that finish synchronously call back into #drain; the outer loop does the work, so
    // the stack stays flat however many of them are waiting.
    if (this.#paused || this.#held || this.#draining) return
    if (this.#groups !== null) {
      this.#groups.pump()
      return
    }
    this.#draining = true
    try {
      const limit = this.#config.concurrency
      while (limit === null || this.#running < limit) {
        const item = this.#line.pop()
        if (item === undefined) return
        if (!item.waiting) continue
        item.waiting = false
        this.#waiting--
        const scope = item.scope
        item.scope = undefined
        if (scope === undefined) this.#start(item)
        else scope.runInAsyncScope(this.#start, this, item)
      }
    } finally {
      this.#draining = false
    }
  }
}

function stripUndefined(change: Partial<QueueConfig>): Partial<QueueConfig> {
  const result: Partial<QueueConfig> = {}
  if (change.concurrency !== undefined) result.concurrency = change.concurrency
  if (change.max_size !== undefined) result.max_size = change.max_size
  return result
}

/** Validates a queue config: concurrency a positive integer or null, max_size ≥ 0 or null. */
export function validateQueueConfig(config: QueueConfig, name: string): QueueConfig {
  const { concurrency, max_size } = config
  if (concurrency !== null && (!Number.isInteger(concurrency) || concurrency < 1)) {
    throw new TaskValidationError(
      `Queue ${JSON.stringify(name)}: concurrency must be a positive integer or null, got ${String(concurrency)}.`,
    )
  }
  if (max_size !== null && (!Number.isInteger(max_size) || max_size < 0)) {
    throw new TaskValidationError(
      `Queue ${JSON.stringify(name)}: max_size must be a non-negative integer or null, got ${String(max_size)}.`,
    )
  }
  return { concurrency, max_size }
}
