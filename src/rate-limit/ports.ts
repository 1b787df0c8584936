/**
 * Persistence ports of rate limiting. Each backend implements them in `stores/` (memory, file,
 * Redis); these interfaces are the whole contract, checked by one conformance suite.
 */
import type { HitQuery, RateLimitHit } from './exceeded.js'
import type { RateLimitPolicy, ScopeRateLimitPolicy } from './policy.js'

/** Runtime rate-limit policies: route overrides, the global policy, per-service policies. */
export interface RateLimitPolicyStore {
  /** Every stored route policy (runtime overrides; decorator policies are never stored). */
  listRoutePolicies(): Promise<RateLimitPolicy[]>
  /** Creates or replaces the override of `policy.service` + `METHOD:path`. */
  putRoutePolicy(policy: RateLimitPolicy): Promise<void>
  /** Removes one override; resolves true when one existed. */
  deleteRoutePolicy(service: string, route: string): Promise<boolean>
  /** The global policy, or null. */
  getGlobal(): Promise<ScopeRateLimitPolicy | null>
  /** Replaces (null removes) the global policy. */
  putGlobal(policy: ScopeRateLimitPolicy | null): Promise<void>
  /** Every per-service policy by service name. */
  listServices(): Promise<Map<string, ScopeRateLimitPolicy>>
  /** Replaces (null removes) one service's policy. */
  putService(service: string, policy: ScopeRateLimitPolicy | null): Promise<void>
  /**
   * True when another process owns the policies and sends every write back as a change event
   * (an SDK app's store forwards to its server): the service then neither applies its own
   * writes nor audits them, so the live copy only ever holds the owner's policies and each
   * change is audited once, by the owner.
   */
  readonly appliedByFeed?: boolean
}

/** The blocked-request log: newest first, capped (oldest evicted first). */
export interface RateLimitHitStore {
  /** Appends one record, evicting the oldest beyond the cap. */
  add(record: RateLimitHit): Promise<void>
  /** Records newest first, optionally only those of one route path and/or service, at most `limit`. */
  list(options?: HitQuery): Promise<RateLimitHit[]>
}
