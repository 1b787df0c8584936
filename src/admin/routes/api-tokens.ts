/**
 * `POST /api/tokens` (the token is in this answer only), `GET /api/tokens` (never the token nor
 * its hash) and `DELETE /api/tokens/{id}`, all for admins only. Creating and revoking a token
 * are audited (`api_token_created`, `api_token_revoked`), never with the token itself.
 */
import { Type } from 'typebox'
import type { Engine } from '../../core/engine.js'
import type {
  ApiTokenRequest,
  ApiTokens,
  ApiTokenView,
  IssuedApiToken,
} from '../auth/api-tokens.js'
import { actorOf } from '../auth/guard.js'
import { ADMIN_ROLE_ROUTE, type AdminContext, type AdminInstance } from '../context.js'
import { ApiTokenNotFoundError } from '../errors.js'
import { ErrorBody, Nullable, RoleSchema } from '../schemas.js'

const TokenView = Type.Object({
  id: Type.String(),
  name: Type.String(),
  role: RoleSchema,
  service: Nullable(Type.String({ description: 'The one service a service token may act on' })),
  created_at: Type.String(),
  expires_at: Nullable(Type.String()),
  last_used_at: Nullable(
    Type.String({ description: 'When the token was last used (recorded at most once a minute)' }),
  ),
})

const IssuedToken = Type.Object({
  id: Type.String(),
  name: Type.String(),
  role: RoleSchema,
  service: Nullable(Type.String()),
  token: Type.String({ description: 'The token itself (syt_…): shown in this answer only' }),
  created_at: Type.String(),
  expires_at: Nullable(Type.String()),
})

const CreateBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 64, description: '[A-Za-z0-9._-], unique' }),
    role: Type.Optional(
      Type.String({
        maxLength: 20,
        description: 'viewer, operator or admin; a service token is always operator',
      }),
    ),
    service: Type.Optional(
      Nullable(Type.String({ maxLength: 63, description: 'Makes it a service token' })),
    ),
    expires_at: Type.Optional(
      Nullable(Type.String({ maxLength: 64, description: 'ISO 8601, in the future' })),
    ),
  },
  { additionalProperties: false },
)

const errors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody }

/** Who acts on a token: the audit entry's actor and platform. */
type TokenActor = { actor: string; platform: string }

/** Audits the creation or revocation of a token (its id and name, never the token). */
function auditApiToken(
  engine: Engine,
  action: 'api_token_created' | 'api_token_revoked',
  token: Pick<ApiTokenView, 'id' | 'name' | 'role' | 'service'>,
  actor: TokenActor,
): void {
  engine.recordOperation({
    action,
    route: `[API Token ${token.name}]`,
    service: token.service,
    ...actor,
    reason: `${token.id} (${token.role}${token.service === null ? '' : ` of ${token.service}`})`,
    previous_status: null,
    new_status: null,
  })
}

/**
 * Creates a token and audits it; the answer holds the token (shown this once). The API and the
 * dashboard both create tokens through here.
 */
export async function issueApiToken(
  engine: Engine,
  tokens: ApiTokens,
  request: ApiTokenRequest,
  actor: TokenActor,
): Promise<IssuedApiToken> {
  const issued = await tokens.create(request, actor.actor)
  auditApiToken(engine, 'api_token_created', issued, actor)
  return issued
}

/** Revokes the token `id` and audits it; 404 `API_TOKEN_NOT_FOUND` when there is none. */
export async function revokeApiToken(
  engine: Engine,
  tokens: ApiTokens,
  id: string,
  actor: TokenActor,
): Promise<ApiTokenView> {
  const token = await tokens.get(id)
  if (token === null || !(await tokens.revoke(id))) {
    throw new ApiTokenNotFoundError(`No API token ${id}.`, { id })
  }
  auditApiToken(engine, 'api_token_revoked', token, actor)
  return token
}

/** Registers the API-token endpoints. */
export function apiTokenRoutes(app: AdminInstance, context: AdminContext): void {
  const { engine, apiTokens: tokens } = context

  app.post(
    '/api/tokens',
    {
      config: ADMIN_ROLE_ROUTE,
      schema: {
        summary:
          'Create an API token (a service token with `service`); the answer is the only time it is shown',
        tags: ['tokens'],
        body: CreateBody,
        response: { 201: IssuedToken, 409: ErrorBody, ...errors },
      },
    },
    async (request, reply) => {
      const issued = await issueApiToken(engine, tokens, request.body, actorOf(request))
      return reply.status(201).send(issued)
    },
  )

  app.get(
    '/api/tokens',
    {
      config: ADMIN_ROLE_ROUTE,
      schema: {
        summary: 'API tokens, oldest first (never the tokens themselves)',
        tags: ['tokens'],
        response: { 200: Type.Object({ tokens: Type.Array(TokenView) }), ...errors },
      },
    },
    async () => ({ tokens: await tokens.list() }),
  )

  app.delete(
    '/api/tokens/:id',
    {
      config: ADMIN_ROLE_ROUTE,
      schema: {
        summary: 'Revoke an API token on every instance; its open event streams end (204)',
        tags: ['tokens'],
        params: Type.Object({ id: Type.String({ maxLength: 100 }) }),
        response: { 204: Type.Null({ description: 'No content' }), 404: ErrorBody, ...errors },
      },
    },
    async (request, reply) => {
      await revokeApiToken(engine, tokens, request.params.id, actorOf(request))
      return reply.status(204).send(null)
    },
  )
}
