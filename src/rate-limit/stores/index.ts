/**
 * Picks the rate-limit stores and counters for a route-control store's backend, so policies,
 * the blocked-request log and counters live wherever the rest of the engine's state lives:
 *
 *   memory → memory policy and hit stores, {@link memoryCounters} (this process only)
 *   file   → the `rl_*` sections of the same document, {@link snapshotCounters} in a file next
 *            to it (`<state file>.rl-counters.json`)
 *   redis  → hashes and a list under `<prefix>rl:`, its own change channel, and
 *            {@link redisCounters} under `<prefix>rl:counters:` on the store's connection
 *   postgres → policies in the store's shared sections (another instance's change arrives as
 *            a resync), the `<prefix>rl_hits` table and {@link postgresCounters}
 *
 * Every result has the same lifecycle: `connect()` after the route store's `connect()`,
 * `close()` before the route store's; `subscribe` delivers other instances' changes (only
 * Redis has any) and `onResync` asks for a full reload after changes may have been missed.
 */
import type { IgnoredMessageCounts } from '../../common/ignored-messages.js'
import { isClusterClient } from '../../common/redis-target.js'
import { resolve } from 'node:path'
import type { RedisHandle, Store } from '../../stores/types.js'
import { memoryCounters } from '../counters/memory.js'
import { redisCounters, type RedisCounterClient } from '../counters/redis.js'
import { snapshotCounters } from '../counters/file.js'
import { postgresCounters } from '../counters/postgres.js'
import type { CounterStore } from '../counters/types.js'
import type { RateLimitChangeEvent } from '../events.js'
import type { RateLimitHitStore, RateLimitPolicyStore } from '../ports.js'
import { memoryHitStore, memoryPolicyStore } from './memory.js'
import { fileHitStore, filePolicyStore, RATE_LIMIT_SECTIONS } from './file.js'
import { postgresHitStore } from './postgres.js'
import { redisHitStore, redisPolicyStore } from './redis.js'

/** The rate-limit persistence of one engine, on its store's backend. */
export interface RateLimitStores {
  readonly policies: RateLimitPolicyStore
  readonly hits: RateLimitHitStore
  /** Makes the backend's counters (an application that brings its own never calls it). */
  makeCounters(): CounterStore
  /** Adds a listener for policy changes made by other instances; returns the unsubscriber. */
  subscribe(listener: (event: RateLimitChangeEvent) => void): () => void
  /** Adds a listener called when changes may have been missed; returns the unsubscriber. */
  onResync(listener: () => void): () => void
  /** Opens what these stores need beyond the route store's connection. Idempotent. */
  connect(): Promise<void>
  /** Releases what {@link connect} opened (counters close with the service). */
  close(): Promise<void>
  /** Policy change messages ignored so far, by kind; stores without a channel omit it. */
  ignoredMessages?(): IgnoredMessageCounts
}

/** Options of {@link rateLimitStoresFor}. */
export interface RateLimitStoresForOptions {
  /** Capacity of the blocked-request log (default 10 000). */
  maxRlHitEntries?: number
  /** Counter snapshot file of the file backend. Default: `<state file>.rl-counters.json`. */
  counterSnapshotPath?: string
  /** Deadline of each Redis counter call on the request path, in seconds (default 0.05). */
  redisCommandTimeout?: number
  /** Told when the Redis counters' circuit opens (with the last error) and closes. */
  onCircuit?: (state: 'open' | 'closed', error?: Error) => void
  /** Time source of the memory and snapshot counters' sweeper. */
  now?: () => number
  /** Receives faults the stores recover from. */
  onError?: (error: Error, what: string) => void
  /** Where ignored change messages are reported, as warnings (once per kind and type). */
  warn?: (message: string) => void
}

