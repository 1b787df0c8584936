/**
 * The wire of multi-service mode: what an SDK app and the central server exchange.
 *
 * - `POST {admin}/api/sdk/register` `{app_id, routes: [declared route]}` answers
 *   `{states, vanished}`: the state every route has now (a runtime state on the server wins
 *   over the declaration), and the route keys the app registered before but declares no more.
 * - `GET {admin}/api/sdk/events?app_id=` is a server-sent event stream: one `snapshot` event
 *   (everything the app enforces), then every change of its service and of the global scope,
 *   with the event types and data of the admin stream (`route_state`, `global_maintenance`,
 *   `service_maintenance`, `rl_policy`, `global_rl_policy`, `service_rl_policy`, `flag`,
 *   `segment`).
 * - `POST {admin}/api/sdk/report` `{app_id, hits, audit}` carries the app's blocked requests and
 *   audit entries to the server, batched.
 *
 * The schemas here validate the requests on the server (a malformed body is a 400 that changes
 * nothing) and are the types both sides share.
 *
 * Forward compatibility: the request objects leave `additionalProperties` open, so an SDK one
 * minor version newer may send fields this server does not know; they are accepted, and
 * {@link knownFields} drops them before anything is stored. Every request and stream carries
 * the SDK's protocol version ({@link PROTOCOL_HEADER}); the server answers with its own.
 */
import { Type, type Static, type TSchema } from 'typebox'
import { Value } from 'typebox/value'
import type { MaintenanceConfig } from '../core/maintenance.js'
import type { RouteState } from '../core/route-state.js'
import { SERVICE_NAME_PATTERN } from '../core/service-name.js'
import { RouteStatusSchema } from '../admin/schemas.js'
import type { Flag, Segment } from '../flags/model.js'
import type { RateLimitPolicy, ScopeRateLimitPolicy } from '../rate-limit/policy.js'

/**
 * The protocol version of this side of the wire, `major.minor`. A minor bump adds event types,
 * fields or endpoints that the other side may ignore; a major bump changes or removes
 * something, and the two sides then refuse each other.
 */
export const PROTOCOL_VERSION = '1.1'

/** The header carrying the sender's protocol version on every SDK request and server answer. */
export const PROTOCOL_HEADER = 'switchyard-protocol'

/** A parsed protocol version. */
export interface ProtocolVersion {
  major: number
  minor: number
}

/** The protocol version an SDK that sends no header speaks: the first one. */
export const OLDEST_PROTOCOL: ProtocolVersion = { major: 1, minor: 0 }

/**
 * Parses a protocol header: `undefined` (no header) is the oldest version; anything but
 * `major.minor` (digits, at most 6 each) is null. Extra parts (`1.2.3`) are refused too, so a
 * typo is not taken for a compatible version.
 */
export function parseProtocol(value: string | undefined): ProtocolVersion | null {
  if (value === undefined) return OLDEST_PROTOCOL
  const match = /^(\d{1,6})\.(\d{1,6})$/.exec(value.trim())
  if (match === null) return null
  return { major: Number(match[1]), minor: Number(match[2]) }
}

/** True when a peer speaking `version` works with this side: same major, any minor. */
export function protocolCompatible(version: ProtocolVersion): boolean {
  return version.major === OWN_MAJOR
}

/** The major version of {@link PROTOCOL_VERSION}. */
const OWN_MAJOR = Number(PROTOCOL_VERSION.split('.')[0])

/**
 * `value` (a request that passed `schema`) without the fields the schema does not name, at any
 * depth: what a newer SDK added is ignored, never stored.
 */
export function knownFields<T extends TSchema>(schema: T, value: unknown): Static<T> {
  return Value.Clean(schema, structuredClone(value)) as Static<T>
}

/** Most routes one registration may declare. */
export const MAX_REGISTERED_ROUTES = 2000

/** Most hits, and most audit entries, one report may carry. */
export const MAX_REPORT_ITEMS = 500

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()])
const Text = (maxLength: number) => Type.String({ maxLength })

