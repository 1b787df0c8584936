/**
 * Global maintenance (`/api/global-maintenance`) and per-service maintenance
 * (`/api/services/{service}/maintenance`), plus the service list. Both scopes have the same
 * five endpoints, built from one table so that they cannot drift apart.
 */
import type { Engine } from '../../core/engine.js'
import type { MaintenanceConfig } from '../../core/maintenance.js'
import type { EnableMaintenanceOptions } from '../../core/maintenance-operations.js'
import type { ActorOptions } from '../../core/operations.js'
import { actorOf } from '../auth/guard.js'
import { ADMIN_ROUTE, type AdminContext, type AdminInstance } from '../context.js'
import { globalAndServiceScopes } from './scopes.js'
import {
  EmptyBody,
  ErrorBody,
  ExemptBody,
  MaintenanceConfigSchema,
  MaintenanceEnableBody,
  ServiceList,
} from '../schemas.js'

/** The engine operations of one maintenance scope; `scope` is the service, or null for global. */
interface ScopeOperations {
  get(service: string | null): MaintenanceConfig
  enable(service: string | null, options: EnableMaintenanceOptions): Promise<MaintenanceConfig>
  disable(service: string | null, options: ActorOptions): Promise<MaintenanceConfig>
  addExemption(
    service: string | null,
    path: string,
    options: ActorOptions,
  ): Promise<MaintenanceConfig>
  removeExemption(
    service: string | null,
    path: string,
    options: ActorOptions,
  ): Promise<MaintenanceConfig>
}

function globalOperations(engine: Engine): ScopeOperations {
  return {
    get: () => engine.getGlobalMaintenance(),
    enable: (_s, options) => engine.enableGlobalMaintenance(options),
    disable: (_s, options) => engine.disableGlobalMaintenance(options),
    addExemption: (_s, path, options) => engine.addGlobalExemption(path, options),
    removeExemption: (_s, path, options) => engine.removeGlobalExemption(path, options),
  }
}

function serviceOperations(engine: Engine): ScopeOperations {
  const name = (service: string | null) => service ?? ''
  return {
    get: (service) => engine.getServiceMaintenance(name(service)),
    enable: (service, options) => engine.enableServiceMaintenance(name(service), options),
    disable: (service, options) => engine.disableServiceMaintenance(name(service), options),
    addExemption: (service, path, options) =>
      engine.addServiceExemption(name(service), path, options),
    removeExemption: (service, path, options) =>
      engine.removeServiceExemption(name(service), path, options),
  }
}

const errors = { 400: ErrorBody, 401: ErrorBody }

/** Registers the maintenance endpoints of both scopes and `GET /api/services`. */
export function maintenanceRoutes(app: AdminInstance, { engine }: AdminContext): void {
  const scopes = globalAndServiceScopes(
    { base: '/api/global-maintenance', tag: 'global maintenance', ops: globalOperations(engine) },
    {
      base: '/api/services/:service/maintenance',
      tag: 'service maintenance',
      ops: serviceOperations(engine),
    },
  )
  for (const { base, tag, ops, params, serviceOf } of scopes) {
    app.get(
      base,
      {
        config: ADMIN_ROUTE,
        schema: {
          summary: 'The maintenance configuration',
          tags: [tag],
          ...params,
          response: { 200: MaintenanceConfigSchema, ...errors },
        },
      },
      (request) => ops.get(serviceOf(request)),
    )

    app.post(
      `${base}/enable`,
      {
        config: ADMIN_ROUTE,
        schema: {
          summary: 'Turn maintenance on (replaces reason, exemptions and include_force_active)',
          tags: [tag],
          ...params,
          body: MaintenanceEnableBody,
          response: { 200: MaintenanceConfigSchema, ...errors },
        },
      },
      (request) => {
        const body = request.body
        return ops.enable(serviceOf(request), {
          reason: body.reason,
          exemptPaths: body.exempt_paths,
          includeForceActive: body.include_force_active,
          ...actorOf(request),
        })
      },
    )

    app.post(
      `${base}/disable`,
      {
        config: ADMIN_ROUTE,
        schema: {
          summary: 'Turn maintenance off (exemptions are kept)',
          tags: [tag],
          ...params,
          body: EmptyBody,
          response: { 200: MaintenanceConfigSchema, ...errors },
        },
      },
      (request) => ops.disable(serviceOf(request), actorOf(request)),
    )

    for (const [suffix, summary] of [
      ['exempt-add', 'Add an exempt path (never toggles active)'],
      ['exempt-remove', 'Remove an exempt path (never toggles active)'],
    ] as const) {
      app.post(
        `${base}/${suffix}`,
        {
          config: ADMIN_ROUTE,
          schema: {
            summary,
            tags: [tag],
            ...params,
            body: ExemptBody,
            response: { 200: MaintenanceConfigSchema, ...errors },
          },
        },
        (request) =>
          suffix === 'exempt-add'
            ? ops.addExemption(serviceOf(request), request.body.path, actorOf(request))
            : ops.removeExemption(serviceOf(request), request.body.path, actorOf(request)),
      )
    }
  }

  app.get(
    '/api/services',
    {
      config: ADMIN_ROUTE,
      schema: {
        summary: 'Names of every service with routes or a maintenance configuration',
        tags: ['services'],
        response: { 200: ServiceList, 401: ErrorBody },
      },
    },
    () => engine.listServices(),
  )
}
