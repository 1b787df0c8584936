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
import { ValidationError } from './errors.js'
import { compileMaintenance, type MaintenanceConfig } from './maintenance.js'
import type { ActorOptions, Operation } from './operations.js'
import type { Replica } from './replica.js'
import { checkReason, checkService } from './route-operations.js'
import { parseRouteKey } from './route-key.js'
import type { MaintenanceStore } from '../stores/types.js'
import { auditDiff, diffField } from './audit-diff.js'

/** Options of enabling maintenance. */
export interface EnableMaintenanceOptions extends ActorOptions {
  reason?: string
  /** Bare `/path` or `METHOD:/path` entries that stay served. */
  exemptPaths?: string[]
  /** Also block force-active routes (health and readiness probes). */
  includeForceActive?: boolean
}

/** What the maintenance operations need from the engine. */
export interface MaintenanceOperationDeps {
  replica: Replica
  store: MaintenanceStore
  report(operation: Operation): void
}

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
  enable(scope: Scope, options: EnableMaintenanceOptions = {}): Promise<MaintenanceConfig> {
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
    const config = {
      active: true,
      reason,
      include_force_active: options.includeForceActive ?? false,
      exempt_paths: exempt,
    }
    return this.write(scope, config, 'maintenance_on', options)
  }

  /** Turns maintenance off for a scope (the configured exemptions are kept). */
  disable(scope: Scope, options: ActorOptions = {}): Promise<MaintenanceConfig> {
    const current = this.get(scope)
    return this.write(scope, { ...current, active: false }, 'maintenance_off', options)
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
    return structuredClone(config)
  }
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
