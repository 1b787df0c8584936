/**
 * The global and per-service rate-limit operations: set (replace), get,
 * delete, reset (counters only), enable and disable (pause without forgetting the policy).
 * Audit labels: `[Global Rate Limit]`, `[<service> Rate Limit]`; actions `global_rl_*` and
 * `svc_rl_*`.
 */
import type { RateLimitChangeEvent } from './events.js'
import type { ActorOptions, Operation } from '../core/operations.js'
import type { CounterStore } from './counters/types.js'
import type { PolicyGate } from './gate.js'
import {
  buildScopePolicy,
  compileScopePolicy,
  type ScopePolicyOptions,
  type ScopeRateLimitPolicy,
} from './policy.js'
import type { RateLimitPolicyStore } from './ports.js'
import { auditDiff, diffField } from '../core/audit-diff.js'

/** Which scope an operation addresses. */
export type RateLimitScope = { kind: 'global' } | { kind: 'service'; service: string }

/** What the scope operations need. */
export interface ScopeOperationDeps {
  gate: PolicyGate
  /** The counters and the policy store (resolved when first needed: both are chosen at startup). */
  counters(): CounterStore
  store(): RateLimitPolicyStore
  report(operation: Operation): void
  /** Told of every policy applied to the live copy (own writes, other instances', loads). */
  changed?(event: RateLimitChangeEvent): void
}

/** Global and per-service policies: the live copy and its operations. */
export class ScopeOperations {
  private globalPolicy: ScopeRateLimitPolicy | null = null
  private readonly services = new Map<string, ScopeRateLimitPolicy>()

  constructor(private readonly deps: ScopeOperationDeps) {}

  /** The policy of a scope, or null. */
  get(scope: RateLimitScope): ScopeRateLimitPolicy | null {
    const policy = scope.kind === 'global' ? this.globalPolicy : this.services.get(scope.service)
    return policy === undefined || policy === null ? null : structuredClone(policy)
  }

  /** Every per-service policy, by service. */
  listServices(): Map<string, ScopeRateLimitPolicy> {
    return new Map([...this.services].map(([k, v]) => [k, structuredClone(v)]))
  }

  /** Creates or replaces a scope's policy (enabled unless `enabled: false`). */
  async set(
    scope: RateLimitScope,
    options: ScopePolicyOptions & ActorOptions,
  ): Promise<ScopeRateLimitPolicy> {
    const policy = buildScopePolicy(options)
    const previous = this.get(scope)
    if (await this.write(scope, policy))
      this.report(scope, previous === null ? 'set' : 'updated', options, previous, policy)
    return structuredClone(policy)
  }

  /** Removes a scope's policy; resolves false (and records nothing) when there was none. */
  async delete(scope: RateLimitScope, options: ActorOptions = {}): Promise<boolean> {
    const previous = this.get(scope)
    if (previous === null) return false
    if (await this.write(scope, null)) this.report(scope, 'deleted', options, previous, null)
    return true
  }

  /** Clears the scope's counters; the policy is unchanged. */
  async reset(scope: RateLimitScope, options: ActorOptions = {}): Promise<void> {
    await this.deps.counters().reset(counterScope(scope))
    const policy = this.get(scope)
    this.report(scope, 'reset', options, policy, policy)
  }

  /** Pauses (`enabled` false) or resumes a policy; a no-op without a policy or without change. */
  async setEnabled(
    scope: RateLimitScope,
    enabled: boolean,
    options: ActorOptions = {},
  ): Promise<ScopeRateLimitPolicy | null> {
    const previous = this.get(scope)
    if (previous === null || previous.enabled === enabled) return previous
    const policy = { ...previous, enabled }
    if (await this.write(scope, policy))
      this.report(scope, enabled ? 'enabled' : 'disabled', options, previous, policy)
    return structuredClone(policy)
  }

  /** Replaces the live copy from the store. */
  async load(): Promise<void> {
    const [global, services] = await Promise.all([
      this.deps.store().getGlobal(),
      this.deps.store().listServices(),
    ])
    this.apply({ kind: 'global' }, global)
    for (const service of [...this.services.keys()])
      if (!services.has(service)) this.apply({ kind: 'service', service }, null)
    for (const [service, policy] of services) this.apply({ kind: 'service', service }, policy)
  }

