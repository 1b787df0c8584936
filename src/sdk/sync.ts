/**
 * Keeps an SDK app's engine in step with the central server: register the declared routes,
 * open the event stream, apply the `snapshot`, then every change as it arrives.
 *
 * When the stream ends (the server restarted, the network dropped, the token was revoked) the
 * app keeps enforcing the last state it knew — or the declared states when it never knew any
 * (fail-open) — and reconnects with capped exponential backoff: it logs in again when it has a
 * username and password, registers again (a restarted server may have lost the registration)
 * and resyncs from a fresh snapshot, which replaces everything it held, so no change is missed.
 */
import { Backoff, type BackoffSettings } from '../common/backoff.js'
import { IgnoredMessages, type IgnoredMessageCounts } from '../common/ignored-messages.js'
import type { Engine } from '../core/engine.js'
import { toError } from '../core/errors.js'
import type { Logger } from '../common/logger.js'
import type { MaintenanceConfig } from '../core/maintenance.js'
import type { RouteState } from '../core/route-state.js'
import type { Flag, Segment } from '../flags/model.js'
import type { RateLimitPolicy, ScopeRateLimitPolicy } from '../rate-limit/policy.js'
import type { PushedState } from './pushed-store.js'
import { SdkConnectionError } from './errors.js'
import type { ServerClient } from './server-client.js'
import { readEvents } from './sse-reader.js'
import type { DeclaredRoute, SdkSnapshot } from './wire.js'

/** What {@link SdkSync} needs. */
export interface SdkSyncDeps {
  client: ServerClient
  engine: Engine
  state: PushedState
  appId: string
  /** The app's declared routes, read at each (re)registration. */
  routes: () => DeclaredRoute[]
  logger: Logger
  backoff: BackoffSettings
  /** Longest wait for the first snapshot, in milliseconds. */
  timeoutMs: number
}

/** The connection state of an SDK app. */
export type SdkStatus = 'connecting' | 'live' | 'disconnected' | 'closed'

/** The SDK's connection to its server. */
export class SdkSync {
  private readonly retries: Backoff
  private abort: AbortController | null = null
  private closed = false
  private currentStatus: SdkStatus = 'connecting'
  private lostAt: Date | null = new Date()
  private snapshotApplied = false
  /** Route-policy keys and flag/segment keys the app holds, to drop what a snapshot lacks. */
  private readonly policies = new Set<string>()
  private readonly flagKeys = new Set<string>()
  private readonly segmentKeys = new Set<string>()
  private readonly statusListeners = new Set<(status: SdkStatus) => void>()

  private readonly ignored: IgnoredMessages

  constructor(private readonly deps: SdkSyncDeps) {
    this.retries = new Backoff(deps.backoff)
    this.ignored = new IgnoredMessages('switchyard SDK: stream event', (message) =>
      deps.logger.warn(message),
    )
  }

  /** Where the connection stands. */
  get status(): SdkStatus {
    return this.currentStatus
  }

  /** Adds a listener for status changes; returns the unsubscriber. */
  onStatus(listener: (status: SdkStatus) => void): () => void {
    this.statusListeners.add(listener)
    return () => this.statusListeners.delete(listener)
  }

  /**
   * Connects for the first time. With `requireServer` it resolves once the first snapshot is
   * applied and rejects with an {@link SdkConnectionError} when the server cannot be reached,
   * refuses the credentials or sends no snapshot in time. Without it a failure is logged as a
   * warning and retried in the background while the app serves its declared states; the
   * server's state is applied when it arrives; so is a server of another protocol major version
   * (`SdkProtocolError`): the app connects once its server speaks its version.
   */
  async start(requireServer: boolean): Promise<void> {
    try {
      await this.connect()
    } catch (error) {
      if (requireServer || this.closed) throw error
      this.setStatus('disconnected')
      this.deps.logger.warn(
        { err: toError(error) },
        `${toError(error).message} Starting on the declared states; connecting in the background.`,
      )
      this.retry()
    }
  }

  /**
   * When the app last lost (or never had) its server: null while the stream is live. An app
   * that never connected counts from its first attempt.
   */
  get disconnectedSince(): Date | null {
    return this.lostAt
  }

  /** Whether a snapshot of the server was ever applied. */
  get everConnected(): boolean {
    return this.snapshotApplied
  }

