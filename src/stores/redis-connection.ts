/**
 * The Redis store's connections: a command connection and a pub/sub connection, the driver
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
import { loadRedisDriver, redactUrl } from '../common/redis.js'
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

/** Command and pub/sub connections to one Redis server. */
export class RedisConnection {
  private command: RedisClient | null = null
  private subscriber: RedisClient | null = null
  private connecting: Promise<void> | null = null

  constructor(
    private readonly url: string,
    private readonly channel: string,
    private readonly events: RedisConnectionEvents,
  ) {}

  /** The command connection; throws before {@link connect}. */
  client(): RedisClient {
    if (this.command === null) throw new Error('The Redis store is not connected yet.')
    return this.command
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
    const Redis = await loadRedisDriver(
      (cause) =>
        new ConfigError(
          'The redis backend (CTL_BACKEND=redis) needs the "ioredis" package: install ioredis (npm install ioredis).',
          {},
          { cause },
        ),
    )
    await scripts.load()
    const options: RedisOptions = {
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      connectTimeout: 2000,
      // Reconnect attempts at most half a second apart: after an outage, state writes and
      // rate limits (counters on this connection) work again within about a second of Redis
      // being back, where a 5 s cap left them failing open for up to five seconds more.
      retryStrategy: (attempt) => Math.min(50 * 2 ** attempt, 500),
    }
    const command = new Redis(this.url, options)
    // The subscriber resubscribes on its own 'ready' below. ioredis's automatic resubscribe
    // would send a second SUBSCRIBE whose failure (the connection dropping again right after
    // it came back) is an unhandled rejection inside the driver.
    const subscriber = new Redis(this.url, { ...options, autoResubscribe: false })
    this.watch(command, 'command')
    this.watch(subscriber, 'pub/sub')
    try {
      await command.connect()
      await subscriber.connect()
      await subscriber.subscribe(this.channel)
    } catch (error) {
      command.disconnect()
      subscriber.disconnect()
      throw new Error(`Redis at ${redactUrl(this.url)} is unreachable: ${toError(error).message}`, {
        cause: error,
      })
    }
    subscriber.on('message', (_channel: string, message: string) => {
      this.events.message(message)
    })
    let dropped = false
    subscriber.on('close', () => {
      dropped = true
    })
    subscriber.on('ready', () => {
      if (!dropped) return
      dropped = false
      // Subscribe again explicitly: its reply proves the subscription is active before the
      // resync reads the snapshot, so nothing published after the snapshot can be missed.
      subscriber.subscribe(this.channel).then(
        () => this.events.resubscribed(),
        (error: unknown) => this.events.fault('Redis resubscribe failed', toError(error)),
      )
    })
    this.command = command
    this.subscriber = subscriber
  }

  /**
   * Reports the first error after each successful connection, and the recovery. Errors of a
   * connection that never succeeded are not reported here: `connect()` rejects with them.
   */
  private watch(client: RedisClient, role: string): void {
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
      return scripts.run(name, this.client(), keys, args)
    } catch (error) {
      return Promise.reject(toError(error))
    }
  }

  /** Closes both connections. */
  async close(): Promise<void> {
    await this.connecting?.catch(() => undefined)
    const clients = [this.command, this.subscriber]
    this.command = null
    this.subscriber = null
    await Promise.all(
      clients.map(async (client) => {
        if (client === null) return
        try {
          await client.quit()
        } catch {
          client.disconnect()
        }
      }),
    )
  }
}