/** The rate-limit stores and counters on the backend of `store`. */
export function rateLimitStoresFor(
  store: Pick<Store, 'backend'>,
  options: RateLimitStoresForOptions = {},
): RateLimitStores {
  const capacity = options.maxRlHitEntries ?? 10_000
  const timing = options.now === undefined ? {} : { now: options.now }
  const backend = store.backend
  switch (backend.kind) {
    case 'memory':
      return local(memoryPolicyStore(), memoryHitStore(capacity), () => memoryCounters(timing))
    case 'file': {
      // The blocked-request log is written in the background; close writes what is pending.
      const hits = fileHitStore(backend.sections, capacity, {
        onError: (error) => options.onError?.(error, 'blocked-request log write'),
      })
      return local(
        filePolicyStore(backend.sections),
        hits,
        () =>
          snapshotCounters({
            ...timing,
            path: options.counterSnapshotPath ?? `${resolve(backend.path)}.rl-counters.json`,
            ...(options.onError === undefined
              ? {}
              : {
                  onError: (error: unknown) =>
                    options.onError?.(
                      error instanceof Error ? error : new Error(String(error)),
                      'counter snapshot',
                    ),
                }),
          }),
        () => hits.flush(),
      )
    }
    case 'redis': {
      const policies = redisPolicyStore(backend.redis, { ...pick(options) })
      const redis = backend.redis
      return {
        policies,
        hits: redisHitStore(redis, capacity),
        makeCounters: () =>
          redisCounters({
            client: lazyClient(redis),
            prefix: `${redis.prefix}rl:counters:`,
            ...(options.redisCommandTimeout === undefined
              ? {}
              : { commandTimeout: options.redisCommandTimeout }),
            ...(options.onCircuit === undefined ? {} : { onCircuit: options.onCircuit }),
          }),
        subscribe: (listener) => policies.subscribe(listener),
        onResync: (listener) => policies.onResync(listener),
        connect: () => policies.connect(),
        close: () => policies.close(),
        ignoredMessages: () => policies.ignoredMessages(),
      }
    }
    case 'postgres': {
      const postgres = backend.postgres
      const names = new Set<string>([
        RATE_LIMIT_SECTIONS.routes,
        RATE_LIMIT_SECTIONS.global,
        RATE_LIMIT_SECTIONS.services,
      ])
      return {
        ...local(filePolicyStore(postgres.sections), postgresHitStore(postgres, capacity), () =>
          postgresCounters({
            client: postgres,
            tablePrefix: postgres.tablePrefix,
            ...(options.redisCommandTimeout === undefined
              ? {}
              : { commandTimeout: options.redisCommandTimeout }),
            ...(options.onCircuit === undefined ? {} : { onCircuit: options.onCircuit }),
          }),
        ),
        onResync: (listener) =>
          postgres.sections.onChange((name) => {
            if (names.has(name)) listener()
          }),
      }
    }
  }
}

function pick(options: RateLimitStoresForOptions) {
  return {
    ...(options.onError === undefined ? {} : { onError: options.onError }),
    ...(options.warn === undefined ? {} : { warn: options.warn }),
  }
}

/** Stores of one process: no change feed, nothing to open. */
function local(
  policies: RateLimitPolicyStore,
  hits: RateLimitHitStore,
  makeCounters: () => CounterStore,
  close: () => Promise<void> = () => Promise.resolve(),
): RateLimitStores {
  return {
    policies,
    hits,
    makeCounters,
    subscribe: () => () => undefined,
    onResync: () => () => undefined,
    connect: () => Promise.resolve(),
    close,
  }
}

/**
 * The store's command connection for the counters, looked up per call: the counters are made
 * before the store connects, and the connection only exists afterwards. A call before that
 * rejects (the evaluator then fails open), never throws.
 */
function lazyClient(redis: RedisHandle): RedisCounterClient {
  const call = <T>(run: (client: ReturnType<RedisHandle['client']>) => Promise<T>): Promise<T> => {
    try {
      return run(redis.client())
    } catch (error) {
      return Promise.reject(error instanceof Error ? error : new Error(String(error)))
    }
  }
  return {
    evalsha: (sha, numKeys, ...args) => call((client) => client.evalsha(sha, numKeys, ...args)),
    eval: (script, numKeys, ...args) => call((client) => client.eval(script, numKeys, ...args)),
    scan: (cursor, match, pattern, count, size) =>
      call((client) => client.scan(cursor, match, pattern, count, size)),
    unlink: (...keys) => call((client) => client.unlink(...keys)),
    nodes(role) {
      const client: unknown = redis.client()
      return isClusterClient(client) ? client.nodes(role) : undefined
    },
    // The store owns the connection and closes it.
    quit: () => Promise.resolve(),
  }
}
