/**
 * Queue configurations that outlive the process and reach every instance: a live change
 * (`updateQueueConfig`, the task admin's `PATCH /queues/{name}`) or an operator's pause /
 * resume is applied here and written to the store; every instance applies the stored configs
 * at startup and then periodically (with its lease renewal), so a change made on one instance
 * reaches the others within that period and survives restarts. A stored config wins over the
 * one given in code.
 *
 * Why the change feed too: a pause must stop every instance within a second, and the lease
 * period is far longer. The writer announces the change on the store's feed, which every
 * instance already reads a few times a second (cancel requests), and they load the configs
 * again at once.
 */
import type { DurableTaskStore, StoredQueueConfig, TaskAdminStore } from '../stores/ports.js'
import { gatingSettings } from '../groups/gating.js'
import type { QueueSet } from './queue-set.js'
import type { QueueConfig, QueueStats, TaskQueue } from './queue.js'

/** Applies and persists queue configurations. */
export class QueueConfigSync {
  readonly #admin: TaskAdminStore | null

  constructor(
    private readonly queues: QueueSet,
    private readonly store: DurableTaskStore | null,
    private readonly warn: (message: string) => void,
  ) {
    this.#admin = store?.admin ?? null
  }

  /**
   * Changes a queue live and stores its whole config. Throws `QueueNotFoundError` or
   * `TaskValidationError` (nothing changes); rejects when the store fails (the change holds
   * here, but not yet elsewhere).
   */
  async update(name: string, change: Partial<QueueConfig>): Promise<QueueConfig> {
    const config = this.queues.update(name, change)
    await this.#store(this.queues.named(name))
    return config
  }

  /**
   * Pauses (`paused` true) or resumes a queue here at once, stores it and tells the other
   * instances. Throws `QueueNotFoundError` (nothing changes); rejects when the store fails (the
   * change holds here, but not yet elsewhere). Resolves the queue's stats.
   */
  async setPaused(name: string, paused: boolean): Promise<QueueStats> {
    const queue = this.queues.named(name)
    if (paused) queue.hold()
    else queue.release()
    await this.#store(queue)
    return queue.stats()
  }

  async #store(queue: TaskQueue): Promise<void> {
    if (this.store === null || this.#admin === null) return
    const { concurrency, max_size } = queue.config
    await this.#admin.putQueueConfig({
      name: queue.name,
      concurrency,
      max_size,
      paused: queue.held,
      gating: queue.groups === null ? null : gatingSettings(queue.groups.gating),
    })
    await this.store.changes.announceControls()
  }

  /** Applies the stored configs of the queues this manager has. */
  async load(): Promise<void> {
    if (this.#admin === null) return
    const stored: StoredQueueConfig[] = await this.#admin.queueConfigs()
    for (const config of stored) {
      const queue = this.queues.get(config.name)
      if (queue === undefined) continue
      if (config.paused === true) queue.hold()
      else queue.release()
      const current = queue.config
      // Stored group and rate limits apply to a queue that is grouped here too.
      const gating = queue.groups === null ? null : (config.gating ?? null)
      const same =
        current.concurrency === config.concurrency &&
        current.max_size === config.max_size &&
        (gating === null ||
          (current.group_concurrency === gating.group_concurrency &&
            current.rate_limit === gating.rate_limit &&
            current.group_rate_limit === gating.group_rate_limit))
      if (same) continue
      try {
        queue.updateConfig({
          concurrency: config.concurrency,
          max_size: config.max_size,
          ...(gating ?? {}),
        })
      } catch (error) {
        this.warn(
          `Ignoring the stored config of queue ${JSON.stringify(config.name)}: ${(error as Error).message}`,
        )
      }
    }
  }
}
