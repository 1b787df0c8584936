/**
 * The Redis store: shared by every instance and worker of an application. Records live under
 * one key prefix (default `switchyard:`); every record write is numbered and published on the
 * change channel in one Lua script, so all instances see the same order.
 *
 * Keys (after the prefix):
 *
 *   routes                 hash  `<service>\0<route>` → RouteState JSON
 *   maintenance:global     string MaintenanceConfig JSON
 *   maintenance:services   hash  service → MaintenanceConfig JSON
 *   seq                    string write counter (versions)
 *   audit                  list  AuditEntry JSON, newest first, trimmed to the cap
 *   token:<hash>           string TokenRecord JSON, expiring with the token
 *   claim:<key>            string one-time claims: their expiry (claim.lua)
 *   evaluation-keys        hash  key hash → evaluation key JSON (see evaluation-keys.ts)
 *   api-tokens             hash  token hash → API token JSON (see api-tokens.ts)
 *   api-token-uses         hash  API token id → when it was last used
 *   marker                 string set on the first connection; missing later means Redis lost
 *                          its data, and the store is re-seeded from the replica (reseed.ts)
 *   changes                pub/sub channel: `<version>|<origin>|<event JSON>`
 */
import { randomUUID } from 'node:crypto'
import type { LoggerLike } from '../common/logger.js'
import { execAll } from '../common/redis.js'
import type { AuditEntry } from '../core/audit-entry.js'
import { auditMatches } from '../core/audit-entry.js'
import { ConfigError, toError } from '../core/errors.js'
import {
  checkRedisTargetUrl,
  prefixFor,
  redisTargetOf,
  type RedisTargetOptions,
} from '../common/redis-target.js'
import { LocalChangeFeed, type ChangeEvent } from '../core/events.js'
import { IgnoredMessages, messageType } from '../common/ignored-messages.js'
import type { MaintenanceConfig } from '../core/maintenance.js'
import type { RouteState } from '../core/route-state.js'
import { redisEvaluationKeys } from './evaluation-keys.js'
import { redisApiTokens } from './api-tokens.js'
import { RedisConnection } from './redis-connection.js'
import { RecordShadow, RedisReseeder } from './reseed.js'
import { storeLogger } from './store-logger.js'
import type { Store, StoreSnapshot, TokenRecord } from './types.js'

/**
 * Options of {@link redisStore}. Where to connect: `url` (one server), `cluster` (seed nodes of
 * a Redis Cluster) or `sentinels` with `name` (a primary found through Sentinel).
 */
export interface RedisStoreOptions extends RedisTargetOptions {
  /** `redis://` or `rediss://` URL; default `redis://127.0.0.1:6379`. */
  url?: string
  /**
   * Prefix of every key and of the channel; default `switchyard:`. On a cluster it becomes a
   * hash tag (`{switchyard}:`) unless it holds one: the whole store lives in one slot.
   */
  prefix?: string
  /**
   * Where connection faults are reported, instead of the logger: `error` is given for a
   * failure, absent for news (a connection restored, a re-seed).
   */
  onFault?: (message: string, error?: Error) => void
  /**
   * Where connection faults are logged when `onFault` is not given (an error as `{ err }`);
   * default the engine's logger.
   */
  logger?: LoggerLike
  /** Current time for token and claim expiry; default `Date.now` (tests pass a fake clock). */
  now?: () => number
}

/** A bad connection setting of route control's Redis users. */
export const configError = (message: string): Error => new ConfigError(message)

/** The default Redis URL. */
export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379'

const fieldOf = (service: string, route: string) => `${service}\u0000${route}`

/**
 * Throws a `ConfigError` for a URL that is not `redis://…` or `rediss://…`; `source` names where
 * the URL came from (an environment variable), when not from the caller's code.
 */
export function checkRedisUrl(url: string, source?: string): void {
  checkRedisTargetUrl(url, source, configError)
}

