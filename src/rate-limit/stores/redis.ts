/**
 * Rate-limit policies and the blocked-request log on the Redis store, shared by every instance
 * on one Redis under the route-control store's prefix:
 *
 *   <prefix>rl:routes     hash   `<service>\0<METHOD:path>` → RateLimitPolicy JSON
 *   <prefix>rl:global     hash   `global` → ScopeRateLimitPolicy JSON
 *   <prefix>rl:services   hash   service → ScopeRateLimitPolicy JSON
 *   <prefix>rl:seq        string write counter (versions)
 *   <prefix>rl:hits       list   RateLimitHit JSON, newest first, trimmed to the cap
 *   <prefix>rl:changes    pub/sub channel: `<version>|<origin>|<RateLimitChangeEvent JSON>`
 *
 * A policy write, its version and its message are one Lua script (the route store's
 * `write-record.lua`: HSET/HDEL, INCR, PUBLISH), so the change is never stored without being
 * announced. The writing instance applies its own change at once (the service does that) and
 * ignores its own message; other instances receive it over a pub/sub connection of this
 * module's own. Versions are tracked per record so that a late message never rolls back a
 * newer change; after the pub/sub connection comes back, `onResync` asks for a full reload.
 */
import { randomUUID } from 'node:crypto'
import { toError } from '../../core/errors.js'
import type { RedisHandle } from '../../stores/types.js'
import type { RateLimitChangeEvent } from '../events.js'
import type { RateLimitHit } from '../exceeded.js'
import type { RateLimitPolicy, ScopeRateLimitPolicy } from '../policy.js'
import type { RateLimitHitStore, RateLimitPolicyStore } from '../ports.js'

type RedisClient = ReturnType<RedisHandle['client']>

/** A policy store whose changes reach every instance, with its own lifecycle. */
export interface SharedPolicyStore extends RateLimitPolicyStore {
  /** Adds a listener for changes made by OTHER instances; returns the unsubscriber. */
  subscribe(listener: (event: RateLimitChangeEvent) => void): () => void
  /** Adds a listener called when changes may have been missed (reload in full then). */
  onResync(listener: () => void): () => void
  /** Opens the pub/sub connection; call after the route store's `connect()`. Idempotent. */
  connect(): Promise<void>
  /** Closes the pub/sub connection. */
  close(): Promise<void>
}

/** Options of {@link redisPolicyStore}. */
export interface RedisPolicyStoreOptions {
  /** Receives faults recovered from (a throwing listener, a malformed message). */
  onError?: (error: Error, what: string) => void
}

/** The client name of the rate-limit pub/sub connection under `prefix`. */
export function rateLimitSubscriberName(prefix: string): string {
  return `${prefix}rl:subscriber`.replace(/[^\x21-\x7e]/g, '_')
}

const routeId = (service: string, route: string) => `${service}\u0000${route}`

/** The record an event changes, for per-record version tracking. */
function recordOf(event: RateLimitChangeEvent): string {
  switch (event.type) {
    case 'rl_policy':
      return `r\u0000${routeId(event.service, event.route)}`
    case 'global_rl_policy':
      return 'g'
    case 'service_rl_policy':
      return `s\u0000${event.service}`
  }
}

