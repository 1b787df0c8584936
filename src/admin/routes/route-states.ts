/**
 * Route-state endpoints: listing, one route's state, enable, disable, maintenance, schedule
 * and cancel. Each handler is one engine call; the engine validates route keys, datetimes and
 * services and rejects before changing anything.
 */
import { actorOf } from '../auth/guard.js'
import { ADMIN_ROUTE, type AdminContext, type AdminInstance } from '../context.js'
import { bodyServiceScope, queryServiceScope } from './scopes.js'
import {
  CancelScheduleBody,
  DisableBody,
  EnableBody,
  Envelope,
  ErrorBody,
  MaintenanceBody,
  RouteListQuery,
  RouteStateList,
  RouteStateQuery,
  RouteStateSchema,
  ScheduleBody,
} from '../schemas.js'

const errors = { 400: ErrorBody, 401: ErrorBody, 404: ErrorBody, 409: ErrorBody }

/** Registers the route-state endpoints. */
export function routeStateRoutes(app: AdminInstance, { engine }: AdminContext): void {
  // The service each request touches: a service token may touch only its own (service-scope.ts).
  const listing = { ...ADMIN_ROUTE, serviceScope: queryServiceScope(null) }
  const reading = { ...ADMIN_ROUTE, serviceScope: queryServiceScope(engine.service) }
  const changing = { ...ADMIN_ROUTE, serviceScope: bodyServiceScope(engine.service) }
  app.get(
    '/api/routes',
    {
      config: listing,
      schema: {
        summary: 'List registered routes (sorted by path, then method)',
        tags: ['routes'],
        querystring: RouteListQuery,
        response: { 200: Envelope(RouteStateSchema), ...errors },
      },
    },
    (request) =>
      engine.listRoutes({
        service: request.query.service,
        page: request.query.page,
        perPage: request.query.per_page,
      }),
  )

  app.get(
    '/api/routes/state',
    {
      config: reading,
      schema: {
        summary: 'The state of one route key (one entry per method)',
        tags: ['routes'],
        querystring: RouteStateQuery,
        response: { 200: RouteStateList, ...errors },
      },
    },
    (request) => engine.getState(request.query.route, { service: request.query.service }),
  )

  app.post(
    '/api/routes/enable',
    {
      config: changing,
      schema: {
        summary: 'Make a route ACTIVE',
        tags: ['routes'],
        body: EnableBody,
        response: { 200: RouteStateList, ...errors },
      },
    },
    (request) => {
      const { route, ...rest } = request.body
      return engine.enable(route, { ...rest, ...actorOf(request) })
    },
  )

  app.post(
    '/api/routes/disable',
    {
      config: changing,
      schema: {
        summary: 'Disable a route (503 ROUTE_DISABLED), optionally until an ISO datetime',
        tags: ['routes'],
        body: DisableBody,
        response: { 200: RouteStateList, ...errors },
      },
    },
    (request) => {
      const { route, ...rest } = request.body
      return engine.disable(route, { ...rest, ...actorOf(request) })
    },
  )

  app.post(
    '/api/routes/maintenance',
    {
      config: changing,
      schema: {
        summary: 'Put a route in maintenance, optionally within a start–end window',
        tags: ['routes'],
        body: MaintenanceBody,
        response: { 200: RouteStateList, ...errors },
      },
    },
    (request) => {
      const { route, ...rest } = request.body
      return engine.setMaintenance(route, { ...rest, ...actorOf(request) })
    },
  )

  app.post(
    '/api/routes/schedule',
    {
      config: changing,
      schema: {
        summary: 'Schedule a future maintenance window (the route stays ACTIVE until it starts)',
        tags: ['routes'],
        body: ScheduleBody,
        response: { 200: RouteStateList, ...errors },
      },
    },
    (request) => {
      const { route, ...rest } = request.body
      return engine.schedule(route, { ...rest, ...actorOf(request) })
    },
  )

  app.post(
    '/api/routes/schedule/cancel',
    {
      config: changing,
      schema: {
        summary: 'Cancel a scheduled (or running) maintenance window',
        tags: ['routes'],
        body: CancelScheduleBody,
        response: { 200: RouteStateList, ...errors },
      },
    },
    (request) => {
      const { route, service } = request.body
      return engine.cancelSchedule(route, { service, ...actorOf(request) })
    },
  )
}
