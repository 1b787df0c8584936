/**
 * The Redis {@link FlagStore}: flags and segments shared by every instance on one Redis, under
 * the route-control store's prefix.
 *
 *   <prefix>flags:flags      hash  key → Flag JSON
 *   <prefix>flags:segments   hash  key → Segment JSON
 *   <prefix>flags:seq        string write counter (versions)
 *   <prefix>flags:changes    pub/sub channel: `<version>|<origin>|<FlagChangeEvent JSON>`
 *
 * A write, its version and its message are one Lua script — the route store's
 * `write-record.lua`, which has exactly the semantics needed (HSET/HDEL, INCR, PUBLISH) — so
 * every instance sees the writes in one order. Commands go over the route store's command
 * connection; messages arrive on a pub/sub connection of this store's own (a duplicate of it,
 * opened by {@link RedisFlagStore.connect}).
 *
 * Ordering, as the flag replica keeps no versions: the writing instance delivers its own change
 * right after the script returns and ignores its own message, while other instances' changes
 * arrive over pub/sub, possibly late. Every delivered event carries a version and an event
 * older than one already delivered for the same record is dropped here, so a late message
 * never rolls a record back. A full list reads the records and the counter in one MULTI; events
 * newer than that snapshot that were delivered while the list was in flight are delivered
 * again just after it (the replica applies them idempotently), so a reload can never overwrite
 * a newer change with the older snapshot.
 */
import { randomUUID } from 'node:crypto'
import { toError } from '../core/errors.js'
import type { RedisHandle } from '../stores/types.js'
import type { Flag, Segment } from './model.js'
import type { FlagChangeEvent, FlagChangeListener, FlagStore } from './ports.js'

/** The driver's client type, taken from the handle (this layer does not import drivers). */
type RedisClient = ReturnType<RedisHandle['client']>

/** A {@link FlagStore} with a lifecycle and a resync signal (the Redis one). */
export interface ManagedFlagStore extends FlagStore {
  /** Opens what the store needs beyond the route store's connection; safe to call again. */
  connect(): Promise<void>
  /** Releases what {@link connect} opened. */
  close(): Promise<void>
  /**
   * Adds a listener called when change events may have been missed (a pub/sub connection came
   * back): reload everything then. Returns the unsubscriber.
   */
  onResync(listener: () => void): () => void
}

/** Options of {@link redisFlagStore}. */
export interface RedisFlagStoreOptions {
  /** Receives errors of subscribers and of the connection (a malformed message, a failed resubscribe). */
  onError?: (error: Error, what: string) => void
}

/** The interface of a {@link redisFlagStore}. */
export type RedisFlagStore = ManagedFlagStore

/** The client name of the pub/sub connection of a flag store under `prefix`. */
export function subscriberName(prefix: string): string {
  return `${prefix}flags:subscriber`.replace(/[^\x21-\x7e]/g, '_')
}

const recordId = (event: FlagChangeEvent) => `${event.type}\u0000${event.key}`

