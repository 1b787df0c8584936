/**
 * A flag's history: `GET /api/flags/{key}/versions` lists the versions its writes left, newest
 * first (viewer), and `POST /api/flags/{key}/rollback` `{version}` writes a new version equal
 * to a kept one (operator; audited as an update with its diff). An unknown flag is 404
 * `FLAG_NOT_FOUND`, a version not kept 404 `FLAG_VERSION_NOT_FOUND`; either changes nothing.
 */
import { Type } from 'typebox'
import { actorOf } from '../auth/guard.js'
import { ADMIN_ROUTE, type AdminInstance } from '../context.js'
import { ErrorBody } from '../schemas.js'
import type { FlagServiceSource } from './flags.js'
import { EndpointNotFoundError } from '../errors.js'
import type { FlagService } from '../../flags/service.js'

const KeyParams = Type.Object({ key: Type.String({ minLength: 1, maxLength: 200 }) })
const RollbackBody = Type.Object(
  {
    version: Type.Integer({ minimum: 1, description: 'A version the flag keeps' }),
    reason: Type.Optional(Type.String({ maxLength: 500, description: 'Kept in the audit entry' })),
  },
  { additionalProperties: false },
)
const FlagVersion = Type.Object({
  version: Type.Integer(),
  changed_at: Type.String(),
  actor: Type.String(),
  flag: Type.Unknown({ description: 'The whole flag as this write left it' }),
})
const errors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody, 409: ErrorBody }

/** Registers the flag history endpoints. */
export function flagHistoryRoutes(app: AdminInstance, source: FlagServiceSource): void {
  const flags = (): FlagService => {
    const service = source()
    if (service === undefined)
      throw new EndpointNotFoundError('The flag subsystem is not available on this server.')
    return service
  }

  app.get(
    '/api/flags/:key/versions',
    {
      config: ADMIN_ROUTE,
      schema: {
        summary: "The flag's kept versions, newest first",
        tags: ['flags'],
        params: KeyParams,
        response: { 200: Type.Array(FlagVersion), ...errors },
      },
    },
    (request) => flags().listFlagVersions(request.params.key),
  )

  app.post(
    '/api/flags/:key/rollback',
    {
      config: ADMIN_ROUTE,
      schema: {
        summary: 'Write a new version equal to a kept one; 404 FLAG_VERSION_NOT_FOUND',
        tags: ['flags'],
        params: KeyParams,
        body: RollbackBody,
        response: { 200: Type.Unknown({ description: 'The stored flag' }), ...errors },
      },
    },
    (request) =>
      flags().rollbackFlag(request.params.key, request.body.version, {
        ...actorOf(request),
        ...(request.body.reason === undefined ? {} : { reason: request.body.reason }),
      }),
  )
}
