/**
 * Global maintenance (`/api/global-maintenance`) and per-service maintenance
 * (`/api/services/{service}/maintenance`), plus the service list. Both scopes have the same
 * five endpoints, built once over the scope handles `engine.maintenance.global` and
 * `engine.maintenance.service(name)` so that they cannot drift apart.
 */
import type { FastifyRequest } from 'fastify'
import { ValidationError } from '../../core/errors.js'
import type { MaintenanceConfig } from '../../core/maintenance.js'
import type { MaintenanceHandle } from '../../core/maintenance-scopes.js'
import { parseDuration } from '../../core/time.js'
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

/** The maintenance operations of a scope, by the service a request addresses (null: global). */
type ScopeOf = (service: string | null) => MaintenanceHandle

const errors = { 400: ErrorBody, 401: ErrorBody }

/** Registers the maintenance endpoints of both scopes and `GET /api/services`. */
export function maintenanceRoutes(app: AdminInstance, { engine }: AdminContext): void {
  const scopes = globalAndServiceScopes<ScopeOf>(
    {
      base: '/api/global-maintenance',
      tag: 'global maintenance',
      ops: () => engine.maintenance.global,
    },
    {
      base: '/api/services/:service/maintenance',
      tag: 'service maintenance',
      ops: (service) => engine.maintenance.service(service ?? ''),
    },
  )
  for (const { base, tag, ops, params, serviceOf } of scopes) {
    const handle = (request: FastifyRequest) => ops(serviceOf(request))
    // A service token may reach only its own service's scope (service-scope.ts).
    const config = { ...ADMIN_ROUTE, serviceScope: serviceOf }
    app.get(
      base,
      {
        config,
        schema: {
          summary: 'The maintenance configuration',
          tags: [tag],
          ...params,
          response: { 200: MaintenanceConfigSchema, ...errors },
        },
      },
      (request) => answer(handle(request).get()),
    )

    app.post(
      `${base}/enable`,
      {
        config,
        schema: {
          summary: 'Turn maintenance on (replaces reason, exemptions and include_force_active)',
          tags: [tag],
          ...params,
          body: MaintenanceEnableBody,
          response: { 200: MaintenanceConfigSchema, ...errors },
        },
      },
      async (request) => {
        const body = request.body
        if (body.duration !== undefined && body.ends_at !== undefined && body.ends_at !== null) {
          throw new ValidationError('Give either ends_at or duration, not both.', {
            details: [{ field: 'duration', message: 'not allowed together with ends_at' }],
          })
        }
        const until =
          body.duration === undefined
            ? body.ends_at
            : new Date(engine.clock.now() + parseDuration(body.duration))
        return answer(
          await handle(request).enable({
            reason: body.reason,
            exemptPaths: body.exempt_paths,
            includeForceActive: body.include_force_active,
            until,
            ...actorOf(request),
          }),
        )
      },
    )

    app.post(
      `${base}/disable`,
      {
        config,
        schema: {
          summary: 'Turn maintenance off (exemptions are kept)',
          tags: [tag],
          ...params,
          body: EmptyBody,
          response: { 200: MaintenanceConfigSchema, ...errors },
        },
      },
      async (request) => answer(await handle(request).disable(actorOf(request))),
    )

    for (const [suffix, summary] of [
      ['exempt-add', 'Add an exempt path (never toggles active)'],
      ['exempt-remove', 'Remove an exempt path (never toggles active)'],
    ] as const) {
      app.post(
        `${base}/${suffix}`,
        {
          config,
          schema: {
            summary,
            tags: [tag],
            ...params,
            body: ExemptBody,
            response: { 200: MaintenanceConfigSchema, ...errors },
          },
        },
        async (request) =>
          answer(
            suffix === 'exempt-add'
              ? await handle(request).addExemption(request.body.path, actorOf(request))
              : await handle(request).removeExemption(request.body.path, actorOf(request)),
          ),
      )
    }
  }

  app.get(
    '/api/services',
    {
      config: ADMIN_ROUTE,
      schema: {
        summary:
          'Names of every service with routes (its own or an SDK app’s), a maintenance configuration or a rate-limit policy',
        tags: ['services'],
        response: { 200: ServiceList, 401: ErrorBody },
      },
    },
    () => engine.listServices(),
  )
}

/** A configuration as the API answers it: `ends_at` always present (null: no end time). */
function answer(config: MaintenanceConfig): MaintenanceConfig {
  return { ...config, ends_at: config.ends_at ?? null }
}
