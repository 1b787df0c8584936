/**
 * Configuration as code (docs/configuration-as-code.md): `GET /api/config` exports the runtime
 * configuration as a document, `POST /api/config/plan` lists what applying a document would
 * change, `POST /api/config/apply` applies it (`?dry_run=true`: plan only; `?prune=true`:
 * also remove what the document's sections leave out, which needs the `admin` role).
 *
 * Bodies are JSON, or YAML with `Content-Type: application/yaml`. Every change of an apply
 * goes through the ordinary operation, audited with platform `apply`.
 *
 * A service token may export, plan and apply only a document of its own service
 * (`?service=` / `service:`); a whole-deployment document is outside every service.
 */
import { Type } from 'typebox'
import { parse as parseYaml } from 'yaml'
import type { FastifyRequest } from 'fastify'
import { ValidationError } from '../../core/errors.js'
import { SERVICE_NAME_PATTERN } from '../../core/service-name.js'
import { forbiddenFor, roleAllows } from '../../common/roles.js'
import { exportConfig } from '../../config-as-code/export.js'
import { applyPlan, planConfig } from '../../config-as-code/plan.js'
import { actorOf } from '../auth/guard.js'
import {
  ADMIN_ROUTE,
  flagServiceOf,
  VIEWER_ROUTE,
  type AdminContext,
  type AdminInstance,
} from '../context.js'
import { ErrorBody } from '../schemas.js'

/** The media types read as YAML. */
export const YAML_TYPES = ['application/yaml', 'application/x-yaml', 'text/yaml']

/** The audit platform of every change an apply makes. */
export const APPLY_PLATFORM = 'apply'

const errors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody }
const Document = Type.Unknown({
  description:
    'A configuration document (`apiVersion: switchyard/v1`, `kind: Config`; JSON Schema: config.schema.json), as JSON or YAML (`Content-Type: application/yaml`)',
})
const Flag = (description: string) =>
  Type.Optional(Type.Union([Type.Literal('true'), Type.Literal('false')], { description }))
const ExportQuery = Type.Object(
  {
    service: Type.Optional(
      Type.String({ pattern: SERVICE_NAME_PATTERN, description: 'Only this service’s part' }),
    ),
  },
  { additionalProperties: false },
)
const PlanQuery = Type.Object(
  { prune: Flag('Also list the removals of what the document’s sections leave out') },
  { additionalProperties: false },
)
const ApplyQuery = Type.Object(
  {
    prune: Flag('Also remove what the document’s sections leave out (admin role)'),
    dry_run: Flag('Only plan: change nothing'),
  },
  { additionalProperties: false },
)
const Change = Type.Object({
  op: Type.Union([Type.Literal('create'), Type.Literal('update'), Type.Literal('delete')]),
  kind: Type.String({
    description:
      'flag, segment, route_rate_limit, service_rate_limit, global_rate_limit, route_state, global_maintenance or service_maintenance',
  }),
  key: Type.String({ description: 'Flag or segment key, route key, service name or `global`' }),
  service: Type.Optional(Type.String({ description: 'The service of a route’s change' })),
  diff: Type.Optional(
    Type.Record(Type.String(), Type.Array(Type.Unknown()), {
      description: 'An update’s changed fields: `{<field>: [current, desired]}`',
    }),
  ),
})
const PlanAnswer = Type.Object({ changes: Type.Array(Change) })
const ApplyAnswer = Type.Object({
  dry_run: Type.Boolean(),
  changes: Type.Array(Change, { description: 'The changes made (with dry_run: to be made)' }),
})

/** The service a document names (`service:`), or null for a whole-deployment document. */
function documentService(request: FastifyRequest): string | null {
  const body = request.body
  if (body === null || typeof body !== 'object' || !Object.hasOwn(body, 'service')) return null
  const service = (body as { service?: unknown }).service
  return typeof service === 'string' ? service : null
}

/** Registers the configuration endpoints (with their YAML body parser). */
export function configRoutes(app: AdminInstance, context: AdminContext): void {
  const { engine } = context
  void app.register((scope: AdminInstance, _options, done) => {
    // YAML only here: no other endpoint takes it. Aliases are bounded (a "billion laughs"
    // document is refused) and the parsed value passes the same depth check as JSON.
    scope.addContentTypeParser(YAML_TYPES, { parseAs: 'string' }, (_request, body, parsed) => {
      try {
        const text = typeof body === 'string' ? body : body.toString('utf8')
        parsed(null, parseYaml(text, { maxAliasCount: 100, uniqueKeys: true }) as unknown)
      } catch (error) {
        const message = error instanceof Error ? error.message.split('\n')[0] : 'not YAML'
        parsed(
          new ValidationError(`The body is not valid YAML: ${message}`, {
            details: [{ field: 'body', message: message ?? 'not YAML' }],
          }),
          undefined,
        )
      }
    })

    scope.get(
      '/api/config',
      {
        config: { ...ADMIN_ROUTE, serviceScope: (request) => serviceQuery(request) },
        schema: {
          summary: 'Export the runtime configuration as a document (JSON)',
          tags: ['config'],
          querystring: ExportQuery,
          response: { 200: Document, ...errors },
        },
      },
      (request) =>
        exportConfig(engine, flagServiceOf(context), {
          ...(request.query.service === undefined ? {} : { service: request.query.service }),
        }),
    )

    scope.post(
      '/api/config/plan',
      {
        // Changes nothing: a viewer (a CI job checking for drift) may plan.
        config: { ...VIEWER_ROUTE, serviceScope: documentService },
        schema: {
          summary: 'The changes applying a document would make (nothing is changed)',
          tags: ['config'],
          querystring: PlanQuery,
          body: Document,
          response: { 200: PlanAnswer, ...errors },
        },
      },
      async (request) => {
        const plan = await planConfig(engine, flagServiceOf(context), request.body, {
          prune: request.query.prune === 'true',
        })
        return { changes: plan.steps.map((step) => step.change) }
      },
    )

    scope.post(
      '/api/config/apply',
      {
        config: { ...ADMIN_ROUTE, serviceScope: documentService },
        schema: {
          summary:
            'Apply a document: all of it or nothing when invalid (prune: admin role; dry_run: plan only)',
          tags: ['config'],
          querystring: ApplyQuery,
          body: Document,
          response: { 200: ApplyAnswer, ...errors },
        },
      },
      async (request) => {
        const prune = request.query.prune === 'true'
        const role = request.switchyardAdmin?.role ?? 'viewer'
        if (prune && !roleAllows(role, 'admin')) throw forbiddenFor(role, 'admin')
        const plan = await planConfig(engine, flagServiceOf(context), request.body, { prune })
        if (request.query.dry_run === 'true')
          return { dry_run: true, changes: plan.steps.map((step) => step.change) }
        const { actor } = actorOf(request)
        const changes = await applyPlan(plan, { actor, platform: APPLY_PLATFORM })
        return { dry_run: false, changes }
      },
    )
    done()
  })
}

function serviceQuery(request: FastifyRequest): string | null {
  const query = request.query as { service?: unknown } | undefined
  return typeof query?.service === 'string' ? query.service : null
}
