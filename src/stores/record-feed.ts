/**
 * A versioned record feed on the route store's Redis: the protocol that modules keeping their
 * own records on that Redis (flags, rate-limit policies) share with the route store.
 *
 * - A write is the store's `write-record.lua`: the record's HSET/HDEL, the namespace's version
 *   INCR and the PUBLISH of `<version>|<origin>|<event JSON>` on the namespace's channel, in one
 *   atomic step — a change is never stored without being announced, and every instance sees
 *   the changes in one order.
 * - Messages arrive on a pub/sub connection of the feed's own (a named duplicate of the command
 *   connection). A message from this instance is ignored: the writer already has its change.
 * - Versions are tracked per record, so a late message never rolls a record back.
 * - When the pub/sub connection comes back after a drop, changes may have been missed: the
 *   feed forgets its versions (Redis may have restarted empty, its counter starting over) and
 *   calls the resync listeners, which reload in full.
 * - The feed keeps a shadow of the namespace's records (see `reseed.ts`): full reads report
 *   what they read ({@link RecordFeed.loaded}), after {@link RecordFeed.beforeRead} checked
 *   whether Redis lost its data and re-seeded it from the shadows.
 *
 * The module needs no driver: it only uses the {@link RedisHandle} it is given.
 */
import { randomUUID } from 'node:crypto'
import { toError } from '../core/errors.js'
import {
  IgnoredMessages,
  messageType,
  type IgnoredMessageCounts,
} from '../common/ignored-messages.js'
import type { ChannelSubscriber } from '../common/redis-subscriber.js'
import { RecordShadow } from './reseed.js'
import type { RedisHandle } from './types.js'

/** What a feed needs to know about its events. */
export interface RecordFeedOptions<E> {
  /** Sub-prefix of the feed's keys and channel, e.g. `flags` → `<prefix>flags:changes`. */
  namespace: string
  /** How faults name the feed, e.g. `flag` → "flag change message". */
  label: string
  /** The record an event changes (versions are tracked per record). */
  recordOf(event: E): string
  /** The hashes of the namespace (names after `<prefix><namespace>:`). */
  containers: readonly string[]
  /** Where an event's record is stored: its hash, field and JSON (null: deleted). */
  storedAs(event: E): { container: string; field: string; value: string | null }
  /**
   * Whether a parsed message is an event this version knows, with the fields it needs. Any
   * other (a type a newer version added, a wrong shape) is ignored and counted; without it every
   * object is taken for an event.
   */
  accepts?(event: object): boolean
  /**
   * The top-level fields this version reads in an accepted event; others (a newer version's)
   * are counted and logged once per type and field. Without it fields are not checked.
   */
  knownFields?(event: E): ReadonlySet<string>
  /** Receives faults recovered from (a throwing listener, a malformed message). */
  onError?: (error: Error, what: string) => void
  /**
   * Where the first ignored message of each kind and type is reported, as a warning (messages a
   * newer instance sends are expected during a rolling upgrade); default `onError`.
   */
  warn?: (message: string) => void
}

/** A change and its version, as delivered to listeners. */
export type FeedListener<E> = (event: E, version: number) => void

/** The versioned change feed of one namespace. */
export interface RecordFeed<E> {
  /** `<prefix><namespace>:<name>`: the namespace's keys. */
  key(name: string): string
  /**
   * Writes one record of the hash `container` (`hset` with `value`, or `hdel`) and announces
   * `event`. Resolves the new version (0 when nothing changed: an `hdel` of a missing field)
   * and whether it is still the newest seen for the record — false when another instance's
   * later change to it has already arrived, so the writer must not apply its own over it.
   */
  write(
    container: string,
    operation: 'hset' | 'hdel',
    field: string,
    value: string,
    event: E,
  ): Promise<{ version: number; fresh: boolean }>
  /** The key of the namespace's version counter (snapshots read it with the records). */
  readonly versionKey: string
  /**
   * Call before a full read: re-seeds Redis from every shadow when it lost its data (shared
   * by every namespace on the store; one check at a time).
   */
  beforeRead(): Promise<void>
  /** Reports a full read of one hash (read with counter `version`) to the shadow. */
  loaded(container: string, entries: Record<string, string>, version: number): void
  /** Adds a listener for changes made by OTHER instances; returns the unsubscriber. */
  subscribe(listener: FeedListener<E>): () => void
  /** Adds a listener called when changes may have been missed; returns the unsubscriber. */
  onResync(listener: () => void): () => void
  /**
   * Adds a listener called when the pub/sub connection is lost (Redis unreachable): changes
   * stop arriving until it is back, which `onResync` listeners then hear. Returns the
   * unsubscriber.
   */
  onInterrupted(listener: (error: Error) => void): () => void
  /** Opens the pub/sub connection; call after the route store's `connect()`. Idempotent. */
  connect(): Promise<void>
  /** Closes the pub/sub connection. */
  close(): Promise<void>
  /** Messages ignored so far, by kind (malformed; unknown type or shape). */
  ignoredMessages(): IgnoredMessageCounts
}

/** The client name of a namespace's pub/sub connection under `prefix` (seen in CLIENT LIST). */
export function feedSubscriberName(prefix: string, namespace: string): string {
  return `${prefix}${namespace}:subscriber`.replace(/[^\x21-\x7e]/g, '_')
}

