/**
 * The engine's operations under their flat names: the route-state operations, and the
 * maintenance, rate-limit and flag operations by the names applications, the admin API and
 * `ctl` know (`enableGlobalMaintenance`, `setGlobalRateLimit`, `saveFlag`, …). Each is one line
 * that hands the call to the module owning it — `engine.maintenance.global` /
 * `.service(name)`, `engine.rateLimits` (with its `.global` / `.service(name)` handles) and
 * `engine.flags` — so there is one implementation and one way in, with the flat names as
 * aliases.
 */
import type { Flag, Segment } from '../flags/model.js'
import type { FlagService, FlagWriteOptions } from '../flags/service.js'
import type { HitQuery, RateLimitHit } from '../rate-limit/exceeded.js'
import type {
  RateLimitPolicy,
  ScopePolicyOptions,
  ScopeRateLimitPolicy,
} from '../rate-limit/policy.js'
import type {
  RateLimitService,
  RouteAddressOptions,
  SetRateLimitPolicyInput,
} from '../rate-limit/service.js'
import type { MaintenanceConfig } from './maintenance.js'
import type { EnableMaintenanceOptions } from './maintenance-operations.js'
import type { MaintenanceScopes } from './maintenance-scopes.js'
import type { ActorOptions } from './operations.js'
import type { Page } from './pagination.js'
import type {
  DisableOptions,
  ListRoutesOptions,
  MaintenanceOptions,
  RouteChangeOptions,
  RouteOperations,
  ScheduleOptions,
} from './route-operations.js'
import type { RouteState } from './route-state.js'

/** Runs `call`, turning a synchronous throw (a bad service name) into a rejection. */
function later<T>(call: () => Promise<T>): Promise<T> {
  try {
    return call()
  } catch (error) {
    return Promise.reject(error instanceof Error ? error : new Error(String(error)))
  }
}

/** The flat operations of the engine; see {@link Engine}. */
export abstract class EngineOperations {
  protected abstract readonly routes: RouteOperations
  /** Global (`.global`) and per-service (`.service(name)`) maintenance. */
  abstract readonly maintenance: MaintenanceScopes
  /** Rate limiting: route policies, `.global` and `.service(name)` policies, blocked requests. */
  abstract readonly rateLimits: RateLimitService
  /** Feature flags and segments (`flags.sync` is the synchronous client). */
  abstract readonly flags: FlagService

  // ---- route states ---------------------------------------------------------------------

  /** Makes a route ACTIVE. */
  enable(route: string, options?: RouteChangeOptions): Promise<RouteState[]> {
    return this.routes.enable(route, options)
  }
  /** Disables a route, optionally `until` a deadline. */
  disable(route: string, options?: DisableOptions): Promise<RouteState[]> {
    return this.routes.disable(route, options)
  }
  /** Puts a route in maintenance, optionally within a `start`–`end` window. */
  setMaintenance(route: string, options?: MaintenanceOptions): Promise<RouteState[]> {
    return this.routes.setMaintenance(route, options)
  }
  /** Schedules a future maintenance window; the route stays ACTIVE until it starts. */
  schedule(route: string, options: ScheduleOptions): Promise<RouteState[]> {
    return this.routes.schedule(route, options)
  }
  /** Cancels a scheduled (or running) maintenance window. */
  cancelSchedule(route: string, options?: RouteChangeOptions): Promise<RouteState[]> {
    return this.routes.cancelSchedule(route, options)
  }
  /** The current states of a route key (one per method). */
  getState(route: string, options?: { service?: string }): RouteState[] {
    return this.routes.getState(route, options)
  }
  /** One page of registered routes. */
  listRoutes(options?: ListRoutesOptions): Page<RouteState> {
    return this.routes.listRoutes(options)
  }

  // ---- maintenance: `maintenance.global` and `maintenance.service(name)` -------------------

  /** The global maintenance configuration. */
  getGlobalMaintenance(): MaintenanceConfig {
    return this.maintenance.global.get()
  }
  /** Turns global maintenance on. */
  enableGlobalMaintenance(options?: EnableMaintenanceOptions): Promise<MaintenanceConfig> {
    return this.maintenance.global.enable(options)
  }
  /** Turns global maintenance off; every route resumes its own state. */
  disableGlobalMaintenance(options?: ActorOptions): Promise<MaintenanceConfig> {
    return this.maintenance.global.disable(options)
  }
  /** Adds a global exemption (`/path` or `METHOD:/path`) without toggling maintenance. */
  addGlobalExemption(path: string, options?: ActorOptions): Promise<MaintenanceConfig> {
    return this.maintenance.global.addExemption(path, options)
  }
  /** Removes a global exemption without toggling maintenance. */
  removeGlobalExemption(path: string, options?: ActorOptions): Promise<MaintenanceConfig> {
    return this.maintenance.global.removeExemption(path, options)
  }
  /** One service's maintenance configuration. */
  getServiceMaintenance(service: string): MaintenanceConfig {
    return this.maintenance.service(service).get()
  }
  /** Turns maintenance on for one service; routes of other services are untouched. */
  enableServiceMaintenance(
    service: string,
    options?: EnableMaintenanceOptions,
  ): Promise<MaintenanceConfig> {
    return later(() => this.maintenance.service(service).enable(options))
  }
  /** Turns one service's maintenance off. */
  disableServiceMaintenance(service: string, options?: ActorOptions): Promise<MaintenanceConfig> {
    return later(() => this.maintenance.service(service).disable(options))
  }
  /** Adds an exemption to one service's maintenance. */
  addServiceExemption(
    service: string,
    path: string,
    options?: ActorOptions,
  ): Promise<MaintenanceConfig> {
    return later(() => this.maintenance.service(service).addExemption(path, options))
  }
  /** Removes an exemption from one service's maintenance. */
  removeServiceExemption(
    service: string,
    path: string,
    options?: ActorOptions,
  ): Promise<MaintenanceConfig> {
    return later(() => this.maintenance.service(service).removeExemption(path, options))
  }

