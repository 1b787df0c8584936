/**
 * The Redis store's connections (one server, a Sentinel primary, or a cluster — see
 * `common/redis-target.ts`): a command connection and a pub/sub connection, the driver
 * loaded lazily (a user of the other backends installs nothing), and the store's Lua scripts
 * (`lua/*.lua`, read when the store connects, run by SHA).
 *
 * Why commands fail fast instead of queueing while Redis is away: a write that cannot reach
 * Redis should fail now and say so, not hang; reads on the request path never come here (the
 * engine serves from its replica). Why a dropped pub/sub connection asks for a resync: Redis
 * does not replay messages published while a subscriber was away, so the engine reloads
 * everything once the connection is back.
 */
import type { Redis as RedisClient, RedisOptions } from 'ioredis'
import { LuaScripts } from '../common/lua.js'
import { loadRedisClasses, type RedisClasses } from '../common/redis.js'
import {
  openChannelSubscriber,
  type ChannelEvents,
  type ChannelSubscriber,
} from '../common/redis-subscriber.js'
import {
  createRedisClient,
  describeTarget,
  type RedisAnyClient,
  type RedisTarget,
} from '../common/redis-target.js'
import { ConfigError, toError } from '../core/errors.js'

/** The Lua scripts of the store (files next to this module, under `lua/`). */
export const SCRIPT_NAMES = ['write-record', 'replace-if', 'claim', 'reseed'] as const

/** One of {@link SCRIPT_NAMES}. */
export type ScriptName = (typeof SCRIPT_NAMES)[number]

const scripts = new LuaScripts<ScriptName>(
  new URL('./lua/', import.meta.url),
  SCRIPT_NAMES,
  (path, cause) =>
    new ConfigError(
      `The Redis store script ${path} is missing; the package was built without its lua/ files.`,
      {},
      { cause },
    ),
)

/** Callbacks of a {@link RedisConnection}. */
export interface RedisConnectionEvents {
  /** A pub/sub message on the change channel. */
  message(message: string): void
  /** The pub/sub connection came back after a drop: messages may have been lost. */
  resubscribed(): void
  /** A connection fault worth a log line (first error after each successful connection). */
  fault(message: string, error?: Error): void
}

/** Command and pub/sub connections to one Redis server, a Sentinel primary or a cluster. */
export class RedisConnection {
  private command: RedisAnyClient | null = null
  private subscriber: ChannelSubscriber | null = null
  private connecting: Promise<void> | null = null
  private driver: RedisClasses | null = null
  private readonly options: RedisOptions = {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 2000,
    // Reconnect attempts at most half a second apart: after an outage, state writes and
    // rate limits (counters on this connection) work again within about a second of Redis
    // being back, where a 5 s cap left them failing open for up to five seconds more.
    retryStrategy: (attempt) => Math.min(50 * 2 ** attempt, 500),
  }

  constructor(
    private readonly target: RedisTarget,
    private readonly channel: string,
    private readonly events: RedisConnectionEvents,
  ) {}

  /**
   * The command connection; throws before {@link connect}. On a cluster it is a `Cluster`
   * client, typed as a `Redis` one: the commands the store sends route by their first key.
   */
  client(): RedisClient {
    if (this.command === null) throw new Error('The Redis store is not connected yet.')
    return this.command as RedisClient
  }

  /** `SPUBLISH` on a cluster (sharded pub/sub: the channel lives on its slot's shard), else `PUBLISH`. */
  get publishCommand(): 'publish' | 'spublish' {
    return this.target.mode === 'cluster' ? 'spublish' : 'publish'
  }

  /** Connects both connections and subscribes; a failed attempt leaves nothing behind. */
  connect(): Promise<void> {
    if (this.command !== null) return Promise.resolve()
    this.connecting ??= this.open().finally(() => {
      this.connecting = null
    })
    return this.connecting
  }

  private async open(): Promise<void> {
    const driver = await loadRedisClasses(
      (cause) =>
        new ConfigError(
          'The redis backend (CTL_BACKEND=redis) needs the "ioredis" package: install ioredis (npm install ioredis).',
          {},
          { cause },
        ),
    )
    await scripts.load()
    const command = createRedisClient(driver, this.target, this.options)
    this.watch(command, 'command')
    let subscriber: ChannelSubscriber
    try {
      await command.connect()
      subscriber = await openChannelSubscriber({
        driver,
        target: this.target,
        options: this.options,
        channel: this.channel,
        command,
        events: {
          message: (message) => this.events.message(message),
          resubscribed: () => this.events.resubscribed(),
          fault: (message, error) => this.events.fault(message, error),
        },
      })
    } catch (error) {
      command.disconnect()
      throw new Error(`${describeTarget(this.target)} is unreachable: ${toError(error).message}`, {
        cause: error,
      })
    }
    this.driver = driver
    this.command = command
    this.subscriber = subscriber
  }

  /**
   * Another subscription on this store's Redis (other modules' change feeds), made the same
   * way as the store's own; call after {@link connect}.
   */
  subscribe(
    channel: string,
    events: ChannelEvents,
    connectionName?: string,
  ): Promise<ChannelSubscriber> {
    if (this.command === null || this.driver === null)
      return Promise.reject(new Error('The Redis store is not connected yet.'))
    return openChannelSubscriber({
      driver: this.driver,
      target: this.target,
      options: this.options,
      channel,
      ...(connectionName === undefined ? {} : { connectionName }),
      command: this.command,
      events,
    })
  }

  /**
   * Reports the first error after each successful connection, and the recovery. Errors of a
   * connection that never succeeded are not reported here: `connect()` rejects with them.
   */
  private watch(client: RedisAnyClient, role: string): void {
    let wasReady = false
    let reported = false
    client.on('error', (error: Error) => {
      if (!wasReady || reported) return
      reported = true
      this.events.fault(`Redis ${role} connection lost; retrying`, error)
    })
    client.on('ready', () => {
      if (reported) this.events.fault(`Redis ${role} connection restored`)
      reported = false
      wasReady = true
    })
  }

  /** Runs a store script by SHA (sending its text again after a Redis restart lost it). */
  run(name: ScriptName, keys: string[], args: (string | number)[]): Promise<unknown> {
    try {
      // The two writing scripts publish their change: sharded (ARGV[7]) on a cluster.
      const publishing = name === 'write-record' || name === 'replace-if'
      const sent =
        publishing && this.target.mode === 'cluster' && args.length === 6
          ? [...args, 'spublish']
          : args
      return scripts.run(name, this.client(), keys, sent)
    } catch (error) {
      return Promise.reject(toError(error))
    }
  }

  /** Closes both connections. */
  async close(): Promise<void> {
    await this.connecting?.catch(() => undefined)
    const command = this.command
    const subscriber = this.subscriber
    this.command = null
    this.subscriber = null
    await Promise.all([
      subscriber?.close(),
      (async () => {
        if (command === null) return
        try {
          await command.quit()
        } catch {
          command.disconnect()
        }
      })(),
    ])
  }
}
