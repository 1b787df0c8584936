/**
 * `switchyard`: the engine, its models, stores and errors.
 */
export { createEngine, Engine, type EngineOptions, type EngineLogger } from './core/engine.js'
export { systemClock, type Clock } from './core/clock.js'
export {
  SwitchyardError,
  ValidationError,
  RouteNotFoundError,
  RouteProtectedError,
  ConfigError,
  errorCatalogue,
} from './core/errors.js'
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
export { createStore, memoryStore, BACKENDS, type Store } from './stores/index.js'
export { toIso, parseDateTime } from './core/time.js'
