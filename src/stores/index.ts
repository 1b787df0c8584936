/**
 * Store selection by backend name (`CTL_BACKEND`): `memory` (default), `file`
 * (`CTL_FILE_PATH`) or `redis` (`CTL_REDIS_URL`, or `CTL_REDIS_CLUSTER_NODES`, or
 * `CTL_REDIS_SENTINELS` with `CTL_REDIS_SENTINEL_NAME`; `CTL_REDIS_PREFIX`). Drivers are loaded on
 * `connect()`, so that a user of the memory default installs nothing else.
 */
import { ConfigError } from '../core/errors.js'
import { DEFAULT_FILE_PATH, fileStore, type FileStoreOptions } from './file.js'
import { memoryStore } from './memory.js'
import { configError, DEFAULT_REDIS_URL, redisStore, type RedisStoreOptions } from './redis.js'
import { redisTargetFromEnv, targetOptions } from '../common/redis-target.js'
import type { Store } from './types.js'

/** Backend names accepted by `CTL_BACKEND`. */
export const BACKENDS = ['memory', 'file', 'redis'] as const

/** One of {@link BACKENDS}. */
export type BackendName = (typeof BACKENDS)[number]

/**
 * Creates the store for a backend name, configured from the environment (`CTL_FILE_PATH`,
 * `CTL_REDIS_URL`, `CTL_REDIS_PREFIX`); an unknown name is a {@link ConfigError}, never a
 * silent fallback.
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

export { memoryStore, fileStore, redisStore }
export type { FileStoreOptions, RedisStoreOptions }
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
} from './types.js'