  /** Ends the stream and stops reconnecting. */
  close(): void {
    this.closed = true
    this.retries.cancel()
    this.abort?.abort()
    this.setStatus('closed')
  }

  /**
   * One connection: register, open the stream, resolve after the snapshot; the stream is read
   * on in the background and a reconnection planned when it ends.
   */
  private async connect(): Promise<void> {
    const { client, logger } = this.deps
    this.setStatus('connecting')
    const answer = await client.register(this.deps.routes())
    // Closed while registering: open no stream that nothing would end.
    if (this.isClosed()) throw new SdkConnectionError('switchyard SDK: closed.', false)
    if (answer.vanished.length > 0)
      logger.warn(
        `switchyard SDK: the server dropped routes this app no longer declares: ${answer.vanished.join(', ')}`,
      )
    const abort = new AbortController()
    this.abort = abort
    const response = await client.openStream(abort.signal)
    let snapshotSeen!: () => void
    const snapshot = new Promise<void>((resolve) => (snapshotSeen = resolve))
    const deadline = setTimeout(() => abort.abort(), this.deps.timeoutMs)
    const reading = readEvents(
      response,
      (type, data) => {
        if (type === 'snapshot') {
          clearTimeout(deadline)
          this.applySnapshot(data as SdkSnapshot)
          this.snapshotApplied = true
          this.retries.succeeded()
          this.setStatus('live')
          snapshotSeen()
        } else this.receiveChange(type, data)
      },
      undefined,
      (type, error) => this.ignored.ignore('malformed', type, error.message),
    )
    const ended = reading.then(
      () => undefined,
      (error: unknown) => error,
    )
    const first = await Promise.race([snapshot.then(() => 'snapshot' as const), ended])
    if (first !== 'snapshot') {
      clearTimeout(deadline)
      abort.abort()
      throw new SdkConnectionError(
        `switchyard SDK: the event stream of ${client.server} ended before its snapshot${first instanceof Error ? ` (${first.message})` : ''}.`,
        false,
        first,
      )
    }
    void ended.then((error) => {
      if (this.closed || this.abort !== abort) return
      this.setStatus('disconnected')
      logger.warn(
        `switchyard SDK: lost the event stream of ${client.server}${error instanceof Error ? ` (${error.message})` : ''}; enforcing the last known state and reconnecting`,
      )
      this.retry()
    })
  }

  /** Plans the next connection attempt with backoff. */
  private retry(): void {
    if (this.closed) return
    this.retries.schedule(() => {
      void this.reconnect()
    })
  }

  private async reconnect(): Promise<void> {
    if (this.closed) return
    try {
      await this.connect()
    } catch (error) {
      if (this.isClosed()) return
      this.setStatus('disconnected')
      this.deps.logger.warn(`${toError(error).message} Retrying.`)
      this.retry()
    }
  }

  /** Read through a call: `close()` may run while a connection attempt is awaited. */
  private isClosed(): boolean {
    return this.closed
  }

  private setStatus(status: SdkStatus): void {
    if (this.currentStatus === status || this.currentStatus === 'closed') return
    if (status === 'live') this.lostAt = null
    else if (this.currentStatus === 'live') this.lostAt = new Date()
    this.currentStatus = status
    for (const listener of this.statusListeners) {
      try {
        listener(status)
      } catch (error) {
        this.deps.logger.error({ err: toError(error) }, 'switchyard SDK: status listener failed')
      }
    }
  }

  /** Replaces everything the app holds with a snapshot. */
  private applySnapshot(snapshot: SdkSnapshot): void {
    const { state, engine, appId } = this.deps
    state.replaceRoutes(snapshot.routes.filter((route) => route.service === appId))
    state.setGlobal(snapshot.global_maintenance)
    state.setService(snapshot.service_maintenance)
    const limits = engine.rateLimits
    limits.apply({ type: 'global_rl_policy', policy: snapshot.global_rl_policy })
    limits.apply({ type: 'service_rl_policy', service: appId, policy: snapshot.service_rl_policy })
    const next = new Map(snapshot.rl_policies.map((policy) => [policyKey(policy), policy]))
    for (const route of [...this.policies])
      if (!next.has(route)) this.applyChange('rl_policy', { service: appId, route, policy: null })
    for (const [route, policy] of next)
      this.applyChange('rl_policy', { service: appId, route, policy })
    // Segments before the flags that use them; flags removed before their segments.
    const segments = new Map(snapshot.segments.map((segment) => [segment.key, segment]))
    const flags = new Map(snapshot.flags.map((flag) => [flag.key, flag]))
    for (const [key, segment] of segments) this.applyChange('segment', { key, segment })
    for (const [key, flag] of flags) this.applyChange('flag', { key, flag })
    for (const key of [...this.flagKeys])
      if (!flags.has(key)) this.applyChange('flag', { key, flag: null })
    for (const key of [...this.segmentKeys])
      if (!segments.has(key)) this.applyChange('segment', { key, segment: null })
  }

