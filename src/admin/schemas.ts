/**
 * TypeBox schemas of the admin REST API (docs/reference/admin-rest.md). Each is at once the TypeScript type
 * of a handler's input, the runtime validation of every request (wrong types, unknown fields
 * and missing fields are a 400 before any handler runs) and the OpenAPI description served at
 * `GET /api/openapi.json`.
 */
import { Type, type Static, type TSchema } from 'typebox'
import { MAX_PER_PAGE } from '../core/pagination.js'
import { DURATION_PATTERN } from '../core/time.js'
import { SERVICE_NAME_PATTERN } from '../core/service-name.js'

/** A schema or null. */
export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()])

const Text = (description: string, maxLength = 1000) => Type.String({ maxLength, description })

/** A route key: `METHOD:/path`, or a bare `/path` meaning every method of that path. */
export const RouteKey = Type.String({
  minLength: 1,
  maxLength: 2000,
  description: 'Route key: `METHOD:/path`, or a bare `/path` (every method of that path)',
})

const ServiceName = Type.String({ pattern: SERVICE_NAME_PATTERN, description: 'Service name' })
const IsoDateTime = Type.String({
  minLength: 1,
  maxLength: 64,
  description: 'ISO 8601 datetime, e.g. 2026-12-01T04:00:00Z',
})

/** The error body shared by every non-2xx answer. */
export const ErrorBody = Type.Object(
  {
    error: Type.Object(
      { code: Type.String(), message: Type.String() },
      { additionalProperties: true },
    ),
  },
  { description: 'Error: `{"error": {"code", "message", ...}}`' },
)

/** A route status, lower case as on the wire. */
export const RouteStatusSchema = Type.Union([
  Type.Literal('active'),
  Type.Literal('maintenance'),
  Type.Literal('disabled'),
  Type.Literal('env_gated'),
  Type.Literal('deprecated'),
])

/** The state of one method of one route. */
export const RouteStateSchema = Type.Object({
  route: Type.String(),
  method: Type.String(),
  path: Type.String(),
  service: Type.String(),
  status: RouteStatusSchema,
  reason: Type.String(),
  since: Type.String({ description: 'ISO datetime of the last change, or `startup`' }),
  window: Nullable(Type.Object({ start: Nullable(Type.String()), end: Nullable(Type.String()) })),
  until: Nullable(Type.String()),
  envs: Type.Array(Type.String()),
  force_active: Type.Boolean(),
  sunset: Nullable(Type.String()),
  use_instead: Nullable(Type.String()),
  deprecated_since: Nullable(Type.String()),
})

/** A list of route states (one per method of the addressed route). */
export const RouteStateList = Type.Array(RouteStateSchema)

/** The list envelope: `{ items, total, page, per_page }`. */
export const Envelope = <T extends TSchema>(item: T) =>
  Type.Object({
    items: Type.Array(item),
    total: Type.Integer(),
    page: Type.Integer(),
    per_page: Type.Integer(),
  })

/** `page` and `per_page` query parameters. */
export const PageQuery = {
  page: Type.Optional(Type.Integer({ minimum: 1, description: 'Page number (default 1)' })),
  per_page: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: MAX_PER_PAGE,
      description: `Rows per page (default 20, at most ${MAX_PER_PAGE})`,
    }),
  ),
}

/** Query of `GET /api/routes`. */
export const RouteListQuery = Type.Object(
  { service: Type.Optional(ServiceName), ...PageQuery },
  { additionalProperties: false },
)

/** Query of `GET /api/routes/state`. */
export const RouteStateQuery = Type.Object(
  { route: RouteKey, service: Type.Optional(ServiceName) },
  { additionalProperties: false },
)

const routeTarget = {
  route: RouteKey,
  service: Type.Optional(ServiceName),
}

/** Body of `POST /api/routes/enable`. */
export const EnableBody = Type.Object(
  { ...routeTarget, reason: Type.Optional(Text('Free text')) },
  { additionalProperties: false },
)

/** Body of `POST /api/routes/disable`. */
export const DisableBody = Type.Object(
  {
    ...routeTarget,
    reason: Type.Optional(Text('Free text, returned in the 503')),
    until: Type.Optional(Nullable(IsoDateTime)),
  },
  { additionalProperties: false },
)

/** Body of `POST /api/routes/maintenance`. */
export const MaintenanceBody = Type.Object(
  {
    ...routeTarget,
    reason: Type.Optional(Text('Free text, returned in the 503')),
    start: Type.Optional(Nullable(IsoDateTime)),
    end: Type.Optional(Nullable(IsoDateTime)),
  },
  { additionalProperties: false },
)

/** Body of `POST /api/routes/schedule`. */
export const ScheduleBody = Type.Object(
  {
    ...routeTarget,
    start: IsoDateTime,
    end: IsoDateTime,
    reason: Type.Optional(Text('Free text, returned in the 503 during the window')),
  },
  { additionalProperties: false },
)

