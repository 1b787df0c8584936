/**
 * The Redis task store: the durable task-store ports on one Redis server. Records are hashes
 * with sorted-set indexes; every multi-key change and every claim is one Lua script, so it is
 * atomic and two instances can never both win a claim. Single-key claims (idempotency keys,
 * schedule slots) are `SET NX`.
 *
 * Key names are derived inside the scripts from the prefix (`ARGV[1]`), so on a Redis Cluster
 * the prefix is a hash tag (`switchyard:tasks:` becomes `{switchyard:tasks}:`): every key of the
 * store is in one slot, and every script call declares at least one key (the store's routing
 * key when a script declares none) so that the cluster sends it to that slot's node. Every key
 * name goes through {@link RedisOps.key}; a new key or script is cluster-safe as long as it
 * does too.
 */
import { randomUUID } from 'node:crypto'
import { defaultExport, loadDriver } from '../drivers.js'
import { StoreError } from '../errors.js'
import type {
  DurableTaskStore,
  IdempotencyStore,
  OneOffScheduleStore,
  PendingQueueStore,
  ScheduleSlotStore,
  SessionRevocationStore,
  TaskAdminStore,
  TaskChangeFeed,
  TaskFlowStore,
  TaskGateStore,
  TaskMetricsStore,
  TaskRecordStore,
  TaskWorkerStore,
} from '../ports.js'
import { redisAdminData, redisSessions } from './admin-data.js'
import { redisChanges } from './changes.js'
import { redisIdempotency, redisScheduleSlots } from './claims.js'
import { redisGates } from './gates.js'
import { redisMetrics } from './metrics.js'
import { redisOneOffs } from './one-off.js'
import type { RedisOps } from './ops.js'
import { redisPendingQueue } from './pending-queue.js'
import { redisRecords } from './records.js'
import { redisWorkers } from './workers.js'
import { redisFlows } from './flows.js'
import { loadScripts, type LuaScript, type ScriptName } from './scripts.js'
import { OpenOnce } from '../open-once.js'
import {
  createRedisClient,
  isClusterClient,
  prefixFor,
  redisTargetOf,
  type RedisDriver,
  type RedisTarget,
  type RedisTargetOptions,
} from '../../../common/redis-target.js'

/** The commands the store needs from a Redis client (ioredis satisfies it). */
export interface RedisCommandClient {
  call(command: string, ...args: (string | number)[]): Promise<unknown>
  quit(): Promise<unknown>
}

/** Options of {@link RedisTaskStore}. */
export interface RedisStoreOptions {
  /**
   * Prefix of every key; default `switchyard:tasks:`. On a cluster it becomes a hash tag
   * (`{switchyard:tasks}:`) unless it holds one: the whole store lives in one slot.
   */
  prefix?: string
}

/**
 * Where the store connects: a client of yours (a cluster client is recognised), or a `url`, a
 * `cluster` node list, or `sentinels` with the primary's `name` (see `RedisTargetOptions`).
 */
export type RedisStoreConnection = { client: RedisCommandClient } | RedisTargetOptions

const DEFAULT_URL = 'redis://127.0.0.1:6379'

/** The key every script call declares when the script itself declares none (cluster routing). */
export const ROUTING_KEY = 'route'

/** The durable task store on Redis. */
export class RedisTaskStore implements DurableTaskStore {
  readonly kind = 'redis'
  readonly records: TaskRecordStore
  readonly pending: PendingQueueStore
  readonly idempotency: IdempotencyStore
  readonly slots: ScheduleSlotStore
  readonly oneOffs: OneOffScheduleStore
  readonly admin: TaskAdminStore
  readonly sessions: SessionRevocationStore
  readonly metrics: TaskMetricsStore
  readonly changes: TaskChangeFeed
  readonly workers: TaskWorkerStore
  readonly gates: TaskGateStore
  readonly flows: TaskFlowStore
  readonly #prefix: string
  #scripts: Map<ScriptName, LuaScript> | null = null
  readonly #target: RedisTarget | null
  readonly #connection = new OpenOnce(async (): Promise<RedisCommandClient> => {
    this.#scripts = await loadScripts()
    if ('client' in this.connection) return this.connection.client
    const module = (await loadDriver('ioredis', 'Redis')) as Partial<RedisDriver> & {
      default?: Partial<RedisDriver>
    }
    const Redis = module.Redis ?? (defaultExport(module) as RedisDriver['Redis'])
    const Cluster = module.Cluster ?? module.default?.Cluster
    if (Cluster === undefined) throw new StoreError('The ioredis driver has no Cluster client.')
    const target = this.#target ?? redisTargetOf({}, DEFAULT_URL)
    return createRedisClient({ Redis, Cluster }, target, { maxRetriesPerRequest: 2 })
  })

  constructor(
    private readonly connection: RedisStoreConnection,
    options: RedisStoreOptions = {},
  ) {
    this.#target =
      'client' in connection
        ? null
        : redisTargetOf(connection, DEFAULT_URL, (message) => new StoreError(message))
    const cluster =
      'client' in connection ? isClusterClient(connection.client) : this.#target?.mode === 'cluster'
    const prefix = options.prefix ?? 'switchyard:tasks:'
    this.#prefix = cluster ? prefixFor({ mode: 'cluster', nodes: [] }, prefix) : prefix
    const ops: RedisOps = {
      prefix: this.#prefix,
      key: (...parts) => this.#prefix + parts.join(''),
      run: (name, keys, args) => this.#run(name, keys, args),
      isOpen: () => this.#connection.current() !== null,
      ordered: !cluster,
      call: async (command, ...args) => (await this.#open()).call(command, ...args),
    }
    const origin = randomUUID()
    this.records = redisRecords(ops, origin)
    this.flows = redisFlows(ops, origin)
    this.pending = redisPendingQueue(ops, origin, this.flows)
    this.idempotency = redisIdempotency(ops)
    this.slots = redisScheduleSlots(ops)
    this.oneOffs = redisOneOffs(ops)
    this.admin = redisAdminData(ops)
    this.sessions = redisSessions(ops)
    this.metrics = redisMetrics(ops)
    this.changes = redisChanges(ops, origin)
    this.workers = redisWorkers(ops)
    this.gates = redisGates(ops)
  }

  async init(): Promise<void> {
    await this.#open()
  }

  #open(): Promise<RedisCommandClient> {
    return this.#connection.get()
  }

  /**
   * Not an `async` function: once the connection is open the command is sent before this
   * returns, so that calls made in a row reach Redis in that order (see {@link RedisOps.run}).
   */
  #run(name: ScriptName, keys: string[], args: (string | number)[]): Promise<unknown> {
    const client = this.#connection.current()
    if (client === null) return this.#open().then(() => this.#run(name, keys, args))
    const script = this.#scripts?.get(name)
    if (script === undefined) return Promise.reject(new StoreError(`Missing Lua script ${name}.`))
    // A script that derives all its keys from the prefix still declares one: on a cluster the
    // call goes to the node of its first key's slot, which is the whole store's slot.
    const declared = keys.length === 0 ? [this.#prefix + ROUTING_KEY] : keys
    return client
      .call('EVALSHA', script.sha, declared.length, ...declared, ...args)
      .catch((error: unknown) => {
        // Replies come back in the order the calls went out, so retries of calls that all
        // found the script missing go out in that order too.
        if (!(error instanceof Error) || !error.message.includes('NOSCRIPT')) throw error
        return client.call('EVAL', script.text, declared.length, ...declared, ...args)
      })
  }

  async close(): Promise<void> {
    const client = await this.#connection.release()
    if (client !== null && !('client' in this.connection)) await client.quit()
  }
}
