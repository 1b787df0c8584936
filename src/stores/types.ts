/**
 * The store ports of route control: one small interface per kind of record. Every
 * implementation (memory, file, Redis and PostgreSQL) passes the same conformance suite
 * (`test/stores/conformance.ts`), which is the executable form of the semantics written here.
 *
 * Writes notify the store's change feed after they are durable, so that every engine sharing
 * the store (other processes, with Redis or PostgreSQL) can update its replica. Record writes carry a
 * `version` from one counter per store (see `core/events.ts` for why).
 *
 * Rate-limit policies and hits, flags and segments have their own ports, defined by their
 * modules; they reach the backend through {@link Store.backend} (see docs/stores.md).
 */
import type { LoggerLike } from '../common/logger.js'
import type { IgnoredMessageCounts } from '../common/ignored-messages.js'
import type { RedisReseeder } from './reseed.js'
import type { AuditEntry, AuditFilter } from '../core/audit-entry.js'
import type { ChangeListener } from '../core/events.js'
import type { MaintenanceConfig } from '../core/maintenance.js'
import type { RouteState } from '../core/route-state.js'

/** Runtime overrides of route states. Declared states live in code and are never stored. */
export interface RouteStateStore {
  /** Every stored override, in no particular order. */
  list(): Promise<RouteState[]>
  /** Stores (creates or replaces) the override of `state.service` + `state.route`, then publishes `route_state`. */
  put(state: RouteState): Promise<void>
  /**
   * Stores `state` only if the stored override of the same route still has `since` equal to
   * `expectedSince` (compare-and-set, atomic in every backend); resolves whether it was stored.
   * The scheduler uses it so that a transition is persisted once, and never over a newer change.
   */
  replaceIf(state: RouteState, expectedSince: string): Promise<boolean>
  /** Removes an override; resolves true when one existed. Publishes `route_state` with `state: null`. */
  delete(service: string, route: string): Promise<boolean>
}

/** Global and per-service maintenance configurations. */
export interface MaintenanceStore {
  /** The global configuration, or null when none was ever stored. */
  getGlobal(): Promise<MaintenanceConfig | null>
  /** Replaces the global configuration, then publishes `global_maintenance`. */
  putGlobal(config: MaintenanceConfig): Promise<void>
  /** Every stored per-service configuration, by service name. */
  listServices(): Promise<Map<string, MaintenanceConfig>>
  /** Replaces one service's configuration, then publishes `service_maintenance`. */
  putService(service: string, config: MaintenanceConfig): Promise<void>
}

/** Query of {@link AuditStore.list}. */
export interface AuditQuery extends AuditFilter {
  /** Entries to skip (newest first). */
  offset: number
  /** At most this many entries. */
  limit: number
}

/** The audit log: newest first, capped. */
export interface AuditStore {
  /**
   * Adds an entry as the newest, then evicts the oldest beyond `cap` entries, then publishes
   * an `audit` event. Append and eviction are one atomic step.
   */
  append(entry: AuditEntry, cap: number): Promise<void>
  /** Entries matching the filter, newest first, with the number of matches before paging. */
  list(query: AuditQuery): Promise<{ items: AuditEntry[]; total: number }>
}

/** A stored admin session token (the token itself is never stored, only its hash). */
export interface TokenRecord {
  username: string
  /** The session's role; absent on sessions stored before roles existed (they were admins). */
  role?: 'viewer' | 'operator' | 'admin'
  /** ISO 8601 expiry. */
  expires_at: string
}

/** Admin session tokens, shared by every instance so that a logout holds everywhere. */
export interface TokenStore {
  /** Stores a token by its hash until `record.expires_at`. */
  put(tokenHash: string, record: TokenRecord): Promise<void>
  /** The record of a token hash, or null when unknown, revoked or expired. Read-only. */
  get(tokenHash: string): Promise<TokenRecord | null>
  /** Revokes a token; resolves true when it existed. */
  revoke(tokenHash: string): Promise<boolean>
}

/**
 * A stored evaluation key: a read-only credential of the OFREP endpoints. The key itself is
 * never stored, only its SHA-256 hash.
 */
export interface EvaluationKeyRecord {
  /** Public identifier (`DELETE /api/evaluation-keys/{id}`). */
  id: string
  /** What the key is for, e.g. `checkout-web`. */
  name: string
  /** Hex SHA-256 of the key. */
  key_hash: string
  /** The key's first and last characters (`syk_AbCd…wXyZ`), to recognise it in a list. */
  hint: string
  /** ISO 8601 creation time. */
  created_at: string
  /** Who created it. */
  created_by: string
  /**
   * The flags the key may evaluate: exact keys, prefixes (`checkout-*`) and tags (`tag:web`).
   * Absent: every flag.
   */
  flags?: string[]
}

