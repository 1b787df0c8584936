/**
 * `POST /api/evaluation-keys` (the key is in this answer only), `GET /api/evaluation-keys`
 * (never the key: its hint, to recognise it) and `DELETE /api/evaluation-keys/{id}`. Creating
 * and revoking a key are audited (`evaluation_key_created`, `evaluation_key_revoked`).
 */
import { Type } from 'typebox'
import { paginate } from '../../core/pagination.js'
import type {
  EvaluationKeys,
  EvaluationKeyView,
  IssuedEvaluationKey,
} from '../auth/evaluation-keys.js'
import { actorOf } from '../auth/guard.js'
import type { Engine } from '../../core/engine.js'
import { ADMIN_ROLE_ROUTE, type AdminContext, type AdminInstance } from '../context.js'
import { EvaluationKeyNotFoundError } from '../errors.js'
import { Envelope, ErrorBody, PageQuery } from '../schemas.js'

const KeyView = Type.Object({
  id: Type.String(),
  name: Type.String(),
  hint: Type.String({ description: 'First and last characters of the key' }),
  created_at: Type.String(),
  created_by: Type.String(),
  flags: Type.Union([Type.Array(Type.String()), Type.Null()], {
    description:
      'The flags the key may evaluate: exact keys, prefixes (checkout-*) and tags (tag:web); null: every flag',
  }),
})

const IssuedKey = Type.Object({
  ...KeyView.properties,
  key: Type.String({ description: 'The key itself (syk_…): shown in this answer only' }),
})

const errors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody }

/** Audits the creation or revocation of a key (never the key itself: its id and hint). */
function auditEvaluationKey(
  engine: Engine,
  action: 'evaluation_key_created' | 'evaluation_key_revoked',
  key: EvaluationKeyView,
  actor: { actor: string; platform: string },
): void {
  engine.recordOperation({
    action,
    route: `[Evaluation Key ${key.name}]`,
    service: null,
    ...actor,
    reason: `${key.id} (${key.hint})`,
    previous_status: null,
    new_status: null,
  })
}

/** Who acts on a key: the audit entry's actor and platform. */
type KeyActor = { actor: string; platform: string }

/**
 * Creates a key named `name` (limited to the flags matching `flags` when given) and audits it; the answer holds the key (shown this once). The API
 * and the dashboard both create keys through here.
 */
export async function issueEvaluationKey(
  engine: Engine,
  keys: EvaluationKeys,
  name: unknown,
  actor: KeyActor,
  flags?: unknown,
): Promise<IssuedEvaluationKey> {
  const issued = await keys.create(name, actor.actor, flags)
  auditEvaluationKey(engine, 'evaluation_key_created', issued, actor)
  return issued
}

/** Revokes the key `id` and audits it; 404 `EVALUATION_KEY_NOT_FOUND` when there is none. */
export async function revokeEvaluationKey(
  engine: Engine,
  keys: EvaluationKeys,
  id: string,
  actor: KeyActor,
): Promise<EvaluationKeyView> {
  const key = await keys.get(id)
  if (key === null || !(await keys.revoke(id))) {
    throw new EvaluationKeyNotFoundError(`No evaluation key ${id}.`, { id })
  }
  auditEvaluationKey(engine, 'evaluation_key_revoked', key, actor)
  return key
}

/** Registers the evaluation-key endpoints. */
export function evaluationKeyRoutes(
  app: AdminInstance,
  context: AdminContext,
  keys: EvaluationKeys,
): void {
  const { engine } = context

  app.post(
    '/api/evaluation-keys',
    {
      config: ADMIN_ROLE_ROUTE,
      schema: {
        summary: 'Create a read-only OFREP evaluation key; the answer is the only time it is shown',
        tags: ['evaluation-keys'],
        // The patterns are checked by the key service, so that every problem gets one clear
        // message naming the pattern at fault.
        body: Type.Object(
          {
            name: Type.String({ minLength: 1, maxLength: 100 }),
            flags: Type.Optional(
              Type.Array(Type.String(), {
                description:
                  'Limit the key to these flags: exact keys, prefixes such as checkout-* (a * only at the end) and tag:<name>; at most 100 patterns of at most 200 characters. Omit for every flag.',
              }),
            ),
          },
          { additionalProperties: false },
        ),
        response: { 201: IssuedKey, 409: ErrorBody, ...errors },
      },
    },
    async (request, reply) => {
      const actor = actorOf(request)
      const { name, flags } = request.body
      const issued = await issueEvaluationKey(engine, keys, name, actor, flags)
      return reply.status(201).send(issued)
    },
  )

  app.get(
    '/api/evaluation-keys',
    {
      config: ADMIN_ROLE_ROUTE,
      schema: {
        summary: 'Evaluation keys, oldest first (never the keys themselves)',
        tags: ['evaluation-keys'],
        querystring: Type.Object(PageQuery, { additionalProperties: false }),
        response: { 200: Envelope(KeyView), ...errors },
      },
    },
    async (request) =>
      paginate(await keys.list(), { page: request.query.page, perPage: request.query.per_page }),
  )

  app.delete(
    '/api/evaluation-keys/:id',
    {
      config: ADMIN_ROLE_ROUTE,
      schema: {
        summary: 'Revoke an evaluation key on every instance (204)',
        tags: ['evaluation-keys'],
        params: Type.Object({ id: Type.String({ maxLength: 100 }) }),
        response: {
          204: Type.Null({ description: 'No content' }),
          404: ErrorBody,
          ...errors,
        },
      },
    },
    async (request, reply) => {
      const actor = actorOf(request)
      await revokeEvaluationKey(engine, keys, request.params.id, actor)
      return reply.status(204).send(null)
    },
  )
}
