/**
 * TypeBox schemas of the rate-limit endpoints. Names and values (limit strings, algorithms, key
 * strategies) are checked by the rate-limit module itself, which owns their rules and their
 * messages; these schemas fix the shape of the JSON.
 */
import { Type, type TSchema } from 'typebox'
import { ALGORITHMS } from '../rate-limit/algorithms.js'
import { KEY_STRATEGIES, MISSING_KEY_BEHAVIOURS } from '../rate-limit/keys.js'
import { PageQuery } from './schemas.js'

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()])
const Name = (description: string) => Type.String({ minLength: 1, maxLength: 100, description })
/** `a, b or c`: the values a field takes, from the list the rate-limit module checks against. */
const oneOf = (values: readonly string[]) =>
  `${values.slice(0, -1).join(', ')} or ${values[values.length - 1] ?? ''}`
const AlgorithmName = Name(`${oneOf(ALGORITHMS)}; default ${ALGORITHMS[0]}`)
const KeyStrategyName = Name(
  `${oneOf(KEY_STRATEGIES.filter((strategy) => strategy !== 'custom'))}; default ip (custom needs a key function, so only the decorator sets it)`,
)
const OnMissingKey = Name(
  `${oneOf(MISSING_KEY_BEHAVIOURS)}; null or absent: the key strategy's default (user: exempt, api_key: fallback_ip)`,
)
const LimitString = Type.String({
  minLength: 1,
  maxLength: 100,
  description: 'Limit string `<count>/<period>` or `<count>/<n> <period>`, e.g. `100/minute`',
})

/** A per-route policy as stored and returned (extra members of newer versions pass through). */
export const RoutePolicySchema = Type.Object(
  {
    service: Type.String(),
    path: Type.String(),
    method: Type.String(),
    limit: Type.String(),
    algorithm: Type.String(),
    key_strategy: Type.String(),
    on_missing_key: Nullable(Type.String()),
    burst: Type.Integer(),
    tiers: Type.Array(Type.Object({ name: Type.String(), limit: Type.String() })),
    default_tier: Nullable(Type.String()),
  },
  { additionalProperties: true },
)

/** The global or a service policy. */
export const ScopePolicySchema = Type.Object(
  {
    limit: Type.String(),
    algorithm: Type.String(),
    key_strategy: Type.String(),
    on_missing_key: Nullable(Type.String()),
    burst: Type.Integer(),
    exempt_routes: Type.Array(Type.String()),
    enabled: Type.Boolean(),
  },
  { additionalProperties: true },
)

/** `{"policy": ... | null}`: answer of the global and service policy endpoints. */
export const ScopePolicyAnswer = Type.Object({ policy: Nullable(ScopePolicySchema) })

/** Body of `POST /api/rate-limits`. */
export const SetRoutePolicyBody = Type.Object(
  {
    path: Type.String({ minLength: 1, maxLength: 2000 }),
    method: Type.String({ minLength: 1, maxLength: 10 }),
    limit: LimitString,
    algorithm: Type.Optional(AlgorithmName),
    key_strategy: Type.Optional(KeyStrategyName),
    on_missing_key: Type.Optional(Nullable(OnMissingKey)),
    burst: Type.Optional(Type.Integer({ minimum: 0, description: 'Extra requests allowed' })),
    service: Type.Optional(Name('Service of the route')),
  },
  { additionalProperties: false },
)

/** Body of `PUT /api/global-rate-limit` and `PUT /api/services/{service}/rate-limit`. */
export const SetScopePolicyBody = Type.Object(
  {
    limit: LimitString,
    algorithm: Type.Optional(AlgorithmName),
    key_strategy: Type.Optional(KeyStrategyName),
    on_missing_key: Type.Optional(Nullable(OnMissingKey)),
    burst: Type.Optional(Type.Integer({ minimum: 0 })),
    exempt_routes: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 2000 }), {
        maxItems: 1000,
        description: '`/path` or `METHOD:/path` entries the policy does not count',
      }),
    ),
    enabled: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
)

/** Query of `GET /api/rate-limits`. */
export const PolicyListQuery = Type.Object(
  { service: Type.Optional(Name('Only this service')), ...PageQuery },
  { additionalProperties: false },
)

/** Query of `DELETE /api/rate-limits`. */
export const RouteQuery = Type.Object(
  {
    route: Type.String({ minLength: 1, maxLength: 2000, description: '`METHOD:/path` or `/path`' }),
    service: Type.Optional(Name('Service of the route')),
  },
  { additionalProperties: false },
)

/** Body of `POST /api/rate-limits/reset`. */
export const ResetBody = Type.Object(
  {
    route: Type.String({ minLength: 1, maxLength: 2000, description: '`METHOD:/path` or `/path`' }),
    service: Type.Optional(Name('Service of the route')),
  },
  { additionalProperties: false },
)

/** Query of `GET /api/rate-limits/hits`. */
export const HitsQuery = Type.Object(
  {
    route: Type.Optional(
      Type.String({ minLength: 1, maxLength: 2000, description: 'Route path filter' }),
    ),
    service: Type.Optional(
      Type.String({ minLength: 1, maxLength: 63, description: 'Service filter' }),
    ),
    ...PageQuery,
  },
  { additionalProperties: false },
)

/** One blocked request. */
export const HitSchema = Type.Object(
  {
    id: Type.String(),
    timestamp: Type.String(),
    path: Type.String(),
    method: Type.String(),
    service: Type.Optional(Nullable(Type.String())),
    key: Type.String(),
    limit: Type.String(),
    tier: Nullable(Type.String()),
    reset_at: Type.String(),
  },
  { additionalProperties: true },
)

/** Answer of `DELETE /api/rate-limits`. */
export const DeletedCount = Type.Object({ deleted: Type.Integer() })

/** Answer of the scope `DELETE` endpoints. */
export const DeletedFlag = Type.Object({ deleted: Type.Boolean() })

/** Answer of the reset endpoints. */
export const ResetAnswer = Type.Object({ reset: Type.Boolean() })