/** Evaluation keys, shared by every instance so that a revocation holds everywhere. */
export interface EvaluationKeyStore {
  /** Stores a key (created once; ids and hashes are unique). */
  put(record: EvaluationKeyRecord): Promise<void>
  /** The record whose key hashes to `keyHash`, or null (unknown or revoked). */
  findByHash(keyHash: string): Promise<EvaluationKeyRecord | null>
  /**
   * {@link findByHash} answered at once, for backends that hold the keys in this process
   * (memory, file); absent where a lookup must wait (Redis, PostgreSQL). Checked on every OFREP request.
   */
  findByHashNow?(keyHash: string): EvaluationKeyRecord | null
  /** The record with `id`, or null. */
  get(id: string): Promise<EvaluationKeyRecord | null>
  /** Every stored key, in no particular order. */
  list(): Promise<EvaluationKeyRecord[]>
  /** Revokes (deletes) a key; resolves true when it existed. */
  revoke(id: string): Promise<boolean>
}

/**
 * A stored API token: a bearer credential of the admin API with a role, optionally confined to
 * one service (a service token, used by SDK apps). The token itself is never stored, only its
 * SHA-256 hash.
 */
export interface ApiTokenRecord {
  /** Public identifier (`DELETE /api/tokens/{id}`). */
  id: string
  /** Unique among live tokens: `[A-Za-z0-9._-]`, 1 to 64 characters. */
  name: string
  role: 'viewer' | 'operator' | 'admin'
  /** The one service a service token may act on; null for an unconfined token. */
  service: string | null
  /** Hex SHA-256 of the token. */
  token_hash: string
  /** ISO 8601 creation time. */
  created_at: string
  /** Who created it. */
  created_by: string
  /** ISO 8601 expiry, or null for a token that does not expire. */
  expires_at: string | null
}

/** API tokens, shared by every instance so that a revocation holds everywhere. */
export interface ApiTokenStore {
  /** Stores a token (created once; ids and hashes are unique). */
  put(record: ApiTokenRecord): Promise<void>
  /** The record whose token hashes to `tokenHash`, or null (unknown or revoked). */
  findByHash(tokenHash: string): Promise<ApiTokenRecord | null>
  /**
   * {@link findByHash} answered at once, for backends that hold the tokens in this process
   * (memory, file); absent where a lookup must wait (Redis, PostgreSQL).
   */
  findByHashNow?(tokenHash: string): ApiTokenRecord | null
  /** The record with `id`, or null. */
  get(id: string): Promise<ApiTokenRecord | null>
  /** Every stored token, in no particular order. */
  list(): Promise<ApiTokenRecord[]>
  /** Revokes (deletes) a token and its last use; resolves true when it existed. */
  revoke(id: string): Promise<boolean>
  /**
   * Records that `token` was used at `at` (ISO 8601); leaves nothing behind for a token that no
   * longer exists. Written at most once a minute per token by its callers.
   */
  touch(token: ApiTokenRecord, at: string): Promise<void>
  /** When each token was last used (ISO 8601), by id; tokens never used are absent. */
  lastUsed(): Promise<Map<string, string>>
}

/** One-time claims: how several instances agree that exactly one of them does something. */
export interface ClaimStore {
  /**
   * Resolves true for the first caller of `key` and false for every later caller, until
   * `ttlMs` has passed (atomic across every instance sharing the store).
   */
  claim(key: string, ttlMs: number): Promise<boolean>
}

/** Everything the replica holds, read at one point of the change feed. */
export interface StoreSnapshot {
  overrides: RouteState[]
  global: MaintenanceConfig | null
  services: Map<string, MaintenanceConfig>
  /** The feed position of the snapshot: events with a version ≤ this are already included. */
  version: number
}

/** Delivery of change events from the store to every engine that shares it. */
export interface ChangeFeedPort {
  /**
   * Adds a listener for changes, including this process's own writes (delivered once, right
   * after the write); returns the unsubscriber.
   */
  subscribe(listener: ChangeListener): () => void
  /**
   * Adds a listener called when events may have been missed (a pub/sub connection dropped
   * and came back): the engine then reloads its replica in full. Returns the unsubscriber.
   */
  onResync(listener: () => void): () => void
  /** A consistent read of every route override and maintenance configuration, with its version. */
  snapshot(): Promise<StoreSnapshot>
}

/**
 * The backend a store runs on, for ports defined by other modules (rate limits, flags):
 * a module provides one implementation per kind and picks it from here.
 */
