/**
 * Resources the admin API addresses at two scopes — the whole deployment, and one service by
 * its `:service` path parameter — with the same endpoints under both bases (maintenance,
 * global and service rate limits).
 */
import type { FastifyRequest } from 'fastify'
import { ServiceParams } from '../schemas.js'

/** One scope's routes: where they live, how they are tagged, what they operate on. */
export interface ScopeRoutes<Ops> {
  readonly base: string
  readonly tag: string
  readonly ops: Ops
  /** Schema part of the route: the `:service` parameter at the service scope, nothing else. */
  readonly params: { params?: typeof ServiceParams }
  /** The service a request addresses (the `:service` parameter), or null at the global scope. */
  readonly serviceOf: (request: FastifyRequest) => string | null
}

/** The global scope (`global.base`) and the per-service one (`service.base`, with `:service`). */
export function globalAndServiceScopes<Ops>(
  global: { base: string; tag: string; ops: Ops },
  service: { base: string; tag: string; ops: Ops },
): ScopeRoutes<Ops>[] {
  return [
    { ...global, params: {}, serviceOf: () => null },
    {
      ...service,
      params: { params: ServiceParams },
      serviceOf: (request) => (request.params as { service: string }).service,
    },
  ]
}

/**
 * `config.serviceScope` of an endpoint whose body names the service (`service`); without it the
 * request touches `defaultService` (the server's own service, as the engine defaults).
 */
export function bodyServiceScope(defaultService: string) {
  return (request: FastifyRequest): string | null =>
    serviceField(request.body, 'service') ?? defaultService
}

/**
 * `config.serviceScope` of an endpoint whose query names the service (`service`); without it the
 * request touches `defaultService`, or every service (null) for listings.
 */
export function queryServiceScope(defaultService: string | null) {
  return (request: FastifyRequest): string | null =>
    serviceField(request.query, 'service') ?? defaultService
}

/** `config.serviceScope` of the SDK endpoints: the `app_id` of the body or the query. */
export function appIdScope(request: FastifyRequest): string | null {
  return serviceField(request.body, 'app_id') ?? serviceField(request.query, 'app_id') ?? null
}

function serviceField(source: unknown, field: string): string | undefined {
  if (source === null || typeof source !== 'object' || !Object.hasOwn(source, field))
    return undefined
  const value = (source as Record<string, unknown>)[field]
  return typeof value === 'string' ? value : undefined
}
