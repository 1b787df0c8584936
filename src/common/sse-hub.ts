/**
 * A server-sent event hub, shared by the admin app's `GET /api/events` and the task admin's
 * `GET {tasks}/dashboard/stream`.
 *
 * Every published event becomes one frame `id: <n>`, `event: <type>`, `data: <json>`. The last
 * frames are kept in a bounded ring so that a client that reconnects with `Last-Event-ID`
 * receives what it missed.
 *
 * Why clients are dropped rather than waited for: a frame is written to every client at once;
 * a client that does not read lets its socket buffer grow. Waiting for it would stall every
 * other client, and buffering without bound would exhaust memory, so a client whose unsent
 * bytes pass `clientBufferBytes` is disconnected (it can reconnect and resume by id).
 */
import type { ServerResponse } from 'node:http'
import { eventFrame } from './sse-frames.js'

/** Options of {@link EventHub}. */
export interface EventHubOptions {
  /** Frames kept for `Last-Event-ID` resume (default 1000). */
  eventBufferSize?: number
  /** Unsent bytes after which a slow client is dropped (default 1 MiB). */
  clientBufferBytes?: number
  /** Seconds between `: keepalive` comments (default 15). */
  keepaliveInterval?: number
}

interface Frame {
  id: number
  text: string
}

/** One event of the stream before framing. */
export interface StreamEvent {
  type: string
  data: unknown
}

/** Builds the error thrown for an invalid option (each half passes its own error class). */
export type InvalidOption = (message: string) => Error

/** Fans stream events out to connected SSE clients. */
export class EventHub {
  private nextId = 1
  private readonly ring: Frame[] = []
  private readonly clients = new Set<ServerResponse>()
  private readonly feeds: { start: () => () => void; stop: (() => void) | null }[] = []
  private readonly bufferSize: number
  private readonly clientBufferBytes: number
  private readonly timer: NodeJS.Timeout

  /** Throws `invalid(message)` for a bad option. */
  constructor(options: EventHubOptions = {}, invalid: InvalidOption = (m) => new RangeError(m)) {
    this.bufferSize = positiveInteger(options.eventBufferSize, 1000, 'eventBufferSize', invalid)
    this.clientBufferBytes = positiveInteger(
      options.clientBufferBytes,
      1 << 20,
      'clientBufferBytes',
      invalid,
    )
    const keepalive = options.keepaliveInterval ?? 15
    if (!Number.isFinite(keepalive) || keepalive <= 0) {
      throw invalid('keepaliveInterval must be a positive number of seconds.')
    }
    this.timer = setInterval(() => this.broadcast(': keepalive\n\n'), keepalive * 1000)
    this.timer.unref()
  }

  /** Number of connected clients. */
  get clientCount(): number {
    return this.clients.size
  }

  /** Frames and sends one event to every client, and keeps it for resume. */
  publish(event: StreamEvent): void {
    const id = this.nextId++
    const text = eventFrame(event.type, event.data, id)
    this.ring.push({ id, text })
    if (this.ring.length > this.bufferSize) this.ring.shift()
    this.broadcast(text)
  }

  /**
   * Adds a client whose SSE headers are written; replays the kept frames after `lastEventId`.
   * Returns the function that removes it.
   */
  connect(response: ServerResponse, lastEventId: number | null): () => void {
    this.clients.add(response)
    this.startFeeds()
    response.write('retry: 3000\n\n')
    if (lastEventId !== null) {
      for (const frame of this.ring) {
        if (frame.id > lastEventId) this.send(response, frame.text)
      }
    }
    return () => {
      this.clients.delete(response)
      this.stopFeedsWhenIdle()
    }
  }

  /**
   * Runs a source of events only while at least one client is connected: `start` subscribes
   * (and returns its unsubscriber) when the first client connects, and is stopped when the
   * last one leaves. For high-volume sources such as live evaluations, whose events nobody
   * would read: publishing them costs more than producing them. Returns the remover.
   */
  whileConnected(start: () => () => void): () => void {
    const feed = { start, stop: this.clients.size > 0 ? start() : null }
    this.feeds.push(feed)
    return () => {
      feed.stop?.()
      feed.stop = null
      this.feeds.splice(this.feeds.indexOf(feed), 1)
    }
  }

  private startFeeds(): void {
    for (const feed of this.feeds) feed.stop ??= feed.start()
  }

  private stopFeedsWhenIdle(): void {
    if (this.clients.size > 0) return
    for (const feed of this.feeds) {
      feed.stop?.()
      feed.stop = null
    }
  }

  /** Ends every stream and stops the keepalive timer. */
  close(): void {
    clearInterval(this.timer)
    for (const client of this.clients) client.end()
    this.clients.clear()
    this.stopFeedsWhenIdle()
  }

  private broadcast(text: string): void {
    for (const client of this.clients) this.send(client, text)
  }

  private send(client: ServerResponse, text: string): void {
    if (client.destroyed || client.writableEnded) {
      this.clients.delete(client)
      this.stopFeedsWhenIdle()
      return
    }
    if (client.writableLength > this.clientBufferBytes) {
      this.clients.delete(client)
      this.stopFeedsWhenIdle()
      client.destroy()
      return
    }
    client.write(text)
  }
}

function positiveInteger(
  value: number | undefined,
  fallback: number,
  field: string,
  invalid: InvalidOption,
): number {
  if (value === undefined) return fallback
  if (!Number.isInteger(value) || value < 1) {
    throw invalid(`${field} must be a positive integer.`)
  }
  return value
}
