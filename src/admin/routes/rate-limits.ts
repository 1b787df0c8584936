/**
 * Rate-limit endpoints: route policies (`/api/rate-limits`), the blocked-request log
 * (`/api/rate-limits/hits`), and the global and per-service policies (`/api/global-rate-limit`,
 * `/api/services/{service}/rate-limit`: the same six operations on both scopes, through the scope
 * handles `engine.rateLimits.global` and `engine.rateLimits.service(name)`).
 */
import type { FastifyRequest } from 'fastify'
import { paginate } from '../../core/pagination.js'
import { parseRouteKey } from '../../core/route-key.js'
import type { ScopePolicyOptions } from '../../rate-limit/policy.js'
import type { RateLimitScopeHandle } from '../../rate-limit/scope-operations.js'
import type { SetRateLimitPolicyInput } from '../../rate-limit/service.js'
import { actorOf } from '../auth/guard.js'
import { ADMIN_ROUTE, type AdminContext, type AdminInstance } from '../context.js'
import { bodyServiceScope, globalAndServiceScopes, queryServiceScope } from './scopes.js'
import {
  DeletedCount,
  DeletedFlag,
  HitSchema,
  HitsQuery,
  PolicyListQuery,
  ResetAnswer,
  ResetBody,
  RoutePolicySchema,
  RouteQuery,
  ScopePolicyAnswer,
  SetRoutePolicyBody,
  SetScopePolicyBody,
} from '../rate-limit-schemas.js'
import { Envelope, ErrorBody } from '../schemas.js'

const errors = { 400: ErrorBody, 401: ErrorBody, 404: ErrorBody }

/** The policy operations of a scope, by the service a request addresses (null: global). */
type ScopeOf = (service: string | null) => RateLimitScopeHandle

