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
 * Bounded: at most `maxStreams` connections, and at most `maxStreamsPerKey` of them held by
 * one evaluation key (in open mode, by one client address), so that one key cannot take every
 * slot; bursts of changes become one event per turn of the event loop; a slow reader is
 * dropped by the hub. Connections opened with an evaluation key are closed when the key is
 * revoked (at once on this instance, within a minute on others).
 *
 * A key limited to some flags has a hub of its own, told of a change only when the
 * fingerprint of its flags changes (with that fingerprint as `etag`): a change to a flag
 * outside its set sends it nothing.
 */
import type { ServerResponse } from 'node:http'
import type { Clock } from '../../core/clock.js'
import { eventFrame } from '../../common/sse-frames.js'
import { EventHub } from '../../common/sse-hub.js'
import type { EvaluationKeys } from '../auth/evaluation-keys.js'
import type { FlagScope } from '../auth/flag-scope.js'

const REVOCATION_CHECK_MS = 60_000
const HUB_OPTIONS = { eventBufferSize: 50 }

/** Who opens a stream. */
export interface StreamOwner {
  /** The evaluation key's id; null in open mode. */
  keyId: string | null
  /** What the per-key cap counts: the key id, or the client address in open mode. */
  holder: string
  /** The flags the key may see; null for every flag. */
  scope: FlagScope | null
}

/** The streams of one key limited to some flags, and the fingerprint they last heard of. */
interface ScopedGroup {
  hub: EventHub
  scope: FlagScope
  fingerprint: string
  streams: number
}

/** Open change streams and the notifications they receive. */
export class OfrepStreams {
  /** The streams that see every flag. */
  private readonly hub: EventHub
  /** Each open stream and its owner. */
  private readonly clients = new Map<ServerResponse, StreamOwner>()
  /** Open streams per holder (entries leave at zero, so at most one per open stream). */
  private readonly held = new Map<string, number>()
  /** Streams of keys limited to some flags, by key id (at most one per open stream). */
  private readonly scoped = new Map<string, ScopedGroup>()
  private scheduled = false
  private readonly timer: NodeJS.Timeout
  /** When this instance learned of the latest change to the flag set (ms), or started. */
  private lastChange: number

  constructor(
    private readonly maxStreams: number,
    private readonly clock: Clock,
    private readonly fingerprint: (scope: FlagScope | null) => string,
    private readonly keys: EvaluationKeys,
    private readonly maxStreamsPerKey: number = Math.max(1, Math.ceil(maxStreams / 10)),
  ) {
    this.lastChange = clock.now()
    this.hub = new EventHub(HUB_OPTIONS)
    this.timer = setInterval(() => void this.closeRevoked(), REVOCATION_CHECK_MS)
    this.timer.unref()
  }

  /** True when another stream may open at all. */
  get hasRoom(): boolean {
    return this.clients.size < this.maxStreams
  }

  /** True when `holder` (a key id, or an address in open mode) may open another stream. */
  hasRoomFor(holder: string): boolean {
    return (this.held.get(holder) ?? 0) < this.maxStreamsPerKey
  }

  /**
   * Adds a stream (SSE headers already written); returns the function that removes it. A
   * `since` other than the current fingerprint of the owner's flags (unknown, garbled or
   * simply old: a fingerprint says only "same" or "not same") gets a refetch event at once,
   * to this stream only; no `since` (an older client) gets nothing extra.
   */
  connect(
    response: ServerResponse,
    owner: StreamOwner,
    lastEventId: number | null,
    since: string | null = null,
  ): () => void {
    this.clients.set(response, owner)
    this.held.set(owner.holder, (this.held.get(owner.holder) ?? 0) + 1)
    const group =
      owner.scope === null || owner.keyId === null ? null : this.groupOf(owner.keyId, owner.scope)
    const disconnect = (group?.hub ?? this.hub).connect(response, lastEventId)
    // No id: the event is not in the hub's ring, and an id would move the client's resume
    // point past broadcast frames it has not seen.
    const current = this.fingerprint(owner.scope)
    if (since !== null && since !== current) {
      response.write(eventFrame('message', this.refetchEvent(current)))
    }
    let connected = true
    return () => {
      if (!connected) return
      connected = false
      this.clients.delete(response)
      const count = (this.held.get(owner.holder) ?? 1) - 1
      if (count > 0) this.held.set(owner.holder, count)
      else this.held.delete(owner.holder)
      disconnect()
      if (group !== null && --group.streams === 0 && owner.keyId !== null) {
        group.hub.close()
        this.scoped.delete(owner.keyId)
      }
    }
  }

  /** The group of a limited key's streams, created with its first stream. */
  private groupOf(keyId: string, scope: FlagScope): ScopedGroup {
    let group = this.scoped.get(keyId)
    if (group === undefined) {
      group = {
        hub: new EventHub(HUB_OPTIONS),
        scope,
        fingerprint: this.fingerprint(scope),
        streams: 0,
      }
      this.scoped.set(keyId, group)
    }
    group.streams++
    return group
  }

  /** Announces a change; several changes in one turn of the event loop make one event. */
  changed(): void {
    this.lastChange = this.clock.now()
    if (this.scheduled || this.clients.size === 0) return
    this.scheduled = true
    setImmediate(() => {
      this.scheduled = false
      if (this.hub.clientCount > 0) {
        this.hub.publish({ type: 'message', data: this.refetchEvent(this.fingerprint(null)) })
      }
      for (const group of this.scoped.values()) {
        const fingerprint = this.fingerprint(group.scope)
        if (fingerprint === group.fingerprint) continue
        group.fingerprint = fingerprint
        group.hub.publish({ type: 'message', data: this.refetchEvent(fingerprint) })
      }
    })
  }

  private refetchEvent(etag: string) {
    return {
      type: 'refetchEvaluation',
      etag,
      lastModified: Math.floor(this.lastChange / 1000),
    }
  }

  /** Ends the streams opened with a key (after its revocation on this instance). */
  closeKey(keyId: string): void {
    for (const [response, owner] of this.clients) {
      if (owner.keyId === keyId) response.end()
    }
  }

  /** Ends every stream whose key was revoked on any instance (one lookup per distinct key). */
  async closeRevoked(): Promise<void> {
    const ids = new Set(
      [...this.clients.values()].map((owner) => owner.keyId).filter((id) => id !== null),
    )
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
    for (const group of this.scoped.values()) group.hub.close()
    this.scoped.clear()
    this.clients.clear()
    this.held.clear()
  }
}
