/**
 * The SDK event streams of the central server (`GET {admin}/api/sdk/events?app_id=`): per
 * connected app, a `snapshot` event with everything its service enforces, then every change of
 * its service and of the global scope, in the order the server applied them.
 *
 * Why the snapshot is read after subscribing: a change that lands while the snapshot is read
 * is buffered and sent after it, so nothing falls between the two. Sending such a change again
 * is harmless: the app applies changes by replacing records, so an event already in the
 * snapshot leaves the same state behind.
 *
 * Why slow clients are dropped: a frame is written to every app at once; an app that does not
 * read would make its socket buffer grow without bound. Past `clientBufferBytes` unsent bytes
 * it is disconnected; it reconnects and resyncs from a fresh snapshot, so it misses nothing.
 */
import type { ServerResponse } from 'node:http'
import type { Writable } from 'node:stream'
import type { Engine } from '../../core/engine.js'
import { eventFrame } from '../../common/sse-frames.js'
import { toError } from '../../core/errors.js'
import type { FlagService } from '../../flags/service.js'
import { PROTOCOL_VERSION, type SdkSnapshot } from '../wire.js'

interface Client {
  readonly response: ServerResponse
  /**
   * Where frames are written: the connection itself when the body is delimited by its end
   * (then the bytes on the wire are the same, and each frame is one socket write without the
   * response's corking and its next-tick flush), else the response.
   */
  readonly out: Writable
  readonly service: string
  /** Frames held back while the snapshot is read; null once it is sent. */
  pending: (string | Buffer)[] | null
}

/** Options of {@link SdkStreams}. */
export interface SdkStreamsOptions {
  /** Unsent bytes after which a slow app is dropped (default 1 MiB). */
  clientBufferBytes?: number
  /** Seconds between `: keepalive` comments (default 15). */
  keepaliveInterval?: number
}

/** Fans the server's changes out to the connected SDK apps, each filtered to its service. */
export class SdkStreams {
  private readonly clients = new Set<Client>()
  private unsubscribers: (() => void)[] = []
  private readonly timer: NodeJS.Timeout
  private readonly clientBufferBytes: number

  constructor(
    private readonly engine: Engine,
    private readonly flags: () => FlagService | undefined,
    options: SdkStreamsOptions = {},
  ) {
    this.clientBufferBytes = options.clientBufferBytes ?? 1 << 20
    this.timer = setInterval(
      () => {
        for (const client of this.clients) this.write(client, ': keepalive\n\n')
      },
      (options.keepaliveInterval ?? 15) * 1000,
    )
    this.timer.unref()
  }

  /** Number of connected apps. */
  get clientCount(): number {
    return this.clients.size
  }

  /** Open streams by service (only services with one). */
  countsByService(): Map<string, number> {
    const counts = new Map<string, number>()
    for (const client of this.clients)
      counts.set(client.service, (counts.get(client.service) ?? 0) + 1)
    return counts
  }

  /**
   * Adds an app's stream (headers already written): sends its snapshot, then its changes.
   * Returns the function that removes it.
   */
  connect(response: ServerResponse, service: string): () => void {
    // The first write sends the head, which settles how the body is delimited.
    response.write('retry: 1000\n\n')
    const socket = response.socket
    const out = !response.chunkedEncoding && socket !== null ? socket : response
    const client: Client = { response, out, service, pending: [] }
    this.clients.add(client)
    this.follow()
    this.snapshot(service).then(
      (snapshot) => {
        if (!this.clients.has(client)) return
        const pending = client.pending ?? []
        client.pending = null
        this.write(client, eventFrame('snapshot', snapshot))
        for (const text of pending) this.write(client, text)
      },
      (error: unknown) => {
        this.engine.logger.error({ err: toError(error) }, 'SDK stream: snapshot failed')
        this.drop(client)
      },
    )
    return () => this.remove(client)
  }

  /** Ends every stream (server shutdown). */
  close(): void {
    clearInterval(this.timer)
    for (const client of [...this.clients]) this.drop(client)
    for (const unsubscribe of this.unsubscribers.splice(0)) unsubscribe()
  }

  /** Everything an app of `service` enforces, read from the server's replicas. */
  async snapshot(service: string): Promise<SdkSnapshot> {
    const { engine } = this
    const flags = this.flags()
    const [flagList, segments] = flags
      ? await Promise.all([flags.listFlags(), flags.listSegments()])
      : [[], []]
    return {
      app_id: service,
      protocol: PROTOCOL_VERSION,
      // Routes without a runtime state follow their declaration, which the app has itself.
      routes: engine.routeOverrides(service),
      global_maintenance: engine.getGlobalMaintenance(),
      service_maintenance: engine.getServiceMaintenance(service),
      global_rl_policy: engine.getGlobalRateLimit(),
      service_rl_policy: engine.getServiceRateLimit(service),
      rl_policies: engine.rateLimits.listRateLimitPolicies({ service }),
      flags: flagList,
      segments,
    }
  }

  /**
   * Subscribes to the server's sources (once; the first app's connection does it too). Called
   * before anything else listens to the engine, the SDK fan-out runs first among the change
   * listeners: every app waits for its frame, while the other listeners (the admin event
   * stream's framing, metrics) can come after it. With no app connected a change costs one
   * check here.
   */
  follow(): void {
    if (this.unsubscribers.length > 0) return
    const { engine } = this
    this.unsubscribers.push(
      engine.onChange((event) => {
        if (this.clients.size === 0) return
        switch (event.type) {
          case 'route_state':
            this.send(event.service, 'route_state', {
              service: event.service,
              route: event.route,
              state: event.state,
            })
            return
          case 'service_maintenance':
            this.send(event.service, 'service_maintenance', {
              service: event.service,
              config: event.config,
            })
            return
          case 'global_maintenance':
            this.send(null, 'global_maintenance', { config: event.config })
            return
          case 'audit':
            return
        }
      }),
      engine.rateLimits.onEvent((event) => {
        if (this.clients.size === 0) return
        switch (event.type) {
          case 'rl_policy':
          case 'service_rl_policy': {
            const { type, ...data } = event
            this.send(event.service, type, data)
            return
          }
          case 'global_rl_policy':
            this.send(null, 'global_rl_policy', { policy: event.policy })
            return
          case 'rl_hit':
            return
        }
      }),
    )
    const flags = this.flags()
    if (flags !== undefined)
      this.unsubscribers.push(
        flags.onChange((event) => {
          if (this.clients.size === 0) return
          if (event.type === 'flag') this.send(null, 'flag', { key: event.key, flag: event.flag })
          else this.send(null, 'segment', { key: event.key, segment: event.segment })
        }),
      )
  }

  /**
   * Sends one change to the apps of `service` (every app when null: a global change). The frame
   * is serialised and encoded once, and the same bytes are written to every app.
   */
  private send(service: string | null, type: string, data: unknown): void {
    if (this.clients.size === 0) return
    const text = Buffer.from(eventFrame(type, data))
    for (const client of this.clients) {
      if (service !== null && client.service !== service) continue
      if (client.pending !== null) client.pending.push(text)
      else this.write(client, text)
    }
  }

  private write(client: Client, text: string | Buffer): void {
    const { response, out } = client
    if (response.writableEnded || response.destroyed || out.destroyed) {
      this.remove(client)
      return
    }
    if (out.writableLength > this.clientBufferBytes) {
      this.drop(client)
      return
    }
    out.write(text)
  }

  private drop(client: Client): void {
    this.remove(client)
    if (!client.response.writableEnded) client.response.end()
  }

  private remove(client: Client): void {
    this.clients.delete(client)
  }
}
