/**
 * The measuring points the task metrics share, whichever sink records them (Prometheus or
 * OpenTelemetry): tasks taken in and finished, told from the manager's record notifications
 * (so running a task does no metrics work of its own), and the waiting and running counts per
 * queue, read from the task store, so that any instance reports the depth of the queues every
 * instance shares.
 */
import { TERMINAL_STATUSES } from '../status.js'
import type { TaskManager } from '../manager.js'
import type { TaskRecord } from '../record.js'
import type { LiveCount } from '../stores/ports.js'

/** How long (ms) one store read of the live counts answers scrapes. */
export const LIVE_COUNTS_TTL_MS = 1000

/** The queue label of a function this instance has not registered. */
export const UNKNOWN_QUEUE = '__unknown__'

/** Statuses after which a record no longer changes (a retry is a new task). */
const TERMINAL: ReadonlySet<string> = TERMINAL_STATUSES

/** Duration buckets (seconds): from a quick job to an hour-long batch. */
export const DURATION_BUCKETS = [0.01, 0.05, 0.1, 0.5, 1, 5, 15, 60, 300, 900, 3600]

/** Where task outcomes are recorded. */
export interface TaskOutcomeSink {
  /** A task this instance took in (enqueued here, or claimed from the shared store). */
  enqueued(record: Readonly<TaskRecord>): void
  /** A task that reached a final status on this instance (`start_time` null: never started). */
  finished(record: Readonly<TaskRecord>): void
}

/**
 * Feeds `sink` from `manager`'s record notifications; returns the unsubscribe function. Nothing
 * is kept per task: a record reaches a final status once (the record book's compare-and-set), and
 * its first `pending` notification is the only one before it ever started or used a retry (a task
 * waiting for its next attempt is `pending` again, after both).
 */
export function followTaskOutcomes(manager: TaskManager, sink: TaskOutcomeSink): () => void {
  return manager.readRecords((record) => {
    const status = record.status
    // A third of the notifications, the start of a run, counts nothing: out first.
    if (status === 'running') return
    if (status === 'pending') {
      if (record.start_time === null && record.retries_used === 0) sink.enqueued(record)
    } else if (TERMINAL.has(status)) sink.finished(record)
  })
}

/** The waiting and running counts per queue, read from the store at most once a second. */
export class LiveQueueCounts {
  #live: { at: number; counts: Promise<LiveCount[]> } | null = null

  constructor(
    private readonly manager: TaskManager,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * The count of tasks in `status` per queue. Every queue configured on the manager is listed,
   * with 0 when empty: an emptied queue then reads 0 rather than losing its series, so a depth
   * alert or an autoscaler sees "nothing waiting", not "no data" (the names come from code, so
   * the series stay bounded).
   */
  async byQueue(status: LiveCount['status']): Promise<Map<string, number>> {
    const byQueue = new Map<string, number>()
    for (const queue of this.manager.queueStats()) byQueue.set(queue.name, 0)
    for (const count of await this.#liveCounts()) {
      if (count.status !== status) continue
      const queue = this.#queueOf(count.func_name)
      byQueue.set(queue, (byQueue.get(queue) ?? 0) + count.count)
    }
    return byQueue
  }

  #liveCounts(): Promise<LiveCount[]> {
    const now = this.now()
    if (this.#live !== null && now - this.#live.at < LIVE_COUNTS_TTL_MS) return this.#live.counts
    const counts = this.manager.liveCounts()
    this.#live = { at: now, counts }
    // A failed read is not kept: the next scrape tries again.
    counts.catch(() => {
      if (this.#live?.counts === counts) this.#live = null
    })
    return counts
  }

  /**
   * A function's default queue. Tasks of a function this instance has not registered (another
   * instance's) count under {@link UNKNOWN_QUEUE}: their names come from the store, and a label
   * per stored name would be unbounded.
   */
  #queueOf(name: string): string {
    const handle = this.manager.getRegisteredTask(name)
    if (handle === undefined) return UNKNOWN_QUEUE
    return handle.definition.queue ?? 'default'
  }
}
