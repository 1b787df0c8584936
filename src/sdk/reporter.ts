/**
 * Carries an SDK app's blocked requests and audit entries to the central server, batched, off
 * the request path: a 429 only appends to an in-memory queue; a timer sends what is queued.
 *
 * Bounds: each queue holds at most `maxQueued` items; past it the oldest are dropped (and
 * counted in the log), so a server that is away for long costs the app bounded memory. A batch
 * that fails stays queued and goes with the next one.
 */
import type { AuditEntry } from '../core/audit-entry.js'
import { toError } from '../core/errors.js'
import type { Logger } from '../common/logger.js'
import type { RateLimitHit } from '../rate-limit/exceeded.js'
import { memoryHitStore } from '../rate-limit/stores/memory.js'
import type { RateLimitHitStore } from '../rate-limit/ports.js'
import type { ServerClient } from './server-client.js'
import { MAX_REPORT_ITEMS } from './wire.js'

/** Options of {@link Reporter}. */
export interface ReporterOptions {
  client: ServerClient
  logger: Logger
  /** Milliseconds between sends. */
  intervalMs: number
  /** Most items kept per queue while the server is away. */
  maxQueued: number
}

/** Batches and sends the app's reports. */
export class Reporter {
  private hits: RateLimitHit[] = []
  private audit: AuditEntry[] = []
  private dropped = 0
  private readonly timer: NodeJS.Timeout
  private sending: Promise<void> | null = null

  constructor(private readonly options: ReporterOptions) {
    this.timer = setInterval(() => void this.flush(), options.intervalMs)
    this.timer.unref()
  }

  /**
   * The app engine's blocked-request log: kept locally (capped) as usual, and every record
   * queued for the server.
   */
  hitStore(capacity: number): RateLimitHitStore {
    const local = memoryHitStore(capacity)
    return {
      add: async (record) => {
        await local.add(record)
        this.hits = this.enqueue(this.hits, record)
      },
      list: (options) => local.list(options),
    }
  }

  /** Queues one audit entry of the app's engine. */
  addAudit(entry: AuditEntry): void {
    this.audit = this.enqueue(this.audit, entry)
  }

  /** Sends what is queued (one batch in flight at a time); resolves when it is done. */
  flush(): Promise<void> {
    this.sending ??= this.send().finally(() => {
      this.sending = null
    })
    return this.sending
  }

  /** Stops the timer and sends what is left, once. */
  async close(): Promise<void> {
    clearInterval(this.timer)
    await this.flush()
  }

  private async send(): Promise<void> {
    while (this.hits.length > 0 || this.audit.length > 0) {
      const hits = this.hits.slice(0, MAX_REPORT_ITEMS)
      const audit = this.audit.slice(0, MAX_REPORT_ITEMS)
      try {
        await this.options.client.report({
          hits,
          audit: audit.map((entry) => ({
            action: entry.action,
            route: entry.route,
            actor: entry.actor,
            reason: entry.reason,
            previous_status: entry.previous_status,
            new_status: entry.new_status,
          })),
        })
      } catch (error) {
        this.options.logger.warn(
          `switchyard SDK: report to the server failed; kept for the next attempt (${toError(error).message})`,
        )
        return
      }
      this.hits = this.hits.slice(hits.length)
      this.audit = this.audit.slice(audit.length)
    }
    if (this.dropped > 0) {
      this.options.logger.warn(
        `switchyard SDK: ${this.dropped} reports were dropped while the server was away (queue full)`,
      )
      this.dropped = 0
    }
  }

  private enqueue<T>(queue: T[], item: T): T[] {
    queue.push(item)
    if (queue.length > this.options.maxQueued) {
      this.dropped += queue.length - this.options.maxQueued
      return queue.slice(queue.length - this.options.maxQueued)
    }
    return queue
  }
}
