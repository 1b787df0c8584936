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
  /**
   * Per queue, how many local changes have begun: a load whose read was sent before a local
   * change began (or while one was being written) holds a config older than that change, and
   * must not undo it. The change's own announcement brings the next load.
   */
  readonly #changes = new Map<string, number>()
  /** Per queue, local changes still being written to the store. */
  readonly #writing = new Map<string, number>()
  /** Queues whose stored config a load skipped: read again once their local change is stored. */
  readonly #skipped = new Set<string>()

  /**
   * @param reload asks for a fresh load of the stored configs (serialised by the caller); used
   *   when a load had to skip a queue while its local change was being written, so a change
   *   made meanwhile by another instance is not missed until the next periodic load.
   */
  constructor(
    private readonly queues: QueueSet,
    private readonly store: DurableTaskStore | null,
    private readonly warn: (message: string) => void,
    private readonly reload: () => Promise<void> = () => Promise.resolve(),
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
    const name = queue.name
    this.#changes.set(name, (this.#changes.get(name) ?? 0) + 1)
    this.#writing.set(name, (this.#writing.get(name) ?? 0) + 1)
    try {
      const { concurrency, max_size } = queue.config
      await this.#admin.putQueueConfig({
        name,
        concurrency,
        max_size,
        paused: queue.held,
        gating: queue.groups === null ? null : gatingSettings(queue.groups.gating),
      })
    } finally {
      const left = (this.#writing.get(name) ?? 1) - 1
      if (left === 0) this.#writing.delete(name)
      else this.#writing.set(name, left)
    }
    await this.store.changes.announceControls()
    if (!this.#writing.has(name) && this.#skipped.delete(name)) {
      this.reload().catch((error: unknown) => {
        this.warn(`Could not reload the stored queue configs: ${(error as Error).message}`)
      })
    }
  }

  /** Applies the stored configs of the queues this manager has. */
  async load(): Promise<void> {
    if (this.#admin === null) return
    const before = new Map(this.#changes)
    const stored: StoredQueueConfig[] = await this.#admin.queueConfigs()
    for (const config of stored) {
      const queue = this.queues.get(config.name)
      if (queue === undefined) continue
      // Still being written: another instance's change stored just after ours may be in this
      // read, so read again once ours is stored. Changed since the read was sent: our write
      // stored the whole config after anything this read can hold.
      if (this.#writing.has(config.name)) {
        this.#skipped.add(config.name)
        continue
      }
      if ((this.#changes.get(config.name) ?? 0) !== (before.get(config.name) ?? 0)) continue
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