/** Creates a {@link Store} on Redis. The driver is loaded on `connect()`. */
export function redisStore(options: RedisStoreOptions = {}): Store {
  const target = redisTargetOf(options, DEFAULT_REDIS_URL, configError)
  const prefix = prefixFor(target, options.prefix ?? 'switchyard:')
  const now = options.now ?? Date.now
  const key = (name: string) => `${prefix}${name}`
  const channel = key('changes')
  const origin = randomUUID()
  const logger = storeLogger(options.logger)
  const onFault =
    options.onFault ??
    ((message: string, error?: Error) => {
      if (error === undefined) logger.warn(message)
      else logger.error({ err: error }, message)
    })
  const ignored = new IgnoredMessages('route change message', (message) => onFault(message))
  const containerOf = {
    routes: key('routes'),
    global: key('maintenance:global'),
    services: key('maintenance:services'),
  }
  const shadow = new RecordShadow(
    key('seq'),
    new Map([
      [containerOf.routes, 'hash'],
      [containerOf.global, 'string'],
      [containerOf.services, 'hash'],
    ]),
  )
  /** Keeps the shadow in step with a versioned change (a write or another instance's message). */
  function shadowChange(event: ChangeEvent, version: number): void {
    switch (event.type) {
      case 'route_state':
        shadow.set(
          containerOf.routes,
          fieldOf(event.service, event.route),
          event.state === null ? null : JSON.stringify(event.state),
          version,
        )
        return
      case 'global_maintenance':
        shadow.set(containerOf.global, '', JSON.stringify(event.config), version)
        return
      case 'service_maintenance':
        shadow.set(containerOf.services, event.service, JSON.stringify(event.config), version)
        return
      case 'audit':
        return
    }
  }
  const feed = new LocalChangeFeed((error) => {
    onFault('change listener failed', error instanceof Error ? error : undefined)
  })
  const connection = new RedisConnection(target, channel, {
    message(message) {
      let event: ChangeEvent | null
      try {
        event = parseMessage(message, origin)
      } catch (error) {
        // Anything may be published on the channel. A message that is not ours must not take
        // the process down; it may have stood for a change, so the replica is reloaded.
        ignored.ignore('malformed', undefined, `${toError(error).message}; reloading the replica`)
        feed.requestResync()
        return
      }
      if (event === null) return
      if (!knownChangeEvent(event)) {
        // A type a newer version added (rolling upgrade) or a wrong shape: skipped, counted.
        ignored.ignore('unknown_type', messageType(event), 'not an event this version knows')
        return
      }
      ignored.unknownFields(event.type, event, ROUTE_EVENT_FIELDS[event.type])
      if (event.version !== undefined) shadowChange(event, event.version)
      feed.publish(event)
    },
    resubscribed: () => feed.requestResync(),
    fault: onFault,
  })
  const reseeder = new RedisReseeder({
    markerKey: key('marker'),
    readMarker: () => connection.client().get(key('marker')),
    run: (keys, args) => connection.run('reseed', keys, args),
    log: onFault,
  })
  reseeder.register(shadow)

  /** Runs write-record.lua and delivers the event locally with its version. */
  async function writeRecord(
    container: string,
    operation: 'hset' | 'hdel' | 'set',
    field: string,
    value: unknown,
    event: ChangeEvent,
  ): Promise<boolean> {
    const version = Number(
      await connection.run(
        'write-record',
        [key(container), key('seq')],
        [
          operation,
          field,
          value === null ? '' : JSON.stringify(value),
          channel,
          origin,
          JSON.stringify(event),
        ],
      ),
    )
    if (version === 0) return false
    shadowChange(event, version)
    feed.publish({ ...structuredClone(event), version })
    return true
  }

  const parseState = (text: string) => JSON.parse(text) as RouteState
  const parseConfig = (text: string) => JSON.parse(text) as MaintenanceConfig
  const parseEntry = (text: string) => JSON.parse(text) as AuditEntry

  return {
    kind: 'redis',
    ignoredMessages: () => ignored.counts(),
    routes: {
      async list() {
        const all = await connection.client().hvals(key('routes'))
        return all.map((text) => parseState(text))
      },
      async put(state) {
        await writeRecord('routes', 'hset', fieldOf(state.service, state.route), state, {
          type: 'route_state',
          service: state.service,
          route: state.route,
          state,
        })
      },
      async replaceIf(state, expectedSince) {
        const event: ChangeEvent = {
          type: 'route_state',
          service: state.service,
          route: state.route,
          state,
        }
        const version = Number(
          await connection.run(
            'replace-if',
            [key('routes'), key('seq')],
            [
              fieldOf(state.service, state.route),
              expectedSince,
              JSON.stringify(state),
              channel,
              origin,
              JSON.stringify(event),
            ],
          ),
        )
        if (version === 0) return false
        shadowChange(event, version)
        feed.publish({ ...structuredClone(event), version })
        return true
      },
      delete(service, route) {
        return writeRecord('routes', 'hdel', fieldOf(service, route), null, {
          type: 'route_state',
          service,
          route,
          state: null,
        })
      },
    },
    maintenance: {
      async getGlobal() {
        const text = await connection.client().get(key('maintenance:global'))
        return text === null ? null : parseConfig(text)
      },
      async putGlobal(config) {
        await writeRecord('maintenance:global', 'set', '', config, {
          type: 'global_maintenance',
          config,
        })
      },
      async listServices() {
        const all = await connection.client().hgetall(key('maintenance:services'))
        return new Map(Object.entries(all).map(([name, text]) => [name, parseConfig(text)]))
      },
      async putService(service, config) {
        await writeRecord('maintenance:services', 'hset', service, config, {
          type: 'service_maintenance',
          service,
          config,
        })
      },
    },
    audit: {
      async append(entry, cap) {
        const event: ChangeEvent = { type: 'audit', entry }
        const transaction = connection
          .client()
          .multi()
          .lpush(key('audit'), JSON.stringify(entry))
          .ltrim(key('audit'), 0, Math.max(1, cap) - 1)
        await execAll(
          transaction[connection.publishCommand](channel, `0|${origin}|${JSON.stringify(event)}`),
        )
        feed.publish(structuredClone(event))
      },
      async list(query) {
        const client = connection.client()
        if (
          query.route === undefined &&
          query.service === undefined &&
          query.action === undefined &&
          query.actor === undefined
        ) {
          const [total, texts] = (await execAll(
            client
              .multi()
              .llen(key('audit'))
              .lrange(key('audit'), query.offset, query.offset + query.limit - 1),
          )) as [number, string[]]
          return { items: texts.map((text) => parseEntry(text)), total }
        }
        const matching = (await client.lrange(key('audit'), 0, -1))
          .map((text) => parseEntry(text))
          .filter((entry) => auditMatches(entry, query))
        return {
          items: matching.slice(query.offset, query.offset + query.limit),
          total: matching.length,
        }
      },
    },
    tokens: {
      async put(hash, record) {
        const ttl = Date.parse(record.expires_at) - now()
        if (!(ttl > 0)) return
        await connection.client().set(key(`token:${hash}`), JSON.stringify(record), 'PX', ttl)
      },
      async get(hash) {
        const text = await connection.client().get(key(`token:${hash}`))
        if (text === null) return null
        const record = JSON.parse(text) as TokenRecord
        return Date.parse(record.expires_at) > now() ? record : null
      },
      async revoke(hash) {
        return (await connection.client().del(key(`token:${hash}`))) > 0
      },
    },
    evaluationKeys: redisEvaluationKeys({ prefix, client: () => connection.client() }),
    apiTokens: redisApiTokens({ prefix, client: () => connection.client() }),
    claims: {
      async claim(name, ttlMs) {
        const ttl = Math.max(1, Math.ceil(ttlMs))
        const at = now()
        const granted = await connection.run('claim', [key(`claim:${name}`)], [at, at + ttl, ttl])
        return Number(granted) === 1
      },
    },
    changes: {
      subscribe: (listener) => feed.subscribe(listener),
      onResync: (listener) => feed.onResync(listener),
      async snapshot(): Promise<StoreSnapshot> {
        // A reload after a reconnect is the first read that would find an emptied Redis.
        await reseeder.ensure()
        const [routes, global, services, seq] = (await execAll(
          connection
            .client()
            .multi()
            .hgetall(key('routes'))
            .get(key('maintenance:global'))
            .hgetall(key('maintenance:services'))
            .get(key('seq')),
        )) as [Record<string, string>, string | null, Record<string, string>, string | null]
        const version = seq === null ? 0 : Number(seq)
        shadow.replace(containerOf.routes, Object.entries(routes), version)
        shadow.replace(containerOf.global, global === null ? [] : [['', global]], version)
        shadow.replace(containerOf.services, Object.entries(services), version)
        return {
          overrides: Object.values(routes).map((text) => parseState(text)),
          global: global === null ? null : parseConfig(global),
          services: new Map(
            Object.entries(services).map(([name, text]) => [name, parseConfig(text)]),
          ),
          version,
        }
      },
    },
    backend: {
      kind: 'redis',
      redis: {
        prefix,
        client: () => connection.client(),
        writeRecord: (keys, args) => connection.run('write-record', keys, args),
        subscribe: (channel, events, name) => connection.subscribe(channel, events, name),
        reseeder,
      },
    },
    connect: () => connection.connect(),
    close: () => connection.close(),
    attachLogger: (engineLogger) => void logger.attach(engineLogger),
  }
}

