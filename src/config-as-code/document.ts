/**
 * The configuration document (docs/configuration-as-code.md): the runtime configuration of a
 * deployment as one YAML or JSON file — flags, segments, rate-limit policies, route-state
 * overrides and maintenance — that `GET /api/config` exports and `POST /api/config/apply`
 * converges the server to.
 *
 * The TypeBox schema below is at once the TypeScript type, the structural check of every
 * document the server receives, and the JSON Schema shipped as `config.schema.json` (a test
 * keeps the file equal to it). What a schema cannot say (a limit string parses, a route is
 * registered, a prerequisite exists) is checked by the plan, with the same paths.
 */
import { Type, type Static, type TSchema } from 'typebox'
import { SERVICE_NAME_PATTERN } from '../core/service-name.js'
import { FlagInputSchema, SegmentInputSchema } from '../flags/schemas.js'
import { ALGORITHMS } from '../common/rate-limits/algorithms.js'
import { KEY_STRATEGIES, MISSING_KEY_BEHAVIOURS } from '../rate-limit/keys.js'

/** The `apiVersion` of this version of the document. */
export const CONFIG_API_VERSION = 'switchyard/v1'

/** The `kind` of the document. */
export const CONFIG_KIND = 'Config'

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()])
const ServiceName = Type.String({ pattern: SERVICE_NAME_PATTERN, description: 'Service name' })
const Reason = Type.String({ maxLength: 1000, description: 'Free-text reason' })
const DateTime = Type.String({
  minLength: 1,
  maxLength: 64,
  description: 'ISO 8601 datetime, e.g. 2026-12-01T04:00:00Z',
})
const FullRouteKey = Type.String({
  pattern: '^[A-Za-z]+:/\\S*$',
  maxLength: 2000,
  description: 'Route key `METHOD:/path` (one method of one registered route)',
})
const LimitString = Type.String({
  minLength: 1,
  maxLength: 100,
  description: 'Limit string `<count>/<period>`, e.g. `100/minute`',
})
const Name = (description: string) => Type.String({ minLength: 1, maxLength: 100, description })

/** A route's runtime state override. */
export const RouteEntrySchema = Type.Object(
  {
    route: FullRouteKey,
    service: Type.Optional(ServiceName),
    status: Type.Union([
      Type.Literal('active'),
      Type.Literal('disabled'),
      Type.Literal('maintenance'),
    ]),
    reason: Type.Optional(Reason),
    until: Type.Optional(
      Nullable(Type.String({ ...DateTime, description: 'disabled: re-enable at this time' })),
    ),
    window: Type.Optional(
      Nullable(
        Type.Object(
          { start: Type.Optional(Nullable(DateTime)), end: Type.Optional(Nullable(DateTime)) },
          {
            additionalProperties: false,
            description: 'maintenance: the window (start null: already started; end null: open)',
          },
        ),
      ),
    ),
  },
  { additionalProperties: false },
)

const PolicyFields = {
  limit: LimitString,
  algorithm: Type.Optional(Name(`One of ${ALGORITHMS.join(', ')}; default ${ALGORITHMS[0]}`)),
  key_strategy: Type.Optional(
    Name(`One of ${KEY_STRATEGIES.filter((name) => name !== 'custom').join(', ')}; default ip`),
  ),
  on_missing_key: Type.Optional(
    Nullable(Name(`One of ${MISSING_KEY_BEHAVIOURS.join(', ')}; null: the key strategy's default`)),
  ),
  burst: Type.Optional(Type.Integer({ minimum: 0, description: 'Extra requests allowed' })),
}

/** A runtime rate-limit policy of one registered route. */
export const RouteLimitEntrySchema = Type.Object(
  { route: FullRouteKey, service: Type.Optional(ServiceName), ...PolicyFields },
  { additionalProperties: false },
)

/** The global policy, or one service's. */
export const ScopeLimitEntrySchema = Type.Object(
  {
    ...PolicyFields,
    exempt_routes: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 2000 }), {
        maxItems: 1000,
        description: '`/path` or `METHOD:/path` entries the policy does not count',
      }),
    ),
    enabled: Type.Optional(Type.Boolean({ description: 'false: kept but not enforced' })),
  },
  { additionalProperties: false },
)

/** A maintenance configuration (global or of one service). */
export const MaintenanceEntrySchema = Type.Object(
  {
    active: Type.Boolean(),
    reason: Type.Optional(Reason),
    include_force_active: Type.Optional(Type.Boolean()),
    exempt_paths: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 2000 }), {
        maxItems: 1000,
        description: '`/path` or `METHOD:/path` entries that stay served',
      }),
    ),
  },
  { additionalProperties: false },
)

// A key that is not a service name is refused, not passed over unchecked.
const ByService = <T extends TSchema>(schema: T, description: string) =>
  Type.Record(Type.String({ pattern: SERVICE_NAME_PATTERN }), schema, {
    description,
    additionalProperties: false,
  })

/** The whole document. */
export const ConfigDocumentSchema = Type.Object(
  {
    apiVersion: Type.Literal(CONFIG_API_VERSION),
    kind: Type.Literal(CONFIG_KIND),
    service: Type.Optional(
      Type.String({
        pattern: SERVICE_NAME_PATTERN,
        description:
          'A document of one service: only that service’s routes, rate limits and maintenance',
      }),
    ),
    flags: Type.Optional(Type.Array(FlagInputSchema, { maxItems: 10_000 })),
    segments: Type.Optional(Type.Array(SegmentInputSchema, { maxItems: 10_000 })),
    rateLimits: Type.Optional(
      Type.Object(
        {
          routes: Type.Optional(Type.Array(RouteLimitEntrySchema, { maxItems: 10_000 })),
          services: Type.Optional(ByService(ScopeLimitEntrySchema, 'Policies by service name')),
          global: Type.Optional(Nullable(ScopeLimitEntrySchema)),
        },
        { additionalProperties: false },
      ),
    ),
    routes: Type.Optional(Type.Array(RouteEntrySchema, { maxItems: 10_000 })),
    maintenance: Type.Optional(
      Type.Object(
        {
          global: Type.Optional(MaintenanceEntrySchema),
          services: Type.Optional(ByService(MaintenanceEntrySchema, 'Maintenance by service name')),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
)

/** A configuration document. */
export type ConfigDocument = Static<typeof ConfigDocumentSchema>
/** One entry of `routes`. */
export type RouteEntry = Static<typeof RouteEntrySchema>
/** One entry of `rateLimits.routes`. */
export type RouteLimitEntry = Static<typeof RouteLimitEntrySchema>
/** `rateLimits.global` or one entry of `rateLimits.services`. */
export type ScopeLimitEntry = Static<typeof ScopeLimitEntrySchema>
/** `maintenance.global` or one entry of `maintenance.services`. */
export type MaintenanceEntry = Static<typeof MaintenanceEntrySchema>

/** The URL the shipped JSON Schema names as its `$id`. */
export const CONFIG_SCHEMA_ID = 'https://unpkg.com/fastify-switchyard/config.schema.json'

/** The JSON Schema document of {@link ConfigDocumentSchema}, as shipped in `config.schema.json`. */
export function configJsonSchema(): Record<string, unknown> {
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    $id: CONFIG_SCHEMA_ID,
    title: 'switchyard configuration document',
    ...(JSON.parse(JSON.stringify(ConfigDocumentSchema)) as Record<string, unknown>),
  }
}