  /** Messages of the stream ignored so far, by kind. */
  ignoredMessages(): IgnoredMessageCounts {
    return this.ignored.counts()
  }

  /**
   * A change event of the stream: applied when this version knows its type and it has the
   * shape of one; otherwise skipped and counted (a newer server may send new types).
   */
  private receiveChange(type: string, data: unknown): void {
    const fields = STREAM_EVENT_FIELDS.get(type)
    if (fields === undefined) {
      this.ignored.ignore('unknown_type', type, 'not an event this version knows')
      return
    }
    if (typeof data !== 'object' || data === null) {
      this.ignored.ignore('malformed', type, 'its data is not an object')
      return
    }
    this.ignored.unknownFields(type, data, fields)
    try {
      this.applyChange(type, data)
    } catch (error) {
      this.ignored.ignore('malformed', type, toError(error).message)
    }
  }

  /** Applies one change event of the stream. */
  private applyChange(type: string, data: unknown): void {
    const { state, engine, appId } = this.deps
    switch (type) {
      case 'route_state': {
        const event = data as { service: string; route: string; state: RouteState | null }
        if (event.service === appId) state.setRoute(event.route, event.state)
        return
      }
      case 'global_maintenance':
        state.setGlobal((data as { config: MaintenanceConfig }).config)
        return
      case 'service_maintenance': {
        const event = data as { service: string; config: MaintenanceConfig }
        if (event.service === appId) state.setService(event.config)
        return
      }
      case 'rl_policy': {
        const event = data as { service: string; route: string; policy: RateLimitPolicy | null }
        if (event.service !== appId) return
        if (event.policy === null) this.policies.delete(event.route)
        else this.policies.add(event.route)
        engine.rateLimits.apply({ type: 'rl_policy', ...event })
        return
      }
      case 'global_rl_policy':
        engine.rateLimits.apply({
          type: 'global_rl_policy',
          policy: (data as { policy: ScopeRateLimitPolicy | null }).policy,
        })
        return
      case 'service_rl_policy': {
        const event = data as { service: string; policy: ScopeRateLimitPolicy | null }
        if (event.service === appId)
          engine.rateLimits.apply({ type: 'service_rl_policy', ...event })
        return
      }
      case 'flag': {
        const event = data as { key: string; flag: Flag | null }
        track(this.flagKeys, event.key, event.flag)
        engine.flags.applyRemote({ type: 'flag', key: event.key, flag: event.flag })
        return
      }
      case 'segment': {
        const event = data as { key: string; segment: Segment | null }
        track(this.segmentKeys, event.key, event.segment)
        engine.flags.applyRemote({ type: 'segment', key: event.key, segment: event.segment })
        return
      }
      default:
      // A type this version does not know: newer servers may add some.
    }
  }
}

/** The change events this version applies, with the fields of each it reads. */
const STREAM_EVENT_FIELDS: ReadonlyMap<string, ReadonlySet<string>> = new Map([
  ['route_state', new Set(['service', 'route', 'state'])],
  ['global_maintenance', new Set(['config'])],
  ['service_maintenance', new Set(['service', 'config'])],
  ['rl_policy', new Set(['service', 'route', 'policy'])],
  ['global_rl_policy', new Set(['policy'])],
  ['service_rl_policy', new Set(['service', 'policy'])],
  ['flag', new Set(['key', 'flag'])],
  ['segment', new Set(['key', 'segment'])],
])

function policyKey(policy: RateLimitPolicy): string {
  return `${policy.method}:${policy.path}`
}

/** Keeps `keys` to the records the server holds: a null record is a deletion. */
function track(keys: Set<string>, key: string, record: object | null): void {
  if (record === null) keys.delete(key)
  else keys.add(key)
}
