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
