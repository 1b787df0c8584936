/**
 * Rate limiting: limit strings, algorithms, key strategies, policies, counters and the
 * service that holds them. Framework-free; the Fastify decorator lives in `fastify-switchyard/fastify`.
 */
export { parseLimit, parseTierLimit, LIMIT_FORM, UNLIMITED, type Limit } from './limit.js'
export {
  ALGORITHMS,
  step,
  effectiveLimit,
  parseAlgorithm,
  type Algorithm,
  type CounterRule,
  type CounterState,
  type CounterOutcome,
} from './algorithms.js'
export {
  KEY_STRATEGIES,
  MISSING_KEY_BEHAVIOURS,
  type KeyStrategy,
  type KeyFunction,
  type MissingKeyBehaviour,
} from './keys.js'
export { ClientIpResolver, AddressSet, DEFAULT_TRUSTED_PROXIES } from './client-ip.js'
export {
  buildRoutePolicy,
  buildScopePolicy,
  type RateLimitPolicy,
  type ScopeRateLimitPolicy,
  type RateLimitTier,
  type RoutePolicyOptions,
  type ScopePolicyOptions,
} from './policy.js'
export {
  RateLimitExceededError,
  isRateLimitBlock,
  type RateLimitBlockDecision,
  type RateLimitHit,
} from './exceeded.js'
export type { CounterStore, CounterCheck } from './counters/types.js'
export {
  memoryCounters,
  type MemoryCounters,
  type MemoryCounterOptions,
} from './counters/memory.js'
export type { RateLimitPolicyStore, RateLimitHitStore } from './ports.js'
export { memoryPolicyStore, memoryHitStore } from './stores/memory.js'
export { filePolicyStore, fileHitStore, RATE_LIMIT_SECTIONS } from './stores/file.js'
export {
  redisPolicyStore,
  redisHitStore,
  type SharedPolicyStore,
  type RedisPolicyStoreOptions,
} from './stores/redis.js'
export {
  rateLimitStoresFor,
  type RateLimitStores,
  type RateLimitStoresForOptions,
} from './stores/index.js'
export type { RateLimitChangeEvent } from './events.js'
export {
  RateLimitService,
  type RateLimitServiceOptions,
  type RateLimitBackend,
  type RateLimitStreamEvent,
  type SetRateLimitPolicyInput,
  type RouteAddressOptions,
} from './service.js'
export type { RateLimitCheckInput, RateLimitCheckResult } from './check.js'
export type { RateLimitScopeHandle } from './scope-operations.js'
export type { RateLimitingOptions } from './options.js'
export type { RateLimitHeaderMode } from './evaluate.js'
export {
  redisCounters,
  type RedisCounters,
  DEFAULT_REDIS_COMMAND_TIMEOUT,
  type RedisCounterClient,
  type RedisCounterOptions,
} from './counters/redis.js'
export {
  snapshotCounters,
  type SnapshotCounters,
  type SnapshotCounterOptions,
} from './counters/file.js'
