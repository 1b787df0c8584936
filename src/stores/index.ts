/**
 * Store selection by backend name (`CTL_BACKEND`): `memory` (default), `file`
 * (`CTL_FILE_PATH`), `redis` (`CTL_REDIS_URL`, or `CTL_REDIS_CLUSTER_NODES`, or
 * `CTL_REDIS_SENTINELS` with `CTL_REDIS_SENTINEL_NAME`; `CTL_REDIS_PREFIX`) or `postgres`
 * (`CTL_POSTGRES_URL`, `CTL_POSTGRES_TABLE_PREFIX`). Drivers are loaded on
 * `connect()`, so that a user of the memory default installs nothing else.
 */
import { ConfigError } from '../core/errors.js'
import { DEFAULT_FILE_PATH, fileStore, type FileStoreOptions } from './file.js'
import { memoryStore } from './memory.js'
import { configError, DEFAULT_REDIS_URL, redisStore, type RedisStoreOptions } from './redis.js'
import { redisTargetFromEnv, targetOptions } from '../common/redis-target.js'
import {
  checkPostgresUrl,
  checkTablePrefix,
  DEFAULT_POSTGRES_URL,
  postgresStore,
  type PostgresStoreOptions,
} from './postgres/store.js'
import type { Store } from './types.js'

/** Backend names accepted by `CTL_BACKEND`. */
export const BACKENDS = ['memory', 'file', 'redis', 'postgres'] as const

/** One of {@link BACKENDS}. */
export type BackendName = (typeof BACKENDS)[number]

/**
 * Creates the store for a backend name, configured from the environment (the variables above);
 * an unknown name is a {@link ConfigError}, never a silent fallback.
 */
export function createStore(backend: string, env: NodeJS.ProcessEnv = process.env): Store {
  switch (backend) {
    case 'memory':
      return memoryStore()
    case 'file':
      return fileStore({ path: nonEmpty(env.CTL_FILE_PATH) ?? DEFAULT_FILE_PATH })
    case 'redis': {
      const target = redisTargetFromEnv(env, DEFAULT_REDIS_URL, configError)
      return redisStore({
        ...targetOptions(target),
        prefix: nonEmpty(env.CTL_REDIS_PREFIX) ?? 'switchyard:',
      })
    }
    case 'postgres': {
      const url = nonEmpty(env.CTL_POSTGRES_URL) ?? DEFAULT_POSTGRES_URL
      checkPostgresUrl(url, 'CTL_POSTGRES_URL')
      const tablePrefix = nonEmpty(env.CTL_POSTGRES_TABLE_PREFIX) ?? 'switchyard_'
      checkTablePrefix(tablePrefix, 'CTL_POSTGRES_TABLE_PREFIX')
      return postgresStore({ url, tablePrefix })
    }
    default:
      throw new ConfigError(
        `Unknown backend ${JSON.stringify(backend)} (CTL_BACKEND): expected one of ${BACKENDS.join(', ')}.`,
      )
  }
}

function nonEmpty(value: string | undefined): string | undefined {
  const trimmed = value?.trim()
  return trimmed === undefined || trimmed === '' ? undefined : trimmed
}

export { memoryStore, fileStore, redisStore, postgresStore }
export type { FileStoreOptions, RedisStoreOptions, PostgresStoreOptions }
export type {
  Store,
  RouteStateStore,
  MaintenanceStore,
  AuditStore,
  AuditQuery,
  TokenStore,
  TokenRecord,
  EvaluationKeyStore,
  EvaluationKeyRecord,
  ApiTokenStore,
  ApiTokenRecord,
  ClaimStore,
  ChangeFeedPort,
  StoreSnapshot,
  StoreBackend,
  FileSections,
  RedisHandle,
  PostgresHandle,
} from './types.js'