/** Body of `POST /api/routes/schedule/cancel`. */
export const CancelScheduleBody = Type.Object(routeTarget, { additionalProperties: false })

/** A maintenance configuration (global or one service). */
export const MaintenanceConfigSchema = Type.Object({
  active: Type.Boolean(),
  reason: Type.String(),
  include_force_active: Type.Boolean(),
  exempt_paths: Type.Array(Type.String()),
  ends_at: Type.Optional(
    Nullable(
      Type.String({ description: 'When maintenance ends by itself; null: when turned off' }),
    ),
  ),
})

/** Body of the maintenance `enable` endpoints. */
export const MaintenanceEnableBody = Type.Object(
  {
    reason: Type.Optional(Text('Returned in every 503 while active')),
    exempt_paths: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 2000 }), {
        maxItems: 1000,
        description: 'Bare `/path` or `METHOD:/path` entries that stay served',
      }),
    ),
    include_force_active: Type.Optional(
      Type.Boolean({ description: 'Also block force_active routes (health probes)' }),
    ),
    ends_at: Type.Optional(
      Nullable({ ...IsoDateTime, description: 'End maintenance by itself at this future time' }),
    ),
    duration: Type.Optional(
      Type.String({
        pattern: DURATION_PATTERN,
        description: 'End maintenance by itself after this long (`30m`, `1h`, `4h`, `2d`)',
      }),
    ),
  },
  { additionalProperties: false },
)

/** Body of the maintenance `disable` endpoints (no members). */
export const EmptyBody = Type.Object({}, { additionalProperties: false })

/** Body of `exempt-add` and `exempt-remove`. */
export const ExemptBody = Type.Object(
  {
    path: Type.String({ minLength: 1, maxLength: 2000, description: '`/path` or `METHOD:/path`' }),
  },
  { additionalProperties: false },
)

/** Path parameters of the per-service endpoints. */
export const ServiceParams = Type.Object({ service: ServiceName })

/** One audit entry. */
export const AuditEntrySchema = Type.Object({
  id: Type.String(),
  timestamp: Type.String(),
  route: Type.String(),
  service: Nullable(Type.String()),
  action: Type.String(),
  actor: Type.String(),
  platform: Type.String(),
  reason: Type.String(),
  previous_status: Nullable(Type.String()),
  new_status: Nullable(Type.String()),
  on_behalf_of: Type.Optional(
    Type.String({
      description:
        'Whom the actor acted for, as it reported (an SDK app’s user); absent when the actor acted for itself',
    }),
  ),
  diff: Type.Optional(
    Type.Record(Type.String(), Type.Array(Type.Unknown(), { minItems: 2, maxItems: 2 }), {
      description:
        'What an update changed: `{field: [before, after]}`, changed fields only; a value whose JSON exceeds 1000 characters is cut and ends with `…`; at most 50 fields (the rest counted under `…`)',
    }),
  ),
})

/** Query of `GET /api/audit`. */
export const AuditQuery = Type.Object(
  {
    route: Type.Optional(
      Type.String({ maxLength: 2000, description: 'Route key, bare path or label' }),
    ),
    service: Type.Optional(ServiceName),
    action: Type.Optional(
      Type.String({ maxLength: 200, description: 'Exact action, e.g. disable' }),
    ),
    actor: Type.Optional(Type.String({ maxLength: 200, description: 'Exact actor, e.g. admin' })),
    ...PageQuery,
  },
  { additionalProperties: false },
)

/** Body of `POST /api/auth/login`. */
export const LoginBody = Type.Object(
  {
    username: Type.String({ minLength: 1, maxLength: 200 }),
    password: Type.String({ minLength: 1, maxLength: 1000 }),
  },
  { additionalProperties: false },
)

/** A principal's role. */
export const RoleSchema = Type.Union(
  [Type.Literal('viewer'), Type.Literal('operator'), Type.Literal('admin')],
  { description: 'viewer: reads; operator: reads and runtime changes; admin: also credentials' },
)

/** Answer of `POST /api/auth/login`. */
export const LoginResult = Type.Object({
  token: Type.String(),
  username: Type.String(),
  role: RoleSchema,
  expires_at: Type.String(),
  csrf_token: Type.String({ description: 'Send as X-CSRF-Token on cookie-authenticated writes' }),
})

/** Answer of `GET /api/auth/me`. */
export const MeResult = Type.Object({
  username: Type.String(),
  role: RoleSchema,
  authenticated: Type.Boolean({ description: 'false in open mode (no credentials configured)' }),
  expires_at: Nullable(Type.String()),
  auth_required: Type.Boolean(),
  csrf_token: Type.Optional(
    Type.String({ description: 'Present for cookie sessions: send as X-CSRF-Token on writes' }),
  ),
})

/** Answer of `POST /api/auth/logout`. */
export const LogoutResult = Type.Object({ revoked: Type.Boolean() })

/** Answer of `GET /api/services`. */
export const ServiceList = Type.Array(Type.String())

/** Static types of the bodies, for handlers. */
export type EnableInput = Static<typeof EnableBody>
