/**
 * Rate-limit change events (SSE types of docs/reference/admin-rest.md). The service applies its own writes
 * at once; events from other instances (the store's change feed) go through
 * `RateLimitService.apply`.
 */
import type { RateLimitPolicy, ScopeRateLimitPolicy } from './policy.js'

/** A change of a rate-limit policy; `policy: null` means removed. */
export type RateLimitChangeEvent =
  | { type: 'rl_policy'; service: string; route: string; policy: RateLimitPolicy | null }
  | { type: 'global_rl_policy'; policy: ScopeRateLimitPolicy | null }
  | { type: 'service_rl_policy'; service: string; policy: ScopeRateLimitPolicy | null }