export type StoreBackend =
  | { kind: 'memory' }
  | { kind: 'file'; sections: FileSections; /** The state file (absolute path). */ path: string }
  | { kind: 'redis'; redis: RedisHandle }
  | { kind: 'postgres'; postgres: PostgresHandle }

/** Named JSON sections of the file store's document, written with the same atomic write. */
export interface FileSections {
  /** The stored value of a section (a copy), or undefined. */
  read(name: string): unknown
  /** Replaces a section and resolves once the file is durable. */
  write(name: string, value: unknown): Promise<void>
}

/** Access to the Redis store's connection, for other modules' Redis ports. */
export interface RedisHandle {
  /** The key prefix of this store, e.g. `switchyard:`; other modules add their own sub-prefix. */
  readonly prefix: string
  /** The command connection (an ioredis client); throws before `connect()`. */
  client(): import('ioredis').Redis
  /**
   * Runs the store's `write-record.lua` (a record's HSET/HDEL, the version INCR and the PUBLISH
   * of its change, atomically) — see its header for KEYS and ARGV — and resolves its reply: the
   * new version, or 0 when nothing changed. Other modules' Redis ports write through it so
   * every change is versioned and published the same way.
   */
  writeRecord(keys: string[], args: (string | number)[]): Promise<unknown>
  /**
   * Subscribes to another change channel on this Redis (resolves once live), the way the store
   * subscribes to its own: plain pub/sub, or sharded pub/sub on a cluster (where `writeRecord`
   * publishes with `SPUBLISH`). Call after `connect()`.
   */
  subscribe(
    channel: string,
    events: import('../common/redis-subscriber.js').ChannelEvents,
    connectionName?: string,
  ): Promise<import('../common/redis-subscriber.js').ChannelSubscriber>
  /**
   * Re-seeds the store when Redis lost its data (see `reseed.ts`): modules keeping records on
   * this Redis register their namespace's shadow, and check it before every full read.
   */
  readonly reseeder: RedisReseeder
}

/** Access to the PostgreSQL store's database, for other modules' PostgreSQL ports. */
export interface PostgresHandle {
  /** The table prefix of this store, e.g. `switchyard_`; other modules' tables carry it too. */
  readonly tablePrefix: string
  /** Runs one statement on the store's pool; rejects before `connect()`. */
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-parameters -- rows are typed by the caller's SELECT
  query<R extends Record<string, unknown> = Record<string, unknown>>(
    text: string,
    params?: unknown[],
  ): Promise<{ rows: R[]; rowCount: number }>
  /**
   * Named JSON sections shared by every instance (see `postgres/sections.ts`), for modules that
   * keep their records as sections of the file store's document. A write made by another
   * instance at the same moment is refused rather than overwritten.
   */
  readonly sections: FileSections & {
    /**
     * Adds a listener for sections changed by other instances; returns the unsubscriber.
     * `keys` names the records (top-level members) that changed and were applied to the held
     * section; it is absent when the whole section was read again (after a reconnect, a missed
     * version or a refused write of this instance), and then every record may have changed.
     */
    onChange(listener: (name: string, keys?: readonly string[]) => void): () => void
    /** A copy of one record of a held section, or undefined (reads no more than that record). */
    record(name: string, key: string): unknown
  }
}

/** A route-control store: its ports plus lifecycle. */
export interface Store {
  /** Backend name, as in `CTL_BACKEND`. */
  readonly kind: string
  /**
   * Messages of other instances this store ignored, by kind (malformed; unknown type or shape,
   * e.g. from a newer version during a rolling upgrade). Present on stores with a channel.
   */
  ignoredMessages?(): IgnoredMessageCounts
  readonly routes: RouteStateStore
  readonly maintenance: MaintenanceStore
  readonly audit: AuditStore
  readonly tokens: TokenStore
  /** Evaluation keys of the OFREP endpoints (`src/stores/evaluation-keys.ts`). */
  readonly evaluationKeys: EvaluationKeyStore
  /** API tokens of the admin API (`src/stores/api-tokens.ts`). */
  readonly apiTokens: ApiTokenStore
  readonly claims: ClaimStore
  readonly changes: ChangeFeedPort
  /** The backend, for ports defined outside this module. */
  readonly backend: StoreBackend
  /**
   * Opens connections or files; safe to call more than once. Rejects with a `ConfigError`
   * for problems a retry cannot fix (a corrupt state file, a missing driver), and with any
   * other error for a backend that is unreachable for now.
   */
  connect(): Promise<void>
  /** Releases connections, timers and files. */
  close(): Promise<void>
  /**
   * Where the store logs its background faults when it was created without a `logger` option;
   * the engine hands it its own. A store given a logger keeps it.
   */
  attachLogger?(logger: LoggerLike): void
}
