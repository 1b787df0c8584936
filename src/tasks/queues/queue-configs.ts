/**
 * Queue configurations that outlive the process and reach every instance: a live change
 * (`updateQueueConfig`, the task admin's `PATCH /queues/{name}`) is applied here and written to
 * the store; every instance applies the stored configs at startup and then periodically (with
 * its lease renewal), so a change made on one instance reaches the others within that period
 * and survives restarts. A stored config wins over the one given in code.
 */
import type { StoredQueueConfig, TaskAdminStore } from '../stores/ports.js'
import type { QueueSet } from './queue-set.js'
import type { QueueConfig } from './queue.js'

/** Applies and persists queue configurations. */
export class QueueConfigSync {
  constructor(
    private readonly queues: QueueSet,
    private readonly store: TaskAdminStore | null,
    private readonly warn: (message: string) => void,
  ) {}

  /**
   * Changes a queue live and stores its whole config. Throws `QueueNotFoundError` or
   * `TaskValidationError` (nothing changes); rejects when the store fails (the change holds
   * here, but not yet elsewhere).
   */
  async update(name: string, change: Partial<QueueConfig>): Promise<QueueConfig> {
    const config = this.queues.update(name, change)
    await this.store?.putQueueConfig({ name, ...config })
    return config
  }

  /** Applies the stored configs of the queues this manager has. */
  async load(): Promise<void> {
    if (this.store === null) return
    const stored: StoredQueueConfig[] = await this.store.queueConfigs()
    for (const config of stored) {
      const queue = this.queues.get(config.name)
      if (queue === undefined) continue
      const current = queue.config
      if (current.concurrency === config.concurrency && current.max_size === config.max_size) {
        continue
      }
      try {
        queue.updateConfig({ concurrency: config.concurrency, max_size: config.max_size })
      } catch (error) {
        this.warn(
          `Ignoring the stored config of queue ${JSON.stringify(config.name)}: ${(error as Error).message}`,
        )
      }
    }
  }
}
