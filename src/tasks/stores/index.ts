/**
 * The durable task stores and their factories (docs/task-persistence.md): `sqliteStore(path)`,
 * `postgresStore({ connectionString } | { pool })`, `mysqlStore({ uri } | { pool })`,
 * `redisStore({ url | client, prefix })`.
 * Drivers are loaded on first use, so only the chosen backend's driver must be installed.
 */
import type { MysqlPool, PostgresPool } from 'kysely'
import { SqlTaskStore, type SqlStoreOptions } from './sql/sql-store.js'
import {
  RedisTaskStore,
  type RedisStoreConnection,
  type RedisStoreOptions,
} from './redis/redis-store.js'

export * from './ports.js'
export { StoreDriverMissingError, StoreError } from './errors.js'
export { SqlTaskStore, type SqlStoreOptions } from './sql/sql-store.js'
export { CURRENT_SCHEMA_VERSION } from './sql/migrations.js'

/** A SQLite store in the file at `path` (WAL mode); needs `better-sqlite3`. */
export function sqliteStore(path: string, options: SqlStoreOptions = {}): SqlTaskStore {
  return new SqlTaskStore({ dialect: 'sqlite', path }, options)
}

/** A PostgreSQL store over a pool it opens (`connectionString`) or yours (`pool`); needs `pg`. */
export function postgresStore(
  connection: { connectionString: string; poolSize?: number } | { pool: PostgresPool },
  options: SqlStoreOptions = {},
): SqlTaskStore {
  return new SqlTaskStore({ dialect: 'postgres', ...connection }, options)
}

/** A MySQL/MariaDB store over a pool it opens (`uri`) or yours (`pool`); needs `mysql2`. */
export function mysqlStore(
  connection: { uri: string; poolSize?: number } | { pool: MysqlPool },
  options: SqlStoreOptions = {},
): SqlTaskStore {
  return new SqlTaskStore({ dialect: 'mysql', ...connection }, options)
}

export {
  RedisTaskStore,
  type RedisStoreOptions,
  type RedisCommandClient,
  type RedisStoreConnection,
} from './redis/redis-store.js'

/**
 * A Redis store over a client it opens (`url`, `cluster: ['host:port', ...]`, or `sentinels`
 * with `name`) or yours (`client`); needs `ioredis`. One options object, the same shape as the
 * route-control `redisStore` of `fastify-switchyard`: `redisStore({ url, prefix })`. (The older form with the prefix in a second argument,
 * `redisStore({ url }, { prefix })`, still works; the second argument wins.)
 */
export function redisStore(
  connection: RedisStoreConnection & RedisStoreOptions,
  options: RedisStoreOptions = {},
): RedisTaskStore {
  const { prefix, ...target } = connection
  return new RedisTaskStore(target, { ...(prefix === undefined ? {} : { prefix }), ...options })
}