/** Creates the Redis flag store on the route store's Redis. Call `connect()` after the route store's. */
export function redisFlagStore(
  redis: RedisHandle,
  options: RedisFlagStoreOptions = {},
): RedisFlagStore {
  const onError = options.onError ?? (() => undefined)
  const key = (name: string) => `${redis.prefix}flags:${name}`
  const channel = key('changes')
  const origin = randomUUID()
  const listeners = new Set<FlagChangeListener>()
  const resyncListeners = new Set<() => void>()
  /** Highest version delivered per record, with that event (for replays after a list). */
  const delivered = new Map<string, { version: number; event: FlagChangeEvent }>()
  let subscriber: RedisClient | null = null
  let connecting: Promise<void> | null = null

  function deliver(event: FlagChangeEvent, version: number): void {
    const id = recordId(event)
    if (version <= (delivered.get(id)?.version ?? 0)) return
    delivered.set(id, { version, event })
    for (const listener of listeners) {
      try {
        listener(structuredClone(event))
      } catch (error) {
        onError(toError(error), 'flag change listener')
      }
    }
  }

  function receive(message: string): void {
    const first = message.indexOf('|')
    const second = message.indexOf('|', first + 1)
    if (first < 0 || second < 0) return
    if (message.slice(first + 1, second) === origin) return // delivered locally already
    try {
      deliver(
        JSON.parse(message.slice(second + 1)) as FlagChangeEvent,
        Number(message.slice(0, first)),
      )
    } catch (error) {
      onError(toError(error), 'flag change message')
    }
  }

  async function write(
    container: 'flags' | 'segments',
    operation: 'hset' | 'hdel',
    event: FlagChangeEvent,
    record: Flag | Segment | null,
  ): Promise<boolean> {
    const keys = [key(container), key('seq')]
    const args = [
      operation,
      event.key,
      record === null ? '' : JSON.stringify(record),
      channel,
      origin,
      JSON.stringify(event),
    ]
    const reply = await redis.writeRecord(keys, args)
    const version = Number(reply)
    if (version === 0) return false
    deliver(event, version)
    return true
  }

  /** Reads both hashes and the counter at one point; replays newer events afterwards. */
  async function list<T>(container: 'flags' | 'segments'): Promise<T[]> {
    let snapshotVersion = Number.POSITIVE_INFINITY
    try {
      const replies = await redis.client().multi().hvals(key(container)).get(key('seq')).exec()
      if (replies === null) throw new Error('Redis transaction was aborted.')
      const [[valuesError, values], [seqError, seq]] = replies as [
        [Error | null, string[]],
        [Error | null, string | null],
      ]
      if (valuesError !== null) throw valuesError
      if (seqError !== null) throw seqError
      snapshotVersion = seq === null ? 0 : Number(seq)
      return values.map((text) => JSON.parse(text) as T)
    } finally {
      const since = snapshotVersion
      // After the caller has applied the snapshot (its continuation runs in microtasks first).
      if (Number.isFinite(since)) setTimeout(() => replayAfter(since), 0)
    }
  }

  function replayAfter(version: number): void {
    for (const { version: seen, event } of delivered.values()) {
      if (seen <= version) continue
      for (const listener of listeners) {
        try {
          listener(structuredClone(event))
        } catch (error) {
          onError(toError(error), 'flag change listener')
        }
      }
    }
  }

  async function open(): Promise<void> {
    // Named, so that an operator can tell it apart in CLIENT LIST (and a test can drop it).
    const next = redis
      .client()
      .duplicate({ lazyConnect: true, connectionName: subscriberName(redis.prefix) })
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
      // Subscribe explicitly: its reply proves the subscription is active before the reload.
      next.subscribe(channel).then(
        () => {
          // Redis may have restarted empty, its counter starting over: forget old versions.
          delivered.clear()
          for (const listener of resyncListeners) {
            try {
              listener()
            } catch (error) {
              onError(toError(error), 'flag resync listener')
            }
          }
        },
        (error: unknown) => onError(toError(error), 'flag pub/sub resubscribe'),
      )
    })
    subscriber = next
  }

  return {
    listFlags: () => list<Flag>('flags'),
    async putFlag(flag) {
      const copy = structuredClone(flag)
      await write('flags', 'hset', { type: 'flag', key: copy.key, flag: copy }, copy)
    },
    deleteFlag: (flagKey) =>
      write('flags', 'hdel', { type: 'flag', key: flagKey, flag: null }, null),
    listSegments: () => list<Segment>('segments'),
    async putSegment(segment) {
      const copy = structuredClone(segment)
      await write('segments', 'hset', { type: 'segment', key: copy.key, segment: copy }, copy)
    },
    deleteSegment: (segmentKey) =>
      write('segments', 'hdel', { type: 'segment', key: segmentKey, segment: null }, null),
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
