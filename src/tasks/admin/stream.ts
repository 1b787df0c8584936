/**
 * The task admin's live stream (`GET {tasks}/dashboard/stream`) on the shared SSE hub: one
 * `task` event per state change of this process's records and per added log line (lines added
 * in the same event-loop turn share one event), each carrying the serialized record, with ids,
 * `Last-Event-ID` resume from the hub's bounded ring, keepalive comments, and slow clients
 * dropped.
 *
 * Other instances' changes are relayed through the store: every `relayInterval` the stream
 * reads the store's change feed (a table on SQL, a Redis stream), skips the entries this
 * instance wrote, and publishes the records the others changed (at most `RELAY_LIMIT` per
 * round; a dashboard also polls). After a round that found such changes the next one comes
 * after `BUSY_RELAY_MS`, so a busy cluster's changes reach the page within a fraction of a
 * second. Polling, not pub/sub, because it needs no extra connection and works the same on
 * every backend; the cost is one small query per interval (five a second at most while other
 * instances write).
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import { EventHub, type EventHubOptions } from '../../common/sse-hub.js'
import { endHeadRequest, lastEventId, writeStreamHead } from '../../common/sse-stream.js'
import { TaskValidationError } from '../errors.js'
import type { TaskManager } from '../manager.js'
import type { Logger } from '../../common/logger.js'
import type { TaskRecord } from '../record.js'
import type { DurableTaskStore } from '../stores/ports.js'
import type { TaskAdminSession } from './auth/tokens.js'
import { serializeTask } from './serialize.js'

/** Records of other instances relayed per round at most. */
const RELAY_LIMIT = 200
/**
 * The delay (ms) before the next round after one that relayed something: other instances are
 * busy, so their next change should reach the page in a fraction of a second, not a full
 * interval. Idle rounds go back to `relayInterval`, so the cost stays one small query per
 * interval when nothing happens and at most five a second while others write.
 */
const BUSY_RELAY_MS = 200
/** How often an open stream re-checks that its session was not revoked (ms). */
const SESSION_CHECK_MS = 30_000

/** Options of {@link TaskStream}. */
export interface TaskStreamOptions {
  manager: TaskManager
  displayFuncArgs: boolean
  hub: EventHubOptions
  /** Seconds between reads of the store's change feed. */
  relayInterval: number
  logger: Pick<Logger, 'error'>
  /** Whether a session still holds (not revoked). */
  sessionValid: (session: TaskAdminSession) => Promise<boolean>
  /** The sessions' clock (epoch ms). */
  now: () => number
}

/** The stream of one task-admin mount. */
export class TaskStream {
  readonly hub: EventHub
  readonly #options: TaskStreamOptions
  readonly #store: DurableTaskStore | null
  readonly #unsubscribe: (() => void)[] = []
  readonly #logged = new Set<string>()
  #flush: NodeJS.Immediate | null = null
  #relayTimer: NodeJS.Timeout | null = null
  #position: string | null = null
  #relaying = false
  #closed = false
  /** The open streams' enders by session id. */
  readonly #enders = new Map<string, Set<() => void>>()
  readonly #seen = new Set<string>()
  /** Keeps events in order when building one needs a store read (`displayFuncArgs`). */
  #chain: Promise<void> = Promise.resolve()

  constructor(options: TaskStreamOptions) {
    this.#options = options
    this.#store = options.manager.durableStore
    this.hub = new EventHub(options.hub, (message) => new TaskValidationError(message))
  }