/** Creates the Redis policy store on the route store's Redis. */
export function redisPolicyStore(
  redis: RedisHandle,
  options: RedisPolicyStoreOptions = {},
): SharedPolicyStore {
  const onError = options.onError ?? (() => undefined)
  const key = (name: string) => `${redis.prefix}rl:${name}`
  const channel = key('changes')
  const origin = randomUUID()
  const listeners = new Set<(event: RateLimitChangeEvent) => void>()
  const resyncListeners = new Set<() => void>()
  /** Highest version seen per record (own writes included). */
  const versions = new Map<string, number>()
  let subscriber: RedisClient | null = null
  let connecting: Promise<void> | null = null

  const notify = <A extends unknown[]>(
    set: Set<(...args: A) => void>,
    what: string,
    ...args: A
  ) => {
    for (const listener of set) {
      try {
        listener(...args)
      } catch (error) {
        onError(toError(error), what)
      }
    }
  }

  /** True when `version` is newer than anything seen for the record (and remembers it). */
  function advance(event: RateLimitChangeEvent, version: number): boolean {
    const id = recordOf(event)
    if (version <= (versions.get(id) ?? 0)) return false
    versions.set(id, version)
    return true
  }

  function receive(message: string): void {
    const first = message.indexOf('|')
    const second = message.indexOf('|', first + 1)
    if (first < 0 || second < 0) return
    if (message.slice(first + 1, second) === origin) return // applied locally already
    try {
      const event = JSON.parse(message.slice(second + 1)) as RateLimitChangeEvent
      if (advance(event, Number(message.slice(0, first))))
        notify(listeners, 'rate-limit change listener', event)
    } catch (error) {
      onError(toError(error), 'rate-limit change message')
    }
  }

  async function write(
    container: 'routes' | 'global' | 'services',
    field: string,
    value: RateLimitPolicy | ScopeRateLimitPolicy | null,
    event: RateLimitChangeEvent,
  ): Promise<boolean> {
    const keys = [key(container), key('seq')]
    const args = [
      value === null ? 'hdel' : 'hset',
      field,
      value === null ? '' : JSON.stringify(value),
      channel,
      origin,
      JSON.stringify(event),
    ]
    const reply = await redis.writeRecord(keys, args)
    const version = Number(reply)
    if (version === 0) return false
    advance(event, version)
    return true
  }

  async function values<T>(container: 'routes' | 'global' | 'services'): Promise<Map<string, T>> {
    const all = await redis.client().hgetall(key(container))
    return new Map(Object.entries(all).map(([field, text]) => [field, JSON.parse(text) as T]))
  }

  async function open(): Promise<void> {
    const next = redis
      .client()
      .duplicate({ lazyConnect: true, connectionName: rateLimitSubscriberName(redis.prefix) })
    next.on('error', () => undefined) // reported by the route store's own connections
    try {
      await next.connect()
      await next.subscribe(channel)
    } catch (error) {
      next.disconnect()
      throw error
    }
    next.on('message', (_channel: string, message: string) => receive(message))
    let dropped = false
    next.on('close', () => {
      dropped = true
    })
    next.on('ready', () => {
      if (!dropped) return
      dropped = false
      // Subscribe explicitly: its reply proves the subscription is live before the reload.
      next.subscribe(channel).then(
        () => notify(resyncListeners, 'rate-limit resync listener'),
        (error: unknown) => onError(toError(error), 'rate-limit pub/sub resubscribe'),
      )
    })
    subscriber = next
  }

  return {
    async listRoutePolicies() {
      return [...(await values<RateLimitPolicy>('routes')).values()]
    },
    async putRoutePolicy(policy) {
      const copy = structuredClone(policy)
      const route = `${copy.method}:${copy.path}`
      const event = { type: 'rl_policy', service: copy.service, route, policy: copy } as const
      await write('routes', routeId(copy.service, route), copy, event)
    },
    deleteRoutePolicy: (service, route) =>
      write('routes', routeId(service, route), null, {
        type: 'rl_policy',
        service,
        route,
        policy: null,
      }),
    async getGlobal() {
      return (await values<ScopeRateLimitPolicy>('global')).get('global') ?? null
    },
    async putGlobal(policy) {
      await write('global', 'global', policy, { type: 'global_rl_policy', policy })
    },
    listServices: () => values<ScopeRateLimitPolicy>('services'),
    async putService(service, policy) {
      await write('services', service, policy, { type: 'service_rl_policy', service, policy })
    },
    subscribe(listener) {
      listeners.add(listener)
      return () => listeners.delete(listener)
    },
    onResync(listener) {
      resyncListeners.add(listener)
      return () => resyncListeners.delete(listener)
    },
    connect() {
      if (subscriber !== null) return Promise.resolve()
      connecting ??= open().finally(() => {
        connecting = null
      })
      return connecting
    },
    async close() {
      await connecting?.catch(() => undefined)
      const current = subscriber
      subscriber = null
      if (current === null) return
      try {
        await current.quit()
      } catch {
        current.disconnect()
      }
    },
  }
}

/**
 * The blocked-request log in a Redis list, newest first: LPUSH and LTRIM in one MULTI, so the
 * list never holds more than `capacity` records, whichever instance writes.
 */
export function redisHitStore(redis: RedisHandle, capacity = 10_000): RateLimitHitStore {
  if (!Number.isSafeInteger(capacity) || capacity < 1)
    throw new RangeError('maxRlHitEntries must be an integer ≥ 1')
  const list = `${redis.prefix}rl:hits`
  return {
    async add(record) {
      const replies = await redis
        .client()
        .multi()
        .lpush(list, JSON.stringify(record))
        .ltrim(list, 0, capacity - 1)
        .exec()
      const failed = replies?.find(([error]) => error !== null)?.[0]
      if (replies === null) throw new Error('Redis transaction was aborted.')
      if (failed) throw failed
    },
    async list(options = {}) {
      const limit = Math.min(options.limit ?? capacity, capacity)
      // Without a path filter only the wanted records travel; with one the whole log is read.
      const texts = await redis
        .client()
        .lrange(list, 0, options.path === undefined ? limit - 1 : capacity - 1)
      const records = texts.map((text) => JSON.parse(text) as RateLimitHit)
      const matching =
        options.path === undefined ? records : records.filter((hit) => hit.path === options.path)
      return matching.slice(0, limit)
    },
  }
}