  /** Applies a policy (from this instance or another) to the live copy and the gate. */
  apply(scope: RateLimitScope, policy: ScopeRateLimitPolicy | null): void {
    const compiled = policy === null ? null : compileScopePolicy(policy, scopeService(scope))
    if (scope.kind === 'global') {
      this.globalPolicy = policy
      this.deps.gate.setGlobal(compiled)
    } else {
      if (policy === null) this.services.delete(scope.service)
      else this.services.set(scope.service, policy)
      this.deps.gate.setService(scope.service, compiled)
    }
    this.deps.changed?.(
      scope.kind === 'global'
        ? { type: 'global_rl_policy', policy }
        : { type: 'service_rl_policy', service: scope.service, policy },
    )
  }

  /**
   * Stores a scope's policy and applies it here; resolves false when the store's owner applies
   * (and audits) it instead, through the change feed.
   */
  private async write(
    scope: RateLimitScope,
    policy: ScopeRateLimitPolicy | null,
  ): Promise<boolean> {
    const store = this.deps.store()
    if (scope.kind === 'global') await store.putGlobal(policy)
    else await store.putService(scope.service, policy)
    if (store.appliedByFeed === true) return false
    this.apply(scope, policy)
    return true
  }

  private report(
    scope: RateLimitScope,
    verb: string,
    options: ActorOptions,
    previous: ScopeRateLimitPolicy | null,
    next: ScopeRateLimitPolicy | null,
  ): void {
    const global = scope.kind === 'global'
    this.deps.report({
      action: `${global ? 'global_rl' : 'svc_rl'}_${verb}`,
      route: global ? '[Global Rate Limit]' : `[${scope.service} Rate Limit]`,
      service: global ? null : scope.service,
      actor: options.actor ?? 'system',
      platform: options.platform ?? '',
      reason: '',
      previous_status: describe(previous),
      new_status: describe(next),
      ...(previous === null || next === null ? {} : diffField(auditDiff(previous, next))),
    })
  }
}

/**
 * The operations of one rate-limit scope — `engine.rateLimits.global`, or
 * `engine.rateLimits.service(name)` — each audited as `global_rl_*` or `svc_rl_*`.
 */
export interface RateLimitScopeHandle {
  /** The policy, or null. */
  get(): ScopeRateLimitPolicy | null
  /** Creates or replaces the policy (enabled unless `enabled: false`). */
  set(options: ScopePolicyOptions & ActorOptions): Promise<ScopeRateLimitPolicy>
  /** Removes the policy; resolves false when there was none. */
  delete(options?: ActorOptions): Promise<boolean>
  /** Clears the scope's counters; the policy is kept. */
  reset(options?: ActorOptions): Promise<void>
  /** Resumes a paused policy (no-op without one). */
  enable(options?: ActorOptions): Promise<ScopeRateLimitPolicy | null>
  /** Pauses the policy: kept, neither counting nor blocking. */
  disable(options?: ActorOptions): Promise<ScopeRateLimitPolicy | null>
}

/** The handle of `scope` over `operations`. */
export function scopeHandle(
  operations: ScopeOperations,
  scope: RateLimitScope,
): RateLimitScopeHandle {
  return {
    get: () => operations.get(scope),
    set: (options) => operations.set(scope, options),
    delete: (options) => operations.delete(scope, options),
    reset: (options) => operations.reset(scope, options),
    enable: (options) => operations.setEnabled(scope, true, options),
    disable: (options) => operations.setEnabled(scope, false, options),
  }
}

/** The counter scope of a global or service policy. */
export function counterScope(scope: RateLimitScope): string {
  return scope.kind === 'global' ? 'global' : `service:${scope.service}`
}

function scopeService(scope: RateLimitScope): string | null {
  return scope.kind === 'global' ? null : scope.service
}

/** A policy as an audit status: its limit, and `(paused)` when disabled. */
function describe(policy: ScopeRateLimitPolicy | null): string | null {
  if (policy === null) return null
  return policy.enabled ? policy.limit : `${policy.limit} (paused)`
}
