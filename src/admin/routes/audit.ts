/**
 * `GET /api/audit`: the audit log, newest first, filtered by route (key, bare path or label),
 * service, action and actor.
 */
import { ADMIN_ROUTE, type AdminContext, type AdminInstance } from '../context.js'
import { AuditEntrySchema, AuditQuery, Envelope, ErrorBody } from '../schemas.js'

/** Registers the audit endpoint. */
export function auditRoutes(app: AdminInstance, { engine }: AdminContext): void {
  app.get(
    '/api/audit',
    {
      config: ADMIN_ROUTE,
      schema: {
        summary: 'Audit entries, newest first',
        tags: ['audit'],
        querystring: AuditQuery,
        response: { 200: Envelope(AuditEntrySchema), 400: ErrorBody, 401: ErrorBody },
      },
    },
    (request) =>
      engine.getAuditLog({
        route: request.query.route,
        service: request.query.service,
        action: request.query.action,
        actor: request.query.actor,
        page: request.query.page,
        perPage: request.query.per_page,
      }),
  )
}
