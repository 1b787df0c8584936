/**
 * `engine.maintenance`: the same five operations at two scopes, the whole deployment
 * (`engine.maintenance.global`) and one service (`engine.maintenance.service('payments')`).
 */
import { ValidationError } from './errors.js'
import type { MaintenanceConfig } from './maintenance.js'
import type {
  EnableMaintenanceOptions,
  MaintenanceOperations,
  MaintenanceScope,
} from './maintenance-operations.js'
import type { ActorOptions } from './operations.js'
import { checkService } from './route-operations.js'

/** The maintenance operations of one scope. */
export interface MaintenanceHandle {
  /** The configuration in force. */
  get(): MaintenanceConfig
  /** Turns maintenance on (replaces the reason, exemptions and `includeForceActive`). */
  enable(options?: EnableMaintenanceOptions): Promise<MaintenanceConfig>
  /** Turns maintenance off; the exemptions are kept. */
  disable(options?: ActorOptions): Promise<MaintenanceConfig>
  /** Adds an exemption (`/path` or `METHOD:/path`) without toggling maintenance. */
  addExemption(path: string, options?: ActorOptions): Promise<MaintenanceConfig>
  /** Removes an exemption without toggling maintenance. */
  removeExemption(path: string, options?: ActorOptions): Promise<MaintenanceConfig>
}

/** Global and per-service maintenance of one engine. */
export class MaintenanceScopes {
  /** Maintenance of every route of every service. */
  readonly global: MaintenanceHandle

  constructor(private readonly operations: MaintenanceOperations) {
    this.global = this.handle({ kind: 'global' })
  }

  /**
   * Maintenance of one service's routes; routes of other services are untouched. Throws
   * {@link ValidationError} for a missing or invalid service name.
   */
  service(name: string): MaintenanceHandle {
    const service = checkService(name)
    if (service === undefined)
      throw new ValidationError('A service name is required.', {
        details: [{ field: 'service', message: 'required' }],
      })
    return this.handle({ kind: 'service', service })
  }

  private handle(scope: MaintenanceScope): MaintenanceHandle {
    const operations = this.operations
    return {
      get: () => operations.get(scope),
      enable: (options) => operations.enable(scope, options),
      disable: (options) => operations.disable(scope, options),
      addExemption: (path, options) => operations.addExemption(scope, path, options),
      removeExemption: (path, options) => operations.removeExemption(scope, path, options),
    }
  }
}
