/**
 * Global and per-service maintenance operations. Enabling replaces the reason, exemptions and
 * `include_force_active`; adding or removing an exemption never toggles `active`.
 *
 * Audit entries record the state before the change as it really was (`on → on` when enabling
 * with a new reason while already on), and a change that would leave the configuration exactly
 * as it is — disabling when off, enabling again with the same settings, adding an exemption
 * that is there, removing one that is not — stores nothing and writes no audit entry.
 */
import { isDeepStrictEqual } from 'node:util'
import { systemClock, type Clock } from './clock.js'
import { ValidationError } from './errors.js'
import { compileMaintenance, type MaintenanceConfig } from './maintenance.js'
import type { ActorOptions, Operation } from './operations.js'
import type { Replica } from './replica.js'
import { checkReason, checkService } from './route-operations.js'
import { parseRouteKey } from './route-key.js'
import { parseDateTime, toIso } from './time.js'
import type { MaintenanceStore } from '../stores/types.js'
import { auditDiff, diffField } from './audit-diff.js'

/** Options of enabling maintenance. */
export interface EnableMaintenanceOptions extends ActorOptions {
  reason?: string
  /** Bare `/path` or `METHOD:/path` entries that stay served. */
  exemptPaths?: string[]
  /** Also block force-active routes (health and readiness probes). */
  includeForceActive?: boolean
  /**
   * When maintenance ends by itself (a `Date` or an ISO 8601 string, in the future). Omitted or
   * null: it lasts until turned off.
   */
  until?: Date | string | null
}

/** What the maintenance operations need from the engine. */
export interface MaintenanceOperationDeps {
  replica: Replica
  store: MaintenanceStore
  /** Judges whether an end time is in the future (default: the system clock). */
  clock?: Clock
  report(operation: Operation): void
  /** Tells the scheduler that an end time may now be due sooner than it planned. */
  wake?: () => void
}

/** Platform of the audit entry written when maintenance reaches its end time. */
const SCHEDULER = 'scheduler'

type Scope = { kind: 'global' } | { kind: 'service'; service: string }

/** Global and per-service maintenance reads and writes. */
export class MaintenanceOperations {
  constructor(private readonly deps: MaintenanceOperationDeps) {}

  /** The configuration in force for a scope. */
  get(scope: Scope): MaintenanceConfig {
    const compiled =
      scope.kind === 'global'
        ? this.deps.replica.global
        : this.deps.replica.serviceMaintenance(scope.service)
    return structuredClone(compiled.config)
  }

  /** Turns maintenance on for a scope. */
  async enable(scope: Scope, options: EnableMaintenanceOptions = {}): Promise<MaintenanceConfig> {
    const reason = checkReason(options.reason)
    const exempt = checkExemptList(options.exemptPaths)
    if (
      options.includeForceActive !== undefined &&
      typeof options.includeForceActive !== 'boolean'
    ) {
      throw new ValidationError('includeForceActive must be a boolean.', {
        details: [{ field: 'include_force_active', message: 'expected a boolean' }],
      })
    }
    const endsAt = this.checkUntil(options.until)
    const config: MaintenanceConfig = {
      active: true,
      reason,
      include_force_active: options.includeForceActive ?? false,
      exempt_paths: exempt,
      // Stored only when given, so a configuration without an end reads as it always did.
      ...(endsAt === null ? {} : { ends_at: endsAt }),
    }
    return this.write(scope, config, 'maintenance_on', options)
  }

  /** Turns maintenance off for a scope (the configured exemptions are kept, the end time not). */
  disable(scope: Scope, options: ActorOptions = {}): Promise<MaintenanceConfig> {
    return this.write(scope, withoutEnd(this.get(scope)), 'maintenance_off', options)
  }

  /**
   * Turns maintenance off because its end time `endsAt` (ISO, as stored) was reached: audited
   * as a disable by `system` on platform `scheduler`. Does nothing (resolves false) when the
   * scope is no longer on with that end time (turned off or enabled again meanwhile).
   */
  async end(scope: Scope, endsAt: string): Promise<boolean> {
    const current = this.get(scope)
    if (!current.active || current.ends_at !== endsAt) return false
    await this.write(scope, withoutEnd(current), 'maintenance_off', {
      actor: 'system',
      platform: SCHEDULER,
    })
    return true
  }

