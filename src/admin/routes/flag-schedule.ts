/**
 * A flag's scheduled changes: `POST /api/flags/{key}/schedule` `{at, action, patch?}` adds one
 * (201 with its id), `GET /api/flags/{key}/schedule` lists the pending ones soonest first,
 * `GET` / `DELETE /api/flags/{key}/schedule/{id}` read or cancel one (204). Reads need the
 * viewer role, writes the operator role; writes are audited (`flag_change_scheduled`,
 * `flag_schedule_cancelled`). They edit the flag's `scheduled_changes`, which the engine's
 * scheduler applies once per cluster. An unknown flag is 404 `FLAG_NOT_FOUND`, an unknown id
 * 404 `FLAG_SCHEDULE_NOT_FOUND`, bad input 400 `VALIDATION_ERROR`; none changes anything.
 */
import { Type } from 'typebox'
import { actorOf } from '../auth/guard.js'
import { ADMIN_ROUTE, type AdminInstance } from '../context.js'
import { EndpointNotFoundError } from '../errors.js'
import { ErrorBody } from '../schemas.js'
import type { FlagServiceSource } from './flags.js'
import type { FlagService } from '../../flags/service.js'

const KeyParams = Type.Object({ key: Type.String({ minLength: 1, maxLength: 200 }) })
const IdParams = Type.Object({
  key: Type.String({ minLength: 1, maxLength: 200 }),
  id: Type.String({ minLength: 1, maxLength: 200 }),
})
const Action = Type.Union([Type.Literal('enable'), Type.Literal('disable'), Type.Literal('update')])
const ScheduleBody = Type.Object(
  {
    at: Type.String({
      minLength: 1,
      maxLength: 64,
      description: 'ISO 8601 datetime in the future (UTC unless it names an offset)',
    }),
    action: Action,
    patch: Type.Optional(
      Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()], {
        description:
          'For `update` only: a JSON merge patch (RFC 7396) that leaves key, type and scheduled_changes alone',
      }),
    ),
  },
  { additionalProperties: false },
)
const ScheduledChange = Type.Object({
  id: Type.String(),
  at: Type.String({ description: 'When it applies (UTC, +00:00)' }),
  action: Action,
  patch: Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()]),
})
const errors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody, 409: ErrorBody }

/** Registers the scheduled-change endpoints of flags. */
export function flagScheduleRoutes(app: AdminInstance, source: FlagServiceSource): void {
  const flags = (): FlagService => {
    const service = source()
    if (service === undefined)
      throw new EndpointNotFoundError('The flag subsystem is not available on this server.')
    return service
  }

  app.post(
    '/api/flags/:key/schedule',
    {
      config: ADMIN_ROUTE,
      schema: {
        summary: 'Schedule a change of the flag (201 with its id)',
        tags: ['flags'],
        params: KeyParams,
        body: ScheduleBody,
        response: { 201: ScheduledChange, ...errors },
      },
    },
    async (request, reply) => {
      const change = await flags().scheduleChange(
        request.params.key,
        request.body,
        actorOf(request),
      )
      return reply.status(201).send(change)
    },
  )

  app.get(
    '/api/flags/:key/schedule',
    {
      config: ADMIN_ROUTE,
      schema: {
        summary: "The flag's pending scheduled changes, soonest first",
        tags: ['flags'],
        params: KeyParams,
        response: { 200: Type.Array(ScheduledChange), ...errors },
      },
    },
    (request) => flags().listScheduledChanges(request.params.key),
  )

  app.get(
    '/api/flags/:key/schedule/:id',
    {
      config: ADMIN_ROUTE,
      schema: {
        summary: 'One pending scheduled change; 404 FLAG_SCHEDULE_NOT_FOUND',
        tags: ['flags'],
        params: IdParams,
        response: { 200: ScheduledChange, ...errors },
      },
    },
    (request) => flags().getScheduledChange(request.params.key, request.params.id),
  )

  app.delete(
    '/api/flags/:key/schedule/:id',
    {
      config: ADMIN_ROUTE,
      schema: {
        summary: 'Cancel a pending scheduled change (204); 404 FLAG_SCHEDULE_NOT_FOUND',
        tags: ['flags'],
        params: IdParams,
        response: { 204: Type.Null({ description: 'No content' }), ...errors },
      },
    },
    async (request, reply) => {
      await flags().cancelScheduledChange(request.params.key, request.params.id, actorOf(request))
      return reply.status(204).send(null)
    },
  )
}