  /** Starts following the manager and, with a durable store, the other instances. */
  start(): void {
    const { manager, relayInterval } = this.#options
    this.#unsubscribe.push(manager.subscribe((record) => this.#publish(record)))
    this.#unsubscribe.push(
      manager.subscribeLogs((taskId) => {
        this.#logged.add(taskId)
        this.#flush ??= setImmediate(() => this.#flushLogs())
      }),
    )
    if (this.#store === null) return
    const next = (relayed: boolean) => {
      if (this.#closed) return
      const delay = relayed ? Math.min(BUSY_RELAY_MS, relayInterval * 1000) : relayInterval * 1000
      this.#relayTimer = setTimeout(() => void this.relay().then(next), delay)
      this.#relayTimer.unref()
    }
    void this.relay().then(next)
  }

  /** Stops everything and ends every stream. */
  close(): void {
    for (const unsubscribe of this.#unsubscribe.splice(0)) unsubscribe()
    if (this.#flush !== null) clearImmediate(this.#flush)
    this.#closed = true
    if (this.#relayTimer !== null) clearTimeout(this.#relayTimer)
    this.hub.close()
  }

  /** Answers a stream request: SSE headers, resume after `Last-Event-ID`, session watch. */
  connect(request: FastifyRequest, reply: FastifyReply, session: TaskAdminSession | null): void {
    const resumeAfter = lastEventId(request.headers, (message) => new TaskValidationError(message))
    void reply.hijack()
    const response = reply.raw
    writeStreamHead(response)
    if (endHeadRequest(request.method, response)) return
    const disconnect = this.hub.connect(response, resumeAfter)
    const timers: NodeJS.Timeout[] = []
    let forget = (): void => undefined
    const stop = () => {
      for (const timer of timers) clearTimeout(timer)
      forget()
      disconnect()
    }
    const end = () => {
      stop()
      response.end()
    }
    if (session !== null) {
      forget = this.#watchSession(session.tokenId, end)
      // A stream lives no longer than its session: it ends at expiry and after a logout.
      const expiry = setTimeout(end, Math.max(0, session.expiresAt - this.#options.now()))
      const check = setInterval(() => {
        this.#options.sessionValid(session).then(
          (valid) => {
            if (!valid) end()
          },
          () => undefined,
        )
      }, SESSION_CHECK_MS)
      expiry.unref()
      check.unref()
      timers.push(expiry, check)
    }
    request.raw.once('close', stop)
  }

  /**
   * Ends this instance's open streams of a session at once (at a logout here; the periodic
   * check ends those of other instances).
   */
  endSession(tokenId: string): void {
    for (const end of [...(this.#enders.get(tokenId) ?? [])]) end()
  }

  /** Registers `end` under the session; returns the function that forgets it. */
  #watchSession(tokenId: string, end: () => void): () => void {
    let enders = this.#enders.get(tokenId)
    if (enders === undefined) {
      enders = new Set()
      this.#enders.set(tokenId, enders)
    }
    enders.add(end)
    const set = enders
    return () => {
      set.delete(end)
      // Bounded by the open streams: a session's entry goes with its last stream.
      if (set.size === 0 && this.#enders.get(tokenId) === set) this.#enders.delete(tokenId)
    }
  }

  /**
   * One relay round: publishes what other instances changed since the last round. Resolves
   * whether it found any (the next round then comes sooner).
   */
  async relay(): Promise<boolean> {
    const store = this.#store
    if (store === null || this.#relaying) return false
    this.#relaying = true
    try {
      const { position, changes } = await store.changes.read(this.#position, RELAY_LIMIT)
      this.#position = position
      const ids: string[] = []
      for (const change of changes) {
        if (this.#seen.has(change.id)) continue
        this.#remember(change.id)
        if (change.origin === store.changes.origin) continue
        for (const id of change.task_ids) if (ids.length < RELAY_LIMIT) ids.push(id)
      }
      if (this.hub.clientCount === 0) return ids.length > 0
      for (const id of new Set(ids)) {
        const task = await store.records.get(id)
        if (task !== null) this.#emit(serializeTask(task, this.#options.displayFuncArgs))
      }
      return ids.length > 0
    } catch (error) {
      this.#options.logger.error(
        { err: error },
        'task admin: relaying other instances’ changes failed',
      )
      return false
    } finally {
      this.#relaying = false
    }
  }

  #remember(changeId: string): void {
    this.#seen.add(changeId)
    if (this.#seen.size > 2000) {
      const oldest = this.#seen.values().next().value
      if (oldest !== undefined) this.#seen.delete(oldest)
    }
  }

  #flushLogs(): void {
    this.#flush = null
    const ids = [...this.#logged]
    this.#logged.clear()
    for (const id of ids) {
      const record = this.#options.manager.localTask(id)
      if (record !== undefined) this.#publish(record)
    }
  }

  #publish(record: TaskRecord): void {
    if (!this.#options.displayFuncArgs) {
      this.#emit(record)
      return
    }
    // The arguments live in the stored form: read it, keeping events in order.
    const { manager } = this.#options
    this.#chain = this.#chain
      .then(async () => {
        const task = await manager.getStoredTask(record.task_id)
        this.#emit(task === undefined ? record : serializeTask({ ...task, record }, true))
      })
      .catch((error: unknown) =>
        this.#options.logger.error({ err: error }, 'task admin: stream event'),
      )
  }

  #emit(data: unknown): void {
    this.hub.publish({ type: 'task', data })
  }
}
