/**
 * Rate-limit endpoints (CONTRACT.md §3): route policies, the blocked-request log, and the global
 * and per-service policies (the same six operations on both scopes, built from one table).
 *
 * The rate-limit service of the engine is looked up on each request, not at mount: the main
 * plugin sets it up (with its counters) when it is registered, and looking it up earlier would
 * create one with default settings.
 */
import type { Engine } from '../../core/engine.js'
import type { ActorOptions } from '../../core/operations.js'
import { paginate } from '../../core/pagination.js'
import { parseRouteKey } from '../../core/route-key.js'
import { rateLimitingFor } from '../../rate-limit/feature.js'
import type { ScopePolicyOptions, ScopeRateLimitPolicy } from '../../rate-limit/policy.js'
import type { RateLimitService, SetRateLimitPolicyInput } from '../../rate-limit/service.js'
import { actorOf } from '../auth/guard.js'
import { ADMIN_ROUTE, type AdminContext, type AdminInstance } from '../context.js'
import { globalAndServiceScopes } from './scopes.js'
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

/** The engine's rate limiting (one service per engine, shared with the plugin). */
const rateLimits = (engine: Engine): RateLimitService => rateLimitingFor(engine)

/** The scope operations of one rate-limit scope; `service` is null for the global scope. */
interface ScopeOps {
  get(rl: RateLimitService, service: string | null): ScopeRateLimitPolicy | null
  set(
    rl: RateLimitService,
    service: string | null,
    options: ScopePolicyOptions & ActorOptions,
  ): Promise<ScopeRateLimitPolicy>
  delete(rl: RateLimitService, service: string | null, options: ActorOptions): Promise<boolean>
  reset(rl: RateLimitService, service: string | null, options: ActorOptions): Promise<void>
  enable(
    rl: RateLimitService,
    service: string | null,
    options: ActorOptions,
  ): Promise<ScopeRateLimitPolicy | null>
  disable(
    rl: RateLimitService,
    service: string | null,
    options: ActorOptions,
  ): Promise<ScopeRateLimitPolicy | null>
}

const globalOps: ScopeOps = {
  get: (rl) => rl.getGlobalRateLimit(),
  set: (rl, _s, options) => rl.setGlobalRateLimit(options),
  delete: (rl, _s, options) => rl.deleteGlobalRateLimit(options),
  reset: (rl, _s, options) => rl.resetGlobalRateLimit(options),
  enable: (rl, _s, options) => rl.enableGlobalRateLimit(options),
  disable: (rl, _s, options) => rl.disableGlobalRateLimit(options),
}

const serviceOps: ScopeOps = {
  get: (rl, service) => rl.getServiceRateLimit(service ?? ''),
  set: (rl, service, options) => rl.setServiceRateLimit(service ?? '', options),
  delete: (rl, service, options) => rl.deleteServiceRateLimit(service ?? '', options),
  reset: (rl, service, options) => rl.resetServiceRateLimit(service ?? '', options),
  enable: (rl, service, options) => rl.enableServiceRateLimit(service ?? '', options),
  disable: (rl, service, options) => rl.disableServiceRateLimit(service ?? '', options),
}

/** Registers the rate-limit endpoints. */
export function rateLimitRoutes(app: AdminInstance, { engine }: AdminContext): void {
  app.get(
    '/api/rate-limits',
    {
      config: ADMIN_ROUTE,
      schema: {
        summary: 'Route rate-limit policies in force (runtime overrides and decorators)',
        tags: ['rate limits'],
        querystring: PolicyListQuery,
        response: { 200: Envelope(RoutePolicySchema), ...errors },
      },
    },
    (request) =>
      paginate(rateLimits(engine).listRateLimitPolicies({ service: request.query.service }), {
        page: request.query.page,
        perPage: request.query.per_page,
      }),
  )

  app.post(
    '/api/rate-limits',
    {
      config: ADMIN_ROUTE,
      schema: {
        summary: 'Create (201) or replace (200) the policy of a registered route',
        tags: ['rate limits'],
        body: SetRoutePolicyBody,
        response: { 200: RoutePolicySchema, 201: RoutePolicySchema, ...errors },
      },
    },
    async (request, reply) => {
      const rl = rateLimits(engine)
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
      config: ADMIN_ROUTE,
      schema: {
        summary: 'Remove the runtime override(s) of a route key (a decorator policy stays)',
        tags: ['rate limits'],
        querystring: RouteQuery,
        response: { 200: DeletedCount, ...errors },
      },
    },
    async (request) => ({
      deleted: await rateLimits(engine).deleteRateLimitPolicy(request.query.route, {
        service: request.query.service,
        ...actorOf(request),
      }),
    }),
  )

  app.post(
    '/api/rate-limits/reset',
    {
      config: ADMIN_ROUTE,
      schema: {
        summary: 'Clear the counters of a route (every method for a bare path)',
        tags: ['rate limits'],
        body: ResetBody,
        response: { 200: ResetAnswer, ...errors },
      },
    },
    async (request) => {
      const key = parseRouteKey(request.body.route)
      await rateLimits(engine).resetRateLimit(key.path, {
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
      config: ADMIN_ROUTE,
      schema: {
        summary: 'Blocked requests, newest first',
        tags: ['rate limits'],
        querystring: HitsQuery,
        response: { 200: Envelope(HitSchema), ...errors },
      },
    },
    async (request) => {
      const hits = await rateLimits(engine).getRateLimitHits(
        request.query.route === undefined ? {} : { path: request.query.route },
      )
      return paginate(hits, { page: request.query.page, perPage: request.query.per_page })
    },
  )

  const scopes = globalAndServiceScopes(
    { base: '/api/global-rate-limit', tag: 'global rate limit', ops: globalOps },
    { base: '/api/services/:service/rate-limit', tag: 'service rate limit', ops: serviceOps },
  )
  for (const { base, tag, ops, params, serviceOf } of scopes) {
    app.get(
      base,
      {
        config: ADMIN_ROUTE,
        schema: {
          summary: 'The policy, or null',
          tags: [tag],
          ...params,
          response: { 200: ScopePolicyAnswer, ...errors },
        },
      },
      (request) => ({ policy: ops.get(rateLimits(engine), serviceOf(request)) }),
    )

    app.put(
      base,
      {
        config: ADMIN_ROUTE,
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
        const policy = await ops.set(rateLimits(engine), serviceOf(request), {
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
        config: ADMIN_ROUTE,
        schema: {
          summary: 'Remove the policy',
          tags: [tag],
          ...params,
          response: { 200: DeletedFlag, ...errors },
        },
      },
      async (request) => ({
        deleted: await ops.delete(rateLimits(engine), serviceOf(request), actorOf(request)),
      }),
    )

    app.post(
      `${base}/reset`,
      {
        config: ADMIN_ROUTE,
        schema: {
          summary: 'Clear the counters; the policy is kept',
          tags: [tag],
          ...params,
          response: { 200: ResetAnswer, ...errors },
        },
      },
      async (request) => {
        await ops.reset(rateLimits(engine), serviceOf(request), actorOf(request))
        return { reset: true }
      },
    )

    for (const toggle of ['enable', 'disable'] as const) {
      app.post(
        `${base}/${toggle}`,
        {
          config: ADMIN_ROUTE,
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
          policy: await ops[toggle](rateLimits(engine), serviceOf(request), actorOf(request)),
        }),
      )
    }
  }
}
