/**
 * The OFREP change stream: server-sent events that tell browser providers to re-fetch their
 * bulk evaluation when a flag or segment changes, instead of polling. A bulk answer lists the
 * stream under `eventStreams` (the OFREP event-stream extension the web provider follows);
 * each event is `{"type": "refetchEvaluation", "etag": <flag-set fingerprint>, "lastModified":
 * <unix seconds>}` as a plain `message` event. The events carry no flag values.
 * `lastModified` is when this instance learned of the latest change (or started), the same in
 * every event about one flag set: the provider passes both values on to its re-fetch as query
 * parameters, so one flag set gives every page one URL, which a cache in front can serve.
 *
 * Why a stream can start with an event: the provider opens the stream only after its bulk
 * answer, and a stream sees only the changes after it attaches, so a change in between (or
 * while a dropped stream was reconnecting) would never reach the page. The bulk answer's
 * stream URL therefore carries the fingerprint the answer was computed from (`since`); a
 * stream whose `since` is not the current fingerprint is told at once to re-fetch. Event ids
 * cannot do this: they are per instance, and behind a load balancer the reconnect may land on
 * another one.
 *
 * Bounded: at most `maxStreams` connections; bursts of changes become one event per turn of
 * the event loop; a slow reader is dropped by the hub. Connections opened with an evaluation
 * key are closed when the key is revoked (at once on this instance, within a minute on others).
 */
import type { ServerResponse } from 'node:http'
import type { Clock } from '../../core/clock.js'
import { eventFrame } from '../../common/sse-frames.js'
import { EventHub } from '../../common/sse-hub.js'
import type { EvaluationKeys } from '../auth/evaluation-keys.js'

const REVOCATION_CHECK_MS = 60_000

/** Open change streams and the notifications they receive. */
export class OfrepStreams {
  private readonly hub: EventHub
  /** Each open stream and the id of the evaluation key that opened it (null in open mode). */
  private readonly clients = new Map<ServerResponse, string | null>()
  private scheduled = false
  private readonly timer: NodeJS.Timeout
  /** When this instance learned of the latest change to the flag set (ms), or started. */
  private lastChange: number

  constructor(
    private readonly maxStreams: number,
    private readonly clock: Clock,
    private readonly fingerprint: () => string,
    private readonly keys: EvaluationKeys,
  ) {
    this.lastChange = clock.now()
    this.hub = new EventHub({ eventBufferSize: 50 })
    this.timer = setInterval(() => void this.closeRevoked(), REVOCATION_CHECK_MS)
    this.timer.unref()
  }

  /** True when another stream may open. */
  get hasRoom(): boolean {
    return this.clients.size < this.maxStreams
  }

  /**
   * Adds a stream (SSE headers already written); returns the function that removes it. A
   * `since` other than the current fingerprint (unknown, garbled or simply old: a fingerprint
   * says only "same" or "not same") gets a refetch event at once, to this stream only; no
   * `since` (an older client) gets nothing extra.
   */
  connect(
    response: ServerResponse,
    keyId: string | null,
    lastEventId: number | null,
    since: string | null = null,
  ): () => void {
    this.clients.set(response, keyId)
    const disconnect = this.hub.connect(response, lastEventId)
    // No id: the event is not in the hub's ring, and an id would move the client's resume
    // point past broadcast frames it has not seen.
    if (since !== null && since !== this.fingerprint()) {
      response.write(eventFrame('message', this.refetchEvent()))
    }
    return () => {
      this.clients.delete(response)
      disconnect()
    }
  }

  /** Announces a change; several changes in one turn of the event loop make one event. */
  changed(): void {
    this.lastChange = this.clock.now()
    if (this.scheduled || this.clients.size === 0) return
    this.scheduled = true
    setImmediate(() => {
      this.scheduled = false
      this.hub.publish({ type: 'message', data: this.refetchEvent() })
    })
  }

  private refetchEvent() {
    return {
      type: 'refetchEvaluation',
      etag: this.fingerprint(),
      lastModified: Math.floor(this.lastChange / 1000),
    }
  }

  /** Ends the streams opened with a key (after its revocation on this instance). */
  closeKey(keyId: string): void {
    for (const [response, owner] of this.clients) {
      if (owner === keyId) response.end()
    }
  }

  /** Ends every stream whose key was revoked on any instance (one lookup per distinct key). */
  async closeRevoked(): Promise<void> {
    const ids = new Set([...this.clients.values()].filter((id): id is string => id !== null))
    for (const id of ids) {
      try {
        if ((await this.keys.get(id)) === null) this.closeKey(id)
      } catch {
        // The store is unreachable: keep the streams; the next check decides.
      }
    }
  }

  /** Ends every stream and stops the timers. */
  close(): void {
    clearInterval(this.timer)
    this.hub.close()
    this.clients.clear()
  }
}
