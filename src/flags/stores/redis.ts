/**
 * The Redis {@link FlagStore}: flags and segments shared by every instance on one Redis, under
 * the route-control store's prefix.
 *
 *   <prefix>flags:flags      hash  key → Flag JSON
 *   <prefix>flags:segments   hash  key → Segment JSON
 *   <prefix>flags:seq        string write counter (versions)
 *   <prefix>flags:changes    pub/sub channel: `<version>|<origin>|<FlagChangeEvent JSON>`
 *   <prefix>flags:version-seq          hash   flag key → number of its newest version
 *   <prefix>flags:versions:<flag key>  zset   FlagVersion JSON scored by its version
 *
 * A flag's history is numbered by HINCRBY, so two instances writing one flag never take the
 * same number, and kept in a sorted set by that number, so it reads in order whatever order
 * the appends landed in; each append trims the set to the newest `keep` in the same MULTI.
 *
 * Writes, versions, messages and the pub/sub connection are the shared {@link RecordFeed} of
 * the `flags` namespace (one Lua script per write: HSET/HDEL, INCR, PUBLISH), so every instance
 * sees the writes in one order. Commands go over the route store's command connection.
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
import { execAll } from '../../common/redis.js'
import { toError } from '../../core/errors.js'
import type { IgnoredMessageCounts } from '../../common/ignored-messages.js'
import { feedSubscriberName, redisRecordFeed } from '../../stores/record-feed.js'
import type { RedisHandle } from '../../stores/types.js'
import type { Flag, Segment } from '../model.js'
import type { FlagChangeEvent, FlagChangeListener, FlagStore, FlagVersion } from '../ports.js'

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
  /**
   * Adds a listener called when the store stops receiving changes (its connection was lost);
   * `onResync` listeners hear when it is back. Stores that cannot lose changes omit it.
   */
  onInterrupted?(listener: (error: Error) => void): () => void
  /**
   * Change messages ignored so far, by kind (malformed; a type this version does not know).
   * Stores without a channel omit it.
   */
  ignoredMessages?(): IgnoredMessageCounts
}

/** Options of {@link redisFlagStore}. */
export interface RedisFlagStoreOptions {
  /** Receives errors of subscribers and of the connection (a malformed message, a failed resubscribe). */
  onError?: (error: Error, what: string) => void
  /** Where ignored change messages are reported, as warnings (once per kind and type). */
  warn?: (message: string) => void
}

/** The interface of a {@link redisFlagStore}. */
export type RedisFlagStore = ManagedFlagStore

/** The client name of the pub/sub connection of a flag store under `prefix`. */
export function subscriberName(prefix: string): string {
  return feedSubscriberName(prefix, 'flags')
}

const stored = (record: Flag | Segment | null) => (record === null ? null : JSON.stringify(record))

const recordId = (event: FlagChangeEvent) => `${event.type}\u0000${event.key}`

/** The fields of each flag change this version reads. */
const FLAG_EVENT_FIELDS: Readonly<Record<FlagChangeEvent['type'], ReadonlySet<string>>> = {
  flag: new Set(['type', 'key', 'flag']),
  segment: new Set(['type', 'key', 'segment']),
}