  // ---- rate limits: `rateLimits`, `rateLimits.global`, `rateLimits.service(name)` ----------

  /** Creates or replaces the runtime policy of a registered route (audit `rl_policy_set`/`_updated`). */
  setRateLimitPolicy(input: SetRateLimitPolicyInput): Promise<RateLimitPolicy> {
    return this.rateLimits.setRateLimitPolicy(input)
  }
  /** Removes a route's runtime override(s); a decorator policy applies again. */
  deleteRateLimitPolicy(route: string, options?: RouteAddressOptions): Promise<number> {
    return this.rateLimits.deleteRateLimitPolicy(route, options)
  }
  /** Clears a route's counters (every method for a bare path). */
  resetRateLimit(path: string, options?: RouteAddressOptions & { method?: string }): Promise<void> {
    return this.rateLimits.resetRateLimit(path, options)
  }
  /** Blocked-request records, newest first. */
  getRateLimitHits(options?: HitQuery): Promise<RateLimitHit[]> {
    return this.rateLimits.getRateLimitHits(options)
  }
  /** Every route policy in force (override or decorator). */
  listRateLimitPolicies(options?: { service?: string }): RateLimitPolicy[] {
    return this.rateLimits.listRateLimitPolicies(options)
  }
  /** Creates or replaces the global policy. */
  setGlobalRateLimit(options: ScopePolicyOptions & ActorOptions): Promise<ScopeRateLimitPolicy> {
    return this.rateLimits.global.set(options)
  }
  /** The global policy, or null. */
  getGlobalRateLimit(): ScopeRateLimitPolicy | null {
    return this.rateLimits.global.get()
  }
  /** Removes the global policy. */
  deleteGlobalRateLimit(options?: ActorOptions): Promise<boolean> {
    return this.rateLimits.global.delete(options)
  }
  /** Clears the global policy's counters. */
  resetGlobalRateLimit(options?: ActorOptions): Promise<void> {
    return this.rateLimits.global.reset(options)
  }
  /** Resumes a paused global policy. */
  enableGlobalRateLimit(options?: ActorOptions): Promise<ScopeRateLimitPolicy | null> {
    return this.rateLimits.global.enable(options)
  }
  /** Pauses the global policy (kept, not enforced). */
  disableGlobalRateLimit(options?: ActorOptions): Promise<ScopeRateLimitPolicy | null> {
    return this.rateLimits.global.disable(options)
  }
  /** Creates or replaces one service's policy. */
  setServiceRateLimit(
    service: string,
    options: ScopePolicyOptions & ActorOptions,
  ): Promise<ScopeRateLimitPolicy> {
    return later(() => this.rateLimits.service(service).set(options))
  }
  /** One service's policy, or null. */
  getServiceRateLimit(service: string): ScopeRateLimitPolicy | null {
    return this.rateLimits.service(service).get()
  }
  /** Removes one service's policy. */
  deleteServiceRateLimit(service: string, options?: ActorOptions): Promise<boolean> {
    return later(() => this.rateLimits.service(service).delete(options))
  }
  /** Clears one service's counters. */
  resetServiceRateLimit(service: string, options?: ActorOptions): Promise<void> {
    return later(() => this.rateLimits.service(service).reset(options))
  }
  /** Resumes one service's paused policy. */
  enableServiceRateLimit(
    service: string,
    options?: ActorOptions,
  ): Promise<ScopeRateLimitPolicy | null> {
    return later(() => this.rateLimits.service(service).enable(options))
  }
  /** Pauses one service's policy. */
  disableServiceRateLimit(
    service: string,
    options?: ActorOptions,
  ): Promise<ScopeRateLimitPolicy | null> {
    return later(() => this.rateLimits.service(service).disable(options))
  }

  // ---- feature flags: `flags` --------------------------------------------------------------

  /** Creates or replaces a flag; see {@link FlagService.saveFlag}. */
  saveFlag(flag: unknown, options?: FlagWriteOptions): Promise<Flag> {
    return this.flags.saveFlag(flag, options)
  }
  /** The flag, or null. */
  getFlag(key: string): Promise<Flag | null> {
    return this.flags.getFlag(key)
  }
  /** Every flag, sorted by key. */
  listFlags(): Promise<Flag[]> {
    return this.flags.listFlags()
  }
  /** Deletes a flag; refused while another flag requires it. */
  deleteFlag(key: string, options?: FlagWriteOptions): Promise<void> {
    return this.flags.deleteFlag(key, options)
  }
  /** Creates or replaces a segment. */
  saveSegment(segment: unknown, options?: FlagWriteOptions): Promise<Segment> {
    return this.flags.saveSegment(segment, options)
  }
  /** The segment, or null. */
  getSegment(key: string): Promise<Segment | null> {
    return this.flags.getSegment(key)
  }
  /** Every segment, sorted by key. */
  listSegments(): Promise<Segment[]> {
    return this.flags.listSegments()
  }
  /** Deletes a segment; refused while a flag's rules use it. */
  deleteSegment(key: string, options?: FlagWriteOptions): Promise<void> {
    return this.flags.deleteSegment(key, options)
  }
}
