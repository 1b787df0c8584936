/**
 * `fastify-switchyard`: the engine, its models, stores and errors.
 */
export { createEngine } from './create-engine.js'
export { Engine, type EngineOptions, type EngineLogger } from './core/engine.js'
export type { Logger, LogMethod, LoggerLike } from './common/logger.js'
export type { MaintenanceHandle, MaintenanceScopes } from './core/maintenance-scopes.js'
export { systemClock, ManualClock, type Clock } from './core/clock.js'
export {
  SwitchyardError,
  ValidationError,
  RouteNotFoundError,
  RouteProtectedError,
  ConcurrentWriteError,
  ConfigError,
} from './core/errors.js'
export * from './admin/error-classes.js'
export {
  BadRequestError,
  BodyTooLargeError,
  CrossOriginRequestError,
  MisdirectedRequestError,
  UnsupportedMediaTypeError,
} from './common/request-errors.js'
export { ForbiddenError, ROLES, type Role } from './common/roles.js'
export {
  SdkConnectionError,
  SdkProtocolError,
  SdkReadOnlyError,
  SdkWriteError,
} from './sdk/errors.js'
export { errorCatalogue } from './error-catalogue.js'
export {
  parseRouteKey,
  formatRouteKey,
  RouteMatcher,
  HTTP_METHODS,
  type HttpMethod,
  type RouteKey,
} from './core/route-key.js'
export {
  ROUTE_STATUSES,
  effectiveStatus,
  type RouteState,
  type RouteStatus,
  type RouteDeclaration,
  type MaintenanceWindow,
} from './core/route-state.js'
export { MAINTENANCE_OFF, type MaintenanceConfig } from './core/maintenance.js'
export { PASS, NOT_FOUND, type Decision, type Header, type ErrorBody } from './core/decision.js'
export {
  NO_RATE_LIMITS,
  type RateLimitGate,
  type RequestView,
  type RequestState,
} from './core/enforcement.js'
export type { ChangeEvent, ChangeEventType } from './core/events.js'
export type { Operation, ActorOptions } from './core/operations.js'
export type { Page, PageOptions } from './core/pagination.js'
export type {
  RouteChangeOptions,
  DisableOptions,
  MaintenanceOptions,
  ScheduleOptions,
  ListRoutesOptions,
} from './core/route-operations.js'
export type { EnableMaintenanceOptions } from './core/maintenance-operations.js'
export { RouteSlot } from './core/route-slot.js'
export {
  createStore,
  memoryStore,
  fileStore,
  redisStore,
  postgresStore,
  BACKENDS,
  type BackendName,
  type FileStoreOptions,
  type RedisStoreOptions,
  type PostgresStoreOptions,
} from './stores/index.js'
export type * from './stores/types.js'
export type { AuditEntry, AuditFilter } from './core/audit-entry.js'
export { DEFAULT_MAX_AUDIT_ENTRIES, type AuditLogQuery } from './core/audit-log.js'
export {
  chatFormatter,
  signBody,
  SIGNATURE_HEADER,
  TIMESTAMP_HEADER,
  type WebhookOptions,
  type WebhookPayload,
  type WebhookFormatter,
} from './core/webhooks.js'
export { toIso, parseDateTime } from './core/time.js'
export * from './flags/index.js'
export { fileFlagStore, FLAG_SECTIONS } from './flags/stores/file.js'
export {
  redisFlagStore,
  type RedisFlagStore,
  type RedisFlagStoreOptions,
  type ManagedFlagStore,
} from './flags/stores/redis.js'
export { flagStoreFor, type FlagStoreForOptions } from './flags/stores/index.js'
export type {
  SwitchyardProvider,
  SwitchyardProviderOptions,
  UseOpenFeatureOptions,
} from './flags/openfeature.js'
export type { ScheduledJob } from './core/scheduler.js'
export {
  flagScheduleJob,
  FLAG_SCHEDULE_SLOT_MS,
  type FlagScheduleDeps,
} from './flags/schedule-job.js'
export * from './rate-limit/index.js'