/** Creates the Redis flag store on the route store's Redis. Call `connect()` after the route store's. */
export function redisFlagStore(
  redis: RedisHandle,
  options: RedisFlagStoreOptions = {},
): RedisFlagStore {
  const onError = options.onError ?? (() => undefined)
  const feed = redisRecordFeed<FlagChangeEvent>(redis, {
    namespace: 'flags',
    label: 'flag',
    recordOf: recordId,
    accepts: (event) => {
      const fields = event as Record<string, unknown>
      const record = fields.type === 'flag' ? fields.flag : fields.segment
      return (
        (fields.type === 'flag' || fields.type === 'segment') &&
        typeof fields.key === 'string' &&
        (record === null || typeof record === 'object')
      )
    },
    knownFields: (event) => FLAG_EVENT_FIELDS[event.type],
    containers: ['flags', 'segments'],
    storedAs: (event) =>
      event.type === 'flag'
        ? { container: 'flags', field: event.key, value: stored(event.flag) }
        : { container: 'segments', field: event.key, value: stored(event.segment) },
    onError,
    ...(options.warn === undefined ? {} : { warn: options.warn }),
  })
  const listeners = new Set<FlagChangeListener>()
  /** The newest event delivered per record, with its version (replayed after a list). */
  const delivered = new Map<string, { version: number; event: FlagChangeEvent }>()

  function emit(event: FlagChangeEvent): void {
    for (const listener of listeners) {
      try {
        listener(structuredClone(event))
      } catch (error) {
        onError(toError(error), 'flag change listener')
      }
    }
  }

  function deliver(event: FlagChangeEvent, version: number): void {
    delivered.set(recordId(event), { version, event })
    emit(event)
  }

  feed.subscribe(deliver)
  // Versions start over when Redis restarted empty: the feed forgot its own, forget ours.
  feed.onResync(() => delivered.clear())

  async function write(
    container: 'flags' | 'segments',
    operation: 'hset' | 'hdel',
    event: FlagChangeEvent,
    record: Flag | Segment | null,
  ): Promise<boolean> {
    const value = record === null ? '' : JSON.stringify(record)
    const { version, fresh } = await feed.write(container, operation, event.key, value, event)
    // The replica keeps no versions: the writer delivers its own change (unless a later one
    // from another instance already arrived).
    if (fresh) deliver(event, version)
    return version > 0
  }

  /** Reads both hashes and the counter at one point; replays newer events afterwards. */
  async function list<T>(container: 'flags' | 'segments'): Promise<T[]> {
    let snapshotVersion = Number.POSITIVE_INFINITY
    try {
      await feed.beforeRead()
      const [values, seq] = (await execAll(
        redis.client().multi().hgetall(feed.key(container)).get(feed.versionKey),
      )) as [Record<string, string>, string | null]
      snapshotVersion = seq === null ? 0 : Number(seq)
      feed.loaded(container, values, snapshotVersion)
      return Object.values(values).map((text) => JSON.parse(text) as T)
    } finally {
      const since = snapshotVersion
      // After the caller has applied the snapshot (its continuation runs in microtasks first).
      if (Number.isFinite(since)) setTimeout(() => replayAfter(since), 0)
    }
  }

  function replayAfter(version: number): void {
    for (const { version: seen, event } of delivered.values()) if (seen > version) emit(event)
  }

  const versionSeqKey = `${redis.prefix}flags:version-seq`
  const versionsKey = (flagKey: string) => `${redis.prefix}flags:versions:${flagKey}`

  return {
    listFlags: () => list<Flag>('flags'),
    async addFlagVersion(flagKey, entry, keep) {
      const client = redis.client()
      const version = await client.hincrby(versionSeqKey, flagKey, 1)
      const stored: FlagVersion = { version, ...structuredClone(entry) }
      await execAll(
        client
          .multi()
          .zadd(versionsKey(flagKey), version, JSON.stringify(stored))
          .zremrangebyrank(versionsKey(flagKey), 0, -(keep + 1)),
      )
      return stored
    },
    async listFlagVersions(flagKey) {
      const members = await redis.client().zrevrange(versionsKey(flagKey), 0, -1)
      return members.map((text) => JSON.parse(text) as FlagVersion)
    },
    async deleteFlagVersions(flagKey) {
      await execAll(redis.client().multi().del(versionsKey(flagKey)).hdel(versionSeqKey, flagKey))
    },
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
    onResync: (listener) => feed.onResync(listener),
    onInterrupted: (listener) => feed.onInterrupted(listener),
    connect: () => feed.connect(),
    close: () => feed.close(),
    ignoredMessages: () => feed.ignoredMessages(),
  }
}
