/**
 * How an engine's parts are wired together: the route registry and the replica, the audit log
 * and its webhooks, the features (flags, rate limiting) on a shared host, the enforcement
 * pipeline, the route and maintenance operations, the transition scheduler and the replica's
 * sync with the store. The engine (`engine.ts`) holds the result and owns the lifecycle; this
 * module only builds, so the wiring reads in one place, in dependency order.
 */
import type { BackoffSettings } from '../common/backoff.js'
import type { Logger } from '../common/logger.js'
import type { FlagsFeature } from '../flags/feature.js'
import type { Store } from '../stores/types.js'
import { AuditLog, DEFAULT_MAX_AUDIT_ENTRIES } from './audit-log.js'
import type { Clock } from './clock.js'
import { Enforcer } from './enforcement.js'
import { seconds, type EngineOptions, type EngineParts } from './engine-options.js'
import type { EngineFeature, FeatureHost } from './feature.js'
import { maintenanceExpiryJob } from './maintenance-expiry.js'
import { MaintenanceOperations } from './maintenance-operations.js'
import { MaintenanceScopes } from './maintenance-scopes.js'
import type { Operation } from './operations.js'
import { RouteRegistry } from './registry.js'
import { Replica, ReplicaSync } from './replica.js'
import { RouteOperations } from './route-operations.js'
import { TransitionScheduler } from './scheduler.js'
import { WebhookDispatcher } from './webhooks.js'
import type { RateLimitService } from '../rate-limit/service.js'
import type { RateLimitFeature } from '../rate-limit/feature.js'

/** What the engine itself is to its parts: where operations are reported and who loads. */
export interface KernelOwner {
  readonly env: string
  readonly service: string
  readonly clock: Clock
  readonly logger: Logger
  /** Every change made through an operation: listeners, audit log, webhooks. */
  report(operation: Operation): void
  /** After every load of the replica: load the features. */
  loadFeatures(): void
}

/** The wired parts of one engine. */
export interface EngineKernel {
  readonly store: Store
  readonly registry: RouteRegistry
  readonly replica: Replica
  readonly audit: AuditLog
  readonly webhooks: WebhookDispatcher
  readonly flagsFeature: FlagsFeature
  readonly rateLimitsFeature: RateLimitFeature
  readonly rateLimits: RateLimitService
  /** Every feature, in load order (closed in reverse). */
  readonly features: readonly EngineFeature[]
  readonly enforcer: Enforcer
  readonly routes: RouteOperations
  readonly maintenance: MaintenanceScopes
  readonly scheduler: TransitionScheduler
  readonly sync: ReplicaSync
}

/** Builds and wires the parts of an engine for `owner`. */
export function buildKernel(
  owner: KernelOwner,
  options: EngineOptions,
  parts: EngineParts,
): EngineKernel {
  const { clock, logger } = owner
  const { store } = parts
  const report = (operation: Operation) => owner.report(operation)
  const registry = new RouteRegistry(owner.env)
  const replica = new Replica(registry)
  const audit = new AuditLog({
    store: store.audit,
    clock,
    maxEntries: options.maxAuditEntries ?? DEFAULT_MAX_AUDIT_ENTRIES,
    logger,
  })
  const webhooks = new WebhookDispatcher(logger)
  audit.onEntry((entry) => webhooks.dispatch(entry))
  const backoff: BackoffSettings = {
    firstMs: seconds(options.retryInterval, 2, 'retryInterval'),
    maxMs: seconds(options.maxRetryInterval, 30, 'maxRetryInterval'),
  }
  // The scheduler needs the features' jobs, and the features a way to wake it (called only
  // once a change is made, after the scheduler below exists).
  const host: FeatureHost = {
    store,
    clock,
    logger,
    registry,
    service: owner.service,
    backoff,
    report,
    wake: () => scheduler.wake(),
  }
  const flagsFeature = parts.flags(host)
  const rateLimits = parts.rateLimits(host, options.rateLimit)
  const features: EngineFeature[] = [flagsFeature, rateLimits]
  const maintenanceOperations = new MaintenanceOperations({
    replica,
    store: store.maintenance,
    clock,
    report,
    wake: () => scheduler.wake(),
  })
  const scheduler = new TransitionScheduler({
    replica,
    routes: store.routes,
    claims: store.claims,
    clock,
    report,
    logger,
    jobs: [
      maintenanceExpiryJob({ replica, operations: maintenanceOperations, claims: store.claims }),
      ...features.flatMap((feature) => feature.jobs),
    ],
  })
  return {
    store,
    registry,
    replica,
    audit,
    webhooks,
    flagsFeature,
    rateLimitsFeature: rateLimits,
    rateLimits: rateLimits.service,
    features,
    enforcer: new Enforcer(replica, clock, rateLimits.service.gate),
    routes: new RouteOperations({
      registry,
      replica,
      store: store.routes,
      clock,
      defaultService: owner.service,
      report,
    }),
    maintenance: new MaintenanceScopes(maintenanceOperations),
    scheduler,
    sync: new ReplicaSync({
      replica,
      store,
      logger,
      backoff,
      onLoaded: () => {
        owner.loadFeatures()
        if (parts.runsSchedules !== false) scheduler.start()
      },
      onFailed: (error, fatal) => {
        for (const feature of features) feature.storeUnavailable?.(error, fatal)
      },
      onEvent: (event) => {
        // A new route deadline or maintenance end time may be due before the planned check.
        if (event.type !== 'audit') scheduler.wake()
      },
    }),
  }
}