/** Whether an event is one this version knows, with the fields applying it needs. */
/** The fields of each change event this version reads (`version` is set from the envelope). */
const ROUTE_EVENT_FIELDS: Readonly<Record<ChangeEvent['type'], ReadonlySet<string>>> = {
  route_state: new Set(['type', 'service', 'route', 'state', 'version']),
  global_maintenance: new Set(['type', 'config', 'version']),
  service_maintenance: new Set(['type', 'service', 'config', 'version']),
  audit: new Set(['type', 'entry', 'version']),
}

function knownChangeEvent(event: ChangeEvent): boolean {
  const fields = event as unknown as Record<string, unknown>
  const object = (value: unknown) => typeof value === 'object' && value !== null
  switch (fields.type) {
    case 'route_state':
      return (
        typeof fields.service === 'string' &&
        typeof fields.route === 'string' &&
        (fields.state === null || object(fields.state))
      )
    case 'global_maintenance':
      return object(fields.config)
    case 'service_maintenance':
      return typeof fields.service === 'string' && object(fields.config)
    case 'audit':
      return object(fields.entry)
    default:
      return false
  }
}

/**
 * The event of a change message `<version>|<origin>|<event JSON>`, with its version; null for a
 * message this instance published (delivered locally already). Throws for a malformed one.
 */
function parseMessage(message: string, origin: string): ChangeEvent | null {
  const first = message.indexOf('|')
  const second = message.indexOf('|', first + 1)
  if (first < 0 || second < 0) throw new Error('expected <version>|<origin>|<event JSON>')
  if (message.slice(first + 1, second) === origin) return null
  const version = Number(message.slice(0, first))
  const event = JSON.parse(message.slice(second + 1)) as unknown
  if (
    typeof event !== 'object' ||
    event === null ||
    typeof (event as { type?: unknown }).type !== 'string' ||
    !Number.isSafeInteger(version) ||
    version < 0
  )
    throw new Error('not a change event')
  const parsed = event as ChangeEvent
  if (version > 0) parsed.version = version
  return parsed
}
