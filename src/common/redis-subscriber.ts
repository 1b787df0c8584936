/**
 * A subscription to one change channel, on any {@link RedisTarget}: plain pub/sub on a single
 * server or through Sentinel, sharded pub/sub (`SSUBSCRIBE`, Redis 7) on a cluster, where the
 * channel lives on the shard of its slot and writers `SPUBLISH` to it.
 *
 * Why the subscriber says when it was away: Redis does not replay messages published while a
 * subscriber was disconnected, so the owner reloads everything once the subscription is live
 * again ({@link ChannelEvents.resubscribed} comes only after the subscribe reply).
 *
 * Why the cluster subscriber finds the shard itself: after a failover the channel's slot is
 * served by another node; the connection to the old one ends (or the server unsubscribes it
 * when its slots move), and the subscriber asks the cluster where the slot lives now and
 * subscribes there, retrying at most half a second apart until it succeeds or is closed.
 */
import type { Redis, RedisOptions } from 'ioredis'
import { toError } from './errors.js'
import type { RedisClasses } from './redis.js'
import {
  createRedisClient,
  keySlot,
  type RedisAnyClient,
  type RedisNode,
  type RedisTarget,
} from './redis-target.js'

/** What a {@link ChannelSubscriber} reports. */
export interface ChannelEvents {
  /** A message on the channel. */
  message(message: string): void
  /** The subscription was lost (once per outage); messages may be missed until it is back. */
  dropped?(): void
  /** The subscription is live again after a drop: reload what may have been missed. */
  resubscribed(): void
  /** A fault worth a log line. */
  fault(message: string, error?: Error): void
}

/** A live subscription; {@link close} ends it. */
export interface ChannelSubscriber {
  close(): Promise<void>
}

/** What {@link openChannelSubscriber} needs. */
export interface ChannelSubscriberOptions {
  readonly driver: RedisClasses
  readonly target: RedisTarget
  /** Connection options (the command connection's). */
  readonly options: RedisOptions
  readonly channel: string
  /** The connection's client name (seen in `CLIENT LIST`), if any. */
  readonly connectionName?: string
  /** The command client: on a cluster, asked where the channel's slot lives. */
  readonly command: RedisAnyClient
  readonly events: ChannelEvents
}

/**
 * Subscribes to the channel; resolves once the subscription is live, rejects (leaving nothing
 * behind) when it cannot be made.
 */
export async function openChannelSubscriber(
  setup: ChannelSubscriberOptions,
): Promise<ChannelSubscriber> {
  if (setup.target.mode === 'cluster') {
    const subscriber = new ShardSubscriber(setup)
    await subscriber.start()
    return subscriber
  }
  return openPlain(setup)
}

async function openPlain(setup: ChannelSubscriberOptions): Promise<ChannelSubscriber> {
  const { channel, events } = setup
  // ioredis's automatic resubscribe would send a second SUBSCRIBE whose failure (the
  // connection dropping again right after it came back) is an unhandled rejection inside the
  // driver; the subscriber resubscribes on its own 'ready' below instead.
  const client = createRedisClient(setup.driver, setup.target, {
    ...setup.options,
    ...(setup.connectionName === undefined ? {} : { connectionName: setup.connectionName }),
    lazyConnect: true,
    autoResubscribe: false,
  }) as Redis
  client.on('error', () => undefined) // the command connection reports the outage
  try {
    await client.connect()
    await client.subscribe(channel)
  } catch (error) {
    client.disconnect()
    throw error
  }
  let closing = false
  client.on('message', (_channel: string, message: string) => events.message(message))
  let dropped = false
  client.on('close', () => {
    if (dropped || closing) return
    dropped = true
    events.dropped?.()
  })
  client.on('ready', () => {
    if (!dropped) return
    dropped = false
    // Subscribe explicitly: its reply proves the subscription is live before the reload.
    client.subscribe(channel).then(
      () => events.resubscribed(),
      (error: unknown) => events.fault('Redis resubscribe failed', toError(error)),
    )
  })
  return {
    async close() {
      closing = true
      try {
        await client.quit()
      } catch {
        client.disconnect()
      }
    },
  }
}

/** A sharded subscription that follows its slot from node to node. */
class ShardSubscriber implements ChannelSubscriber {
  private current: Redis | null = null
  private closed = false
  private reattaching = false
  private readonly slot: number

  constructor(private readonly setup: ChannelSubscriberOptions) {
    this.slot = keySlot(setup.channel)
  }

  async start(): Promise<void> {
    await this.attach()
  }

  /** Connects to the node serving the slot now and subscribes there. */
  private async attach(): Promise<void> {
    const node = await this.owner()
    const Redis = this.setup.driver.Redis as unknown as new (options: RedisOptions) => Redis
    const client = new Redis({
      ...this.setup.options,
      ...(this.setup.connectionName === undefined
        ? {}
        : { connectionName: this.setup.connectionName }),
      host: node.host,
      port: node.port,
      lazyConnect: true,
      autoResubscribe: false,
      enableOfflineQueue: true,
      // The node may be gone for good (it failed over): this subscriber finds the next one.
      retryStrategy: () => null,
    })
    client.on('error', () => undefined)
    try {
      await client.connect()
      await client.ssubscribe(this.setup.channel)
    } catch (error) {
      client.disconnect()
      throw error
    }
    if (this.closed) {
      client.disconnect()
      return
    }
    client.on('smessage', (_channel: string, message: string) => this.setup.events.message(message))
    const lost = () => {
      if (this.current !== client || this.closed) return
      this.current = null
      client.disconnect()
      this.setup.events.dropped?.()
      void this.reattach()
    }
    client.on('end', lost)
    client.on('close', lost)
    // The server unsubscribes a sharded subscriber whose node lost the slot (ioredis: 'moved').
    client.on('moved', lost)
    this.current = client
  }

  /** Subscribes again on the slot's node, retrying until it works or the subscriber closes. */
  private async reattach(): Promise<void> {
    if (this.reattaching) return
    this.reattaching = true
    let attempt = 0
    let reported = false
    try {
      while (!this.closed) {
        await new Promise((resolve) => setTimeout(resolve, Math.min(50 * 2 ** attempt, 500)))
        attempt++
        try {
          await this.attach()
          if (!this.isClosed()) this.setup.events.resubscribed()
          return
        } catch (error) {
          if (!reported)
            this.setup.events.fault('Redis sharded resubscribe failed; retrying', toError(error))
          reported = true
        }
      }
    } finally {
      this.reattaching = false
    }
  }

  /** The primary serving the channel's slot, as the cluster says now. */
  private async owner(): Promise<RedisNode> {
    const ranges = (await this.setup.command.call('CLUSTER', 'SLOTS')) as [
      number,
      number,
      [string, number, ...unknown[]],
      ...unknown[],
    ][]
    for (const [from, to, primary] of ranges)
      if (this.slot >= from && this.slot <= to) return { host: primary[0], port: primary[1] }
    throw new Error(`no Redis Cluster node serves slot ${this.slot}`)
  }

  /** A method, not the field: the flag changes while `reattach` awaits. */
  private isClosed(): boolean {
    return this.closed
  }

  async close(): Promise<void> {
    this.closed = true
    const client = this.current
    this.current = null
    if (client === null) return
    try {
      await client.quit()
    } catch {
      client.disconnect()
    }
  }
}
