/**
 * The Redis store's connections: a command connection and a pub/sub connection, the driver
 * loaded lazily (a user of the other backends installs nothing), and the Lua scripts read
 * from their `.lua` files.
 *
 * Why commands fail fast instead of queueing while Redis is away: a write that cannot reach
 * Redis should fail now and say so, not hang; reads on the request path never come here (the
 * engine serves from its replica). Why a dropped pub/sub connection asks for a resync: Redis
 * does not replay messages published while a subscriber was away, so the engine reloads
 * everything once the connection is back.
 */
import { createHash } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import type { Redis as RedisClient, RedisOptions } from 'ioredis'
import { ConfigError, toError } from '../core/errors.js'

/** The Lua scripts of the store (files next to this module, under `lua/`). */
export const SCRIPT_NAMES = ['write-record', 'replace-if'] as const

/** One of {@link SCRIPT_NAMES}. */
export type ScriptName = (typeof SCRIPT_NAMES)[number]

interface Script {
  text: string
  sha: string
}

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
  private scripts: Map<ScriptName, Script> | null = null
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
    const Redis = await loadDriver()
    this.scripts ??= await loadScripts()
    const options: RedisOptions = {
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      connectTimeout: 2000,
      retryStrategy: (attempt) => Math.min(100 * 2 ** attempt, 5000),
    }
    const command = new Redis(this.url, options)
    const subscriber = new Redis(this.url, options)
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

  /** Runs a store script by SHA, loading it on first use (or after a Redis restart). */
  async run(name: ScriptName, keys: string[], args: (string | number)[]): Promise<unknown> {
    const script = this.scripts?.get(name)
    if (script === undefined) throw new Error('The Redis store is not connected yet.')
    const client = this.client()
    try {
      return await client.evalsha(script.sha, keys.length, ...keys, ...args)
    } catch (error) {
      if (!toError(error).message.includes('NOSCRIPT')) throw error
      return client.eval(script.text, keys.length, ...keys, ...args)
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

/** Loads `ioredis`, or explains how to install it. */
async function loadDriver(): Promise<typeof RedisClient> {
  try {
    const module = await import('ioredis')
    return module.Redis
  } catch (error) {
    throw new ConfigError(
      'The redis backend (CTL_BACKEND=redis) needs the "ioredis" package: install ioredis (npm install ioredis).',
      {},
      { cause: error },
    )
  }
}

async function loadScripts(): Promise<Map<ScriptName, Script>> {
  const scripts = new Map<ScriptName, Script>()
  for (const name of SCRIPT_NAMES) {
    const url = new URL(`./lua/${name}.lua`, import.meta.url)
    let text: string
    try {
      text = await readFile(url, 'utf8')
    } catch (error) {
      throw new ConfigError(
        `The Redis store script ${url.pathname} is missing; the package was built without its lua/ files.`,
        {},
        { cause: error },
      )
    }
    scripts.set(name, { text, sha: createHash('sha1').update(text).digest('hex') })
  }
  return scripts
}

/** The URL without its password, for messages. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url)
    if (parsed.password !== '') parsed.password = '***'
    return parsed.toString()
  } catch {
    return '(invalid URL)'
  }
}
