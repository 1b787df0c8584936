/**
 * The manager's named queues. A default queue always exists; a task naming an unknown queue
 * falls back to it with a warning (logged once per unknown name, so a hot path does not flood
 * the log).
 */
import { QueueNotFoundError, TaskValidationError } from '../errors.js'
import type { GateContext } from '../groups/group-dispatch.js'
import { parseQueueGating } from '../groups/gating.js'
import { TaskQueue, type QueueConfig, type QueueStats } from './queue.js'

/** The queue used when a task names none. */
export const DEFAULT_QUEUE = 'default'

/** One named queue in the manager's `queues` option; a field left out is unlimited (null). */
export interface QueueOptions {
  /** Most tasks of the queue running at once. */
  concurrency?: number | null
  /** Most tasks waiting to start (running ones do not count); more are rejected. */
  maxSize?: number | null
  /** Deprecated snake_case spelling of {@link maxSize}: still accepted, with a warning. */
  max_size?: number | null
  /**
   * Most running tasks of each group (the task option `group`) across every instance sharing
   * the store. Groups are served round-robin.
   */
  groupConcurrency?: number | null
  /** Most starts of the queue per window, across every instance: a limit string, `'20/second'`. */
  rateLimit?: string | null
  /** Most starts of each group per window, across every instance: `'100/minute'`. */
  groupRateLimit?: string | null
}

/** Queue options of the manager: a mapping name → config, plus the `maxSize` shorthand. */
export interface QueueSetOptions {
  /** Named queues; fields left out are unlimited (null). */
  queues?: Record<string, QueueOptions> | undefined
  /** Shorthand for the default queue's max_size. */
  maxSize?: number | null | undefined
  /** Receives the unknown-queue warning. */
  warn: (message: string) => void
  /** The gates of grouped and rate-limited queues (the store's, or this process's). */
  gates: GateContext
}

/** Every queue of one manager. */
export class QueueSet {
  readonly #queues = new Map<string, TaskQueue>()
  readonly #warnedUnknown = new Set<string>()
  readonly #warn: (message: string) => void

  constructor(options: QueueSetOptions) {
    this.#warn = options.warn
    const given = options.queues ?? {}
    if (typeof given !== 'object') throw new TaskValidationError('queues must be an object.')
    let deprecated = false
    const sizes = new Map<string, number | null | undefined>()
    for (const [name, config] of Object.entries(given)) {
      const size = queueMaxSize(name, config)
      if (config.max_size !== undefined) deprecated = true
      sizes.set(name, size)
      const gating = parseQueueGating(name, config)
      this.#queues.set(
        name,
        new TaskQueue(
          name,
          { concurrency: config.concurrency ?? null, max_size: size ?? null },
          gating === null ? null : { options: gating, context: options.gates },
        ),
      )
    }
    if (deprecated) {
      this.#warn(
        'The queue option max_size is deprecated: write maxSize (queues: { name: { concurrency, maxSize } }).',
      )
    }
    const defaultQueue = this.#queues.get(DEFAULT_QUEUE)
    const maxSize = options.maxSize ?? null
    if (defaultQueue === undefined) {
      this.#queues.set(
        DEFAULT_QUEUE,
        new TaskQueue(DEFAULT_QUEUE, { concurrency: null, max_size: maxSize }),
      )
    } else if (options.maxSize !== undefined && sizes.get(DEFAULT_QUEUE) === undefined) {
      defaultQueue.updateConfig({ max_size: maxSize })
    }
  }

  /** The queue called `name`, or the default queue (with a warning) when there is none. */
  resolve(name: string | null): TaskQueue {
    if (name === null) return this.#default()
    const queue = this.#queues.get(name)
    if (queue !== undefined) return queue
    if (!this.#warnedUnknown.has(name)) {
      this.#warnedUnknown.add(name)
      this.#warn(`Unknown queue ${JSON.stringify(name)}: using the ${DEFAULT_QUEUE} queue.`)
    }
    return this.#default()
  }

  /** The queue called exactly `name`. */
  get(name: string): TaskQueue | undefined {
    return this.#queues.get(name)
  }

  /** Changes one queue's config live. Throws {@link QueueNotFoundError} or a validation error. */
  update(name: string, change: Partial<QueueConfig>): QueueConfig {
    return this.named(name).updateConfig(change)
  }

  /** The queue called exactly `name`; throws {@link QueueNotFoundError} when there is none. */
  named(name: string): TaskQueue {
    const queue = this.#queues.get(name)
    if (queue === undefined) {
      throw new QueueNotFoundError(`No queue named ${JSON.stringify(name)}.`, { queue: name })
    }
    return queue
  }

  /** Stats of every queue, in declaration order (default last unless declared). */
  stats(): QueueStats[] {
    return [...this.#queues.values()].map((queue) => queue.stats())
  }

  /** Extends the holds of the grouped tasks running here (each maintenance round). */
  async renewHolds(): Promise<void> {
    for (const queue of this.#queues.values()) await queue.groups?.renew()
  }

  /** Every queue. */
  all(): TaskQueue[] {
    return [...this.#queues.values()]
  }

  #default(): TaskQueue {
    return this.#queues.get(DEFAULT_QUEUE) as TaskQueue
  }
}

/** The waiting-task bound of one queue option: `maxSize`, or the deprecated `max_size`. */
function queueMaxSize(name: string, config: QueueOptions): number | null | undefined {
  if (typeof config !== 'object' || (config as unknown) === null) {
    throw new TaskValidationError(
      `Queue ${JSON.stringify(name)}: expected { concurrency, maxSize }.`,
    )
  }
  const { maxSize, max_size: legacy } = config
  if (maxSize !== undefined && legacy !== undefined && maxSize !== legacy) {
    throw new TaskValidationError(
      `Queue ${JSON.stringify(name)}: maxSize (${String(maxSize)}) and the deprecated max_size (${String(legacy)}) disagree; keep maxSize.`,
    )
  }
  return maxSize !== undefined ? maxSize : legacy
}