  private checkUntil(until: unknown): string | null {
    if (until === undefined || until === null) return null
    if (!(until instanceof Date) && typeof until !== 'string') {
      throw new ValidationError('until must be a Date or an ISO 8601 datetime.', {
        details: [{ field: 'ends_at', message: 'expected an ISO 8601 datetime' }],
      })
    }
    const at = parseDateTime(until, 'ends_at')
    if (at <= (this.deps.clock ?? systemClock).now()) {
      throw new ValidationError(`The end time ${toIso(at)} is not in the future.`, {
        details: [{ field: 'ends_at', message: 'must be in the future' }],
      })
    }
    return toIso(at)
  }

  /** Adds one exemption; `active` is unchanged. */
  addExemption(scope: Scope, path: string, options: ActorOptions = {}): Promise<MaintenanceConfig> {
    const [entry] = checkExemptList([path])
    const current = this.get(scope)
    const exempt = current.exempt_paths.includes(entry as string)
      ? current.exempt_paths
      : [...current.exempt_paths, entry as string]
    return this.write(
      scope,
      { ...current, exempt_paths: exempt },
      'maintenance_exempt_add',
      options,
      entry,
    )
  }

  /** Removes one exemption; `active` is unchanged. Removing an absent entry changes nothing. */
  removeExemption(
    scope: Scope,
    path: string,
    options: ActorOptions = {},
  ): Promise<MaintenanceConfig> {
    const [entry] = checkExemptList([path])
    const current = this.get(scope)
    const exempt = current.exempt_paths.filter((existing) => existing !== entry)
    return this.write(
      scope,
      { ...current, exempt_paths: exempt },
      'maintenance_exempt_remove',
      options,
      entry,
    )
  }

  private async write(
    scope: Scope,
    config: MaintenanceConfig,
    action: string,
    options: ActorOptions,
    detail?: string,
  ): Promise<MaintenanceConfig> {
    const service = scope.kind === 'service' ? checkService(scope.service) : undefined
    compileMaintenance(config) // validates before anything is stored
    const current = this.get(scope)
    if (isDeepStrictEqual(current, config)) return current // a no-op: nothing stored or audited
    if (scope.kind === 'global') {
      await this.deps.store.putGlobal(config)
      this.deps.replica.apply({ type: 'global_maintenance', config })
    } else {
      await this.deps.store.putService(scope.service, config)
      this.deps.replica.apply({ type: 'service_maintenance', service: scope.service, config })
    }
    const prefix = scope.kind === 'global' ? 'global' : 'service'
    this.deps.report({
      action: `${prefix}_${action}`,
      route: scope.kind === 'global' ? '[Global Maintenance]' : `[${service ?? ''} Maintenance]`,
      service: service ?? null,
      actor: options.actor ?? 'system',
      platform: options.platform ?? '',
      reason: detail ?? config.reason,
      previous_status: current.active ? 'on' : 'off',
      new_status: config.active ? 'on' : 'off',
      ...diffField(auditDiff(current, config)),
    })
    if (config.active && typeof config.ends_at === 'string') this.deps.wake?.()
    return structuredClone(config)
  }
}

function withoutEnd(config: MaintenanceConfig): MaintenanceConfig {
  const { ends_at: _end, ...rest } = config
  return { ...rest, active: false }
}

function checkExemptList(paths: unknown): string[] {
  if (paths === undefined || paths === null) return []
  if (!Array.isArray(paths) || paths.some((path) => typeof path !== 'string')) {
    throw new ValidationError('Exempt paths must be a list of "/path" or "METHOD:/path" strings.', {
      details: [{ field: 'exempt_paths', message: 'expected a list of strings' }],
    })
  }
  return [
    ...new Set(
      (paths as string[]).map((path) => {
        const key = parseRouteKey(path)
        return key.method === null ? key.path : `${key.method}:${key.path}`
      }),
    ),
  ]
}

export type { Scope as MaintenanceScope }