/** Registers the rate-limit endpoints. */
export function rateLimitRoutes(app: AdminInstance, { engine }: AdminContext): void {
  // The service each request touches: a service token may touch only its own (service-scope.ts).
  const listing = { ...ADMIN_ROUTE, serviceScope: queryServiceScope(null) }
  const byQuery = { ...ADMIN_ROUTE, serviceScope: queryServiceScope(engine.service) }
  const byBody = { ...ADMIN_ROUTE, serviceScope: bodyServiceScope(engine.service) }
  app.get(
    '/api/rate-limits',
    {
      config: listing,
      schema: {
        summary: 'Route rate-limit policies in force (runtime overrides and decorators)',
        tags: ['rate limits'],
        querystring: PolicyListQuery,
        response: { 200: Envelope(RoutePolicySchema), ...errors },
      },
    },
    (request) =>
      paginate(engine.rateLimits.listRateLimitPolicies({ service: request.query.service }), {
        page: request.query.page,
        perPage: request.query.per_page,
      }),
  )

  app.post(
    '/api/rate-limits',
    {
      config: byBody,
      schema: {
        summary: 'Create (201) or replace (200) the policy of a registered route',
        tags: ['rate limits'],
        body: SetRoutePolicyBody,
        response: { 200: RoutePolicySchema, 201: RoutePolicySchema, ...errors },
      },
    },
    async (request, reply) => {
      const rl = engine.rateLimits
      const body = request.body
      const service = body.service ?? engine.service
      const method = body.method.toUpperCase()
      const existed = rl
        .listRateLimitPolicies({ service })
        .some((policy) => policy.method === method && policy.path === body.path)
      // Names (algorithm, key strategy, missing-key behaviour) are validated by the service.
      const policy = await rl.setRateLimitPolicy({
        path: body.path,
        method: body.method,
        service: body.service,
        limit: body.limit,
        algorithm: body.algorithm as SetRateLimitPolicyInput['algorithm'],
        keyStrategy: body.key_strategy as SetRateLimitPolicyInput['keyStrategy'],
        onMissingKey: body.on_missing_key as SetRateLimitPolicyInput['onMissingKey'],
        burst: body.burst,
        ...actorOf(request),
      })
      void reply.status(existed ? 200 : 201)
      return policy
    },
  )

  app.delete(
    '/api/rate-limits',
    {
      config: byQuery,
      schema: {
        summary: 'Remove the runtime override(s) of a route key (a decorator policy stays)',
        tags: ['rate limits'],
        querystring: RouteQuery,
        response: { 200: DeletedCount, ...errors },
      },
    },
    async (request) => ({
      deleted: await engine.rateLimits.deleteRateLimitPolicy(request.query.route, {
        service: request.query.service,
        ...actorOf(request),
      }),
    }),
  )

  app.post(
    '/api/rate-limits/reset',
    {
      config: byBody,
      schema: {
        summary: 'Clear the counters of a route (every method for a bare path)',
        tags: ['rate limits'],
        body: ResetBody,
        response: { 200: ResetAnswer, ...errors },
      },
    },
    async (request) => {
      const key = parseRouteKey(request.body.route)
      await engine.rateLimits.resetRateLimit(key.path, {
        ...(key.method === null ? {} : { method: key.method }),
        service: request.body.service,
        ...actorOf(request),
      })
      return { reset: true }
    },
  )

  app.get(
    '/api/rate-limits/hits',
    {
      config: listing,
      schema: {
        summary: 'Blocked requests, newest first',
        tags: ['rate limits'],
        querystring: HitsQuery,
        response: { 200: Envelope(HitSchema), ...errors },
      },
    },
    async (request) => {
      const { route, service } = request.query
      const hits = await engine.rateLimits.getRateLimitHits({
        ...(route === undefined ? {} : { path: route }),
        ...(service === undefined ? {} : { service }),
      })
      return paginate(hits, { page: request.query.page, perPage: request.query.per_page })
    },
  )

  const scopes = globalAndServiceScopes<ScopeOf>(
    {
      base: '/api/global-rate-limit',
      tag: 'global rate limit',
      ops: () => engine.rateLimits.global,
    },
    {
      base: '/api/services/:service/rate-limit',
      tag: 'service rate limit',
      ops: (service) => engine.rateLimits.service(service ?? ''),
    },
  )
  for (const { base, tag, ops, params, serviceOf } of scopes) {
    const handle = (request: FastifyRequest) => ops(serviceOf(request))
    const config = { ...ADMIN_ROUTE, serviceScope: serviceOf }
    app.get(
      base,
      {
        config,
        schema: {
          summary: 'The policy, or null',
          tags: [tag],
          ...params,
          response: { 200: ScopePolicyAnswer, ...errors },
        },
      },
      (request) => ({ policy: handle(request).get() }),
    )

    app.put(
      base,
      {
        config,
        schema: {
          summary: 'Create or replace the policy',
          tags: [tag],
          ...params,
          body: SetScopePolicyBody,
          response: { 200: ScopePolicyAnswer, ...errors },
        },
      },
      async (request) => {
        const body = request.body
        const policy = await handle(request).set({
          limit: body.limit,
          algorithm: body.algorithm as ScopePolicyOptions['algorithm'],
          keyStrategy: body.key_strategy as ScopePolicyOptions['keyStrategy'],
          onMissingKey: body.on_missing_key as ScopePolicyOptions['onMissingKey'],
          burst: body.burst,
          exemptRoutes: body.exempt_routes,
          enabled: body.enabled,
          ...actorOf(request),
        })
        return { policy }
      },
    )

    app.delete(
      base,
      {
        config,
        schema: {
          summary: 'Remove the policy',
          tags: [tag],
          ...params,
          response: { 200: DeletedFlag, ...errors },
        },
      },
      async (request) => ({
        deleted: await handle(request).delete(actorOf(request)),
      }),
    )

    app.post(
      `${base}/reset`,
      {
        config,
        schema: {
          summary: 'Clear the counters; the policy is kept',
          tags: [tag],
          ...params,
          response: { 200: ResetAnswer, ...errors },
        },
      },
      async (request) => {
        await handle(request).reset(actorOf(request))
        return { reset: true }
      },
    )

    for (const toggle of ['enable', 'disable'] as const) {
      app.post(
        `${base}/${toggle}`,
        {
          config,
          schema: {
            summary:
              toggle === 'enable'
                ? 'Resume a paused policy (no-op without one)'
                : 'Pause the policy (kept, not enforced)',
            tags: [tag],
            ...params,
            response: { 200: ScopePolicyAnswer, ...errors },
          },
        },
        async (request) => ({
          policy: await handle(request)[toggle](actorOf(request)),
        }),
      )
    }
  }
}