/** Creates the feed of `options.namespace` on the route store's Redis. */
export function redisRecordFeed<E>(
  redis: RedisHandle,
  options: RecordFeedOptions<E>,
): RecordFeed<E> {
  const onError = options.onError ?? (() => undefined)
  const key = (name: string) => `${redis.prefix}${options.namespace}:${name}`
  const channel = key('changes')
  const origin = randomUUID()
  const listeners = new Set<FeedListener<E>>()
  const resyncListeners = new Set<() => void>()
  const interruptedListeners = new Set<(error: Error) => void>()
  /** Highest version seen per record (own writes included). */
  const versions = new Map<string, number>()
  let subscriber: ChannelSubscriber | null = null
  const ignored = new IgnoredMessages(
    `${options.label} change message`,
    options.warn ?? ((message) => onError(new Error(message), `${options.label} change message`)),
  )
  const shadow = new RecordShadow(
    key('seq'),
    new Map(options.containers.map((name) => [key(name), 'hash'] as const)),
  )
  redis.reseeder.register(shadow)

  function shadowChange(event: E, version: number): void {
    const { container, field, value } = options.storedAs(event)
    shadow.set(key(container), field, value, version)
  }
  let connecting: Promise<void> | null = null

  function advance(event: E, version: number): boolean {
    const id = options.recordOf(event)
    if (version <= (versions.get(id) ?? 0)) return false
    versions.set(id, version)
    return true
  }

  function notify<A extends unknown[]>(set: Set<(...args: A) => void>, what: string, ...args: A) {
    for (const listener of set) {
      try {
        listener(...args)
      } catch (error) {
        onError(toError(error), what)
      }
    }
  }

  function receive(message: string): void {
    const first = message.indexOf('|')
    const second = message.indexOf('|', first + 1)
    if (first >= 0 && second >= 0 && message.slice(first + 1, second) === origin) return // the writer has it already
    let event: E
    let version: number
    try {
      if (first < 0 || second < 0) throw new Error('expected <version>|<origin>|<event JSON>')
      event = JSON.parse(message.slice(second + 1)) as E
      version = Number(message.slice(0, first))
      if (typeof event !== 'object' || event === null || !Number.isSafeInteger(version))
        throw new Error('not a change event')
    } catch (error) {
      // Anything may be published on the channel: a malformed message is counted and, as it
      // may have stood for a change, the listeners reload in full.
      ignored.ignore('malformed', undefined, toError(error).message)
      notify(resyncListeners, `${options.label} resync listener`)
      return
    }
    // An event this version does not know (a newer instance's, or a wrong shape) is skipped:
    // reading its record or storage place would throw, outside any caller, and end the process.
    let known: boolean
    try {
      known = options.accepts?.(event) ?? true
      if (known) {
        options.storedAs(event)
        known = typeof options.recordOf(event) === 'string'
      }
    } catch {
      known = false
    }
    if (!known) {
      ignored.ignore('unknown_type', messageType(event), 'not an event this version knows')
      return
    }
    const fields = options.knownFields?.(event)
    if (fields !== undefined) {
      const type = messageType(event)
      ignored.unknownFields(typeof type === 'string' ? type : options.label, event, fields)
    }
    if (advance(event, version)) {
      shadowChange(event, version)
      notify(listeners, `${options.label} change listener`, event, version)
    }
  }

  async function open(): Promise<void> {
    let dropped = false
    let next: ChannelSubscriber | null = null
    next = await redis.subscribe(
      channel,
      {
        message: receive,
        dropped() {
          // Reported once per outage, and never for the close of close().
          if (dropped || subscriber !== next) return
          dropped = true
          const error = new Error(`the ${options.label} change feed lost its Redis connection`)
          notify(interruptedListeners, `${options.label} interruption listener`, error)
        },
        resubscribed() {
          dropped = false
          versions.clear()
          notify(resyncListeners, `${options.label} resync listener`)
        },
        fault: (message, error) =>
          onError(error ?? new Error(message), `${options.label} pub/sub resubscribe`),
      },
      feedSubscriberName(redis.prefix, options.namespace),
    )
    subscriber = next
  }

  return {
    key,
    versionKey: key('seq'),
    async write(container, operation, field, value, event) {
      const args = [operation, field, value, channel, origin, JSON.stringify(event)]
      const version = Number(await redis.writeRecord([key(container), key('seq')], args))
      const fresh = version > 0 && advance(event, version)
      if (fresh) shadowChange(event, version)
      return { version, fresh }
    },
    beforeRead: () => redis.reseeder.ensure(),
    loaded(container, entries, version) {
      shadow.replace(key(container), Object.entries(entries), version)
    },
    subscribe(listener) {
      listeners.add(listener)
      return () => listeners.delete(listener)
    },
    onResync(listener) {
      resyncListeners.add(listener)
      return () => resyncListeners.delete(listener)
    },
    onInterrupted(listener) {
      interruptedListeners.add(listener)
      return () => interruptedListeners.delete(listener)
    },
    connect() {
      if (subscriber !== null) return Promise.resolve()
      connecting ??= open().finally(() => {
        connecting = null
      })
      return connecting
    },
    ignoredMessages: () => ignored.counts(),
    async close() {
      await connecting?.catch(() => undefined)
      const current = subscriber
      subscriber = null
      if (current === null) return
      await current.close()
    },
  }
}