/** An SDK app id: a service name. */
export const AppId = Type.String({
  pattern: SERVICE_NAME_PATTERN,
  description: 'The app id: its service name',
})

/** One declared route, as the app's decorators declare it. */
export const DeclaredRouteSchema = Type.Object(
  {
    route: Type.String({
      minLength: 3,
      maxLength: 2000,
      pattern: '^[A-Z]+:/',
      description: 'Route key `METHOD:/path`',
    }),
    status: RouteStatusSchema,
    reason: Type.Optional(Text(1000)),
    envs: Type.Optional(Type.Array(Text(100), { maxItems: 50 })),
    force_active: Type.Optional(Type.Boolean()),
    window: Type.Optional(
      Nullable(Type.Object({ start: Nullable(Text(64)), end: Nullable(Text(64)) })),
    ),
    sunset: Type.Optional(Nullable(Text(100))),
    use_instead: Type.Optional(Nullable(Text(2000))),
    deprecated_since: Type.Optional(Nullable(Text(64))),
  },
  { description: 'Fields this version does not name are accepted and ignored' },
)

/** One declared route. */
export type DeclaredRoute = Static<typeof DeclaredRouteSchema>

/** The body of `POST /api/sdk/register`. */
export const RegisterBody = Type.Object(
  {
    app_id: AppId,
    routes: Type.Array(DeclaredRouteSchema, { maxItems: MAX_REGISTERED_ROUTES }),
  },
  { description: 'Fields this version does not name are accepted and ignored' },
)

/** The body of `POST /api/sdk/register`. */
export type RegisterRequest = Static<typeof RegisterBody>

/** The answer of `POST /api/sdk/register`. */
export interface RegisterAnswer {
  /** The state of every declared route now (a runtime state on the server wins). */
  states: RouteState[]
  /** Route keys registered before under this app id and declared no more. */
  vanished: string[]
}

/** The query of `GET /api/sdk/events`. */
export const EventsQuery = Type.Object({ app_id: AppId })

/** A blocked request reported by an app (the blocked-request record). */
export const ReportedHitSchema = Type.Object(
  {
    id: Text(100),
    timestamp: Text(64),
    path: Text(2000),
    method: Text(20),
    service: Type.Optional(Nullable(Text(100))),
    key: Text(500),
    limit: Text(100),
    tier: Nullable(Text(100)),
    reset_at: Text(64),
  },
  { description: 'Fields this version does not name are accepted and ignored' },
)

/** An audit entry reported by an app (its service is the app id, whatever it says). */
export const ReportedAuditSchema = Type.Object(
  {
    action: Type.String({ minLength: 1, maxLength: 100 }),
    route: Type.String({ minLength: 1, maxLength: 2000 }),
    actor: Text(200),
    reason: Text(1000),
    previous_status: Nullable(Text(100)),
    new_status: Nullable(Text(100)),
  },
  { description: 'Fields this version does not name are accepted and ignored' },
)

/** The body of `POST /api/sdk/report`. */
export const ReportBody = Type.Object(
  {
    app_id: AppId,
    hits: Type.Array(ReportedHitSchema, { maxItems: MAX_REPORT_ITEMS }),
    audit: Type.Array(ReportedAuditSchema, { maxItems: MAX_REPORT_ITEMS }),
  },
  { description: 'Fields this version does not name are accepted and ignored' },
)

/** The body of `POST /api/sdk/report`. */
export type ReportRequest = Static<typeof ReportBody>

/** The data of the `snapshot` event: everything an app of one service enforces. */
export interface SdkSnapshot {
  app_id: string
  /** The server's protocol version (absent from servers before 1.1). */
  protocol?: string
  /** Runtime states of the service's routes (routes without one follow their declaration). */
  routes: RouteState[]
  global_maintenance: MaintenanceConfig
  service_maintenance: MaintenanceConfig
  global_rl_policy: ScopeRateLimitPolicy | null
  service_rl_policy: ScopeRateLimitPolicy | null
  /** Runtime route policies of the service. */
  rl_policies: RateLimitPolicy[]
  flags: Flag[]
  segments: Segment[]
}
