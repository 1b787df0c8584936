/**
 * Flag and segment endpoints (docs/reference/admin-rest.md): list, create, read,
 * replace (`PUT`, 201 when it creates), JSON merge patch, delete (204), the kill switch and
 * evaluation. The flag service validates every write completely (variations, rollouts,
 * prerequisite cycles → 409 `FLAG_PREREQUISITE_CYCLE` with `cycle`) before storing anything.
 *
 * The flag subsystem is optional: the service is the admin app's `flags` option, else the
 * engine's `flags` once the flag subsystem is activated; without one these endpoints answer
 * 404 `FLAGS_NOT_ENABLED`.
 */
import { Type } from 'typebox'
import type { FastifyRequest } from 'fastify'
import { ValidationError } from '../../core/errors.js'
import { FlagNotFoundError, SegmentNotFoundError } from '../../flags/errors.js'
import { FlagInputSchema, SegmentInputSchema } from '../../flags/schemas.js'
import type { FlagService } from '../../flags/service.js'
import { actorOf } from '../auth/guard.js'
import { ADMIN_ROUTE, VIEWER_ROUTE, type AdminInstance } from '../context.js'
import { EndpointNotFoundError, SegmentExistsError } from '../errors.js'
import { ErrorBody } from '../schemas.js'

const KeyParams = Type.Object({ key: Type.String({ minLength: 1, maxLength: 200 }) })
const MergePatch = Type.Record(Type.String(), Type.Unknown(), {
  description: 'JSON merge patch (RFC 7396); `key` and `type` cannot change',
})
const EvaluateBody = Type.Object(
  {
    context: Type.Optional(
      Type.Record(Type.String(), Type.Unknown(), {
        description:
          'Evaluation context: `key` (or `targeting_key`), `kind`, `email`, …, `attributes`',
      }),
    ),
  },
  { additionalProperties: false },
)
const errors = { 400: ErrorBody, 401: ErrorBody, 404: ErrorBody, 409: ErrorBody }
// Flags and segments are described by the flag module's input schemas; answers are the stored
// records (every field present), sent as they are.
const Flag = Type.Unknown({ description: 'The stored flag' })
const Segment = Type.Unknown({ description: 'The stored segment' })
const one = (schema: typeof Flag) => ({ 200: schema, ...errors })
const created = (schema: typeof Flag) => ({ 200: schema, 201: schema, ...errors })
const list = (schema: typeof Flag) => ({ 200: Type.Array(schema), ...errors })
const noContent = { 204: Type.Null({ description: 'No content' }), ...errors }
const Evaluation = Type.Object({
  flag_key: Type.String(),
  value: Type.Unknown(),
  variation: Type.Union([Type.String(), Type.Null()]),
  reason: Type.String(),
  rule_id: Type.Union([Type.String(), Type.Null()]),
  prerequisite_key: Type.Union([Type.String(), Type.Null()]),
  error_message: Type.Union([Type.String(), Type.Null()]),
  metadata: Type.Record(Type.String(), Type.Union([Type.String(), Type.Number(), Type.Boolean()]), {
    description: "The flag's metadata",
  }),
})

/** Where the flag service comes from. */
export type FlagServiceSource = () => FlagService | undefined

/** Registers the flag and segment endpoints. */
export function flagRoutes(app: AdminInstance, source: FlagServiceSource): void {
  const flags = (): FlagService => {
    const service = source()
    if (service === undefined) {
      throw new EndpointNotFoundError('The flag subsystem is not available on this server.')
    }
    return service
  }
  const writeOptions = (request: FastifyRequest) => actorOf(request)

  app.get(
    '/api/flags',
    {
      config: ADMIN_ROUTE,
      schema: { summary: 'Every flag, by key', tags: ['flags'], response: list(Flag) },
    },
    () => flags().listFlags(),
  )

  app.post(
    '/api/flags',
    {
      config: ADMIN_ROUTE,
      schema: {
        summary: 'Create a flag (201); 409 FLAG_EXISTS when the key is taken',
        tags: ['flags'],
        body: FlagInputSchema,
        response: created(Flag),
      },
    },
    async (request, reply) => {
      const flag = await flags().createFlag(request.body, writeOptions(request))
      return reply.status(201).send(flag)
    },
  )

  app.get(
    '/api/flags/:key',
    {
      config: ADMIN_ROUTE,
      schema: { summary: 'One flag', tags: ['flags'], params: KeyParams, response: one(Flag) },
    },
    async (request) => {
      const flag = await flags().getFlag(request.params.key)
      if (flag === null) throw flagNotFound(request.params.key)
      return flag
    },
  )

  app.put(
    '/api/flags/:key',
    {
      config: ADMIN_ROUTE,
      schema: {
        summary: 'Create (201) or replace (200) a flag',
        tags: ['flags'],
        params: KeyParams,
        body: FlagInputSchema,
        response: created(Flag),
      },
    },
    async (request, reply) => {
      checkKeyMatches(request.params.key, request.body.key)
      const service = flags()
      const existed = (await service.getFlag(request.params.key)) !== null
      const flag = await service.saveFlag(request.body, writeOptions(request))
      return reply.status(existed ? 200 : 201).send(flag)
    },
  )

  app.patch(
    '/api/flags/:key',
    {
      config: ADMIN_ROUTE,
      schema: {
        summary: 'Apply a JSON merge patch, validated after merging',
        tags: ['flags'],
        params: KeyParams,
        body: MergePatch,
        response: one(Flag),
      },
    },
    (request) => flags().patchFlag(request.params.key, request.body, writeOptions(request)),
  )

  app.delete(
    '/api/flags/:key',
    {
      config: ADMIN_ROUTE,
      schema: {
        summary: 'Delete a flag (204); 409 FLAG_IN_USE while it is a prerequisite',
        tags: ['flags'],
        params: KeyParams,
        response: noContent,
      },
    },
    async (request, reply) => {
      await flags().deleteFlag(request.params.key, writeOptions(request))
      return reply.status(204).send(null)
    },
  )

  for (const toggle of ['enable', 'disable'] as const) {
    app.post(
      `/api/flags/:key/${toggle}`,
      {
        config: ADMIN_ROUTE,
        schema: {
          summary:
            toggle === 'enable'
              ? 'Kill switch off: the flag serves by its rules'
              : 'Kill switch on: the flag serves off_variation',
          tags: ['flags'],
          params: KeyParams,
          response: one(Flag),
        },
      },
      (request) =>
        toggle === 'enable'
          ? flags().enableFlag(request.params.key, writeOptions(request))
          : flags().disableFlag(request.params.key, writeOptions(request)),
    )
  }

  app.post(
    '/api/flags/:key/evaluate',
    {
      config: VIEWER_ROUTE,
      schema: {
        summary: 'Evaluate a flag for a context',
        tags: ['flags'],
        params: KeyParams,
        body: EvaluateBody,
        response: { 200: Evaluation, ...errors },
      },
    },
    async (request) => {
      const service = flags()
      const key = request.params.key
      if ((await service.getFlag(key)) === null) throw flagNotFound(key)
      const result = service.evaluate(key, request.body.context ?? null)
      return {
        flag_key: key,
        value: result.value,
        variation: result.variation,
        reason: result.reason,
        rule_id: result.rule_id,
        prerequisite_key: result.prerequisite_key,
        error_message: result.error_message,
        metadata: result.metadata,
      }
    },
  )

  app.get(
    '/api/segments',
    {
      config: ADMIN_ROUTE,
      schema: { summary: 'Every segment, by key', tags: ['segments'], response: list(Segment) },
    },
    () => flags().listSegments(),
  )

  app.post(
    '/api/segments',
    {
      config: ADMIN_ROUTE,
      schema: {
        summary: 'Create a segment (201); 409 SEGMENT_EXISTS when the key is taken',
        tags: ['segments'],
        body: SegmentInputSchema,
        response: created(Segment),
      },
    },
    async (request, reply) => {
      const service = flags()
      if ((await service.getSegment(request.body.key)) !== null) {
        throw new SegmentExistsError(`Segment ${request.body.key} already exists.`, {
          key: request.body.key,
        })
      }
      return reply.status(201).send(await service.saveSegment(request.body, writeOptions(request)))
    },
  )

  app.get(
    '/api/segments/:key',
    {
      config: ADMIN_ROUTE,
      schema: {
        summary: 'One segment',
        tags: ['segments'],
        params: KeyParams,
        response: one(Segment),
      },
    },
    async (request) => {
      const segment = await flags().getSegment(request.params.key)
      if (segment === null) {
        throw new SegmentNotFoundError(`Segment ${request.params.key} does not exist.`, {
          key: request.params.key,
        })
      }
      return segment
    },
  )

  app.put(
    '/api/segments/:key',
    {
      config: ADMIN_ROUTE,
      schema: {
        summary: 'Create (201) or replace (200) a segment',
        tags: ['segments'],
        params: KeyParams,
        body: SegmentInputSchema,
        response: created(Segment),
      },
    },
    async (request, reply) => {
      checkKeyMatches(request.params.key, request.body.key)
      const service = flags()
      const existed = (await service.getSegment(request.params.key)) !== null
      const segment = await service.saveSegment(request.body, writeOptions(request))
      return reply.status(existed ? 200 : 201).send(segment)
    },
  )

  app.delete(
    '/api/segments/:key',
    {
      config: ADMIN_ROUTE,
      schema: {
        summary: 'Delete a segment (204); 409 SEGMENT_IN_USE while a flag uses it',
        tags: ['segments'],
        params: KeyParams,
        response: noContent,
      },
    },
    async (request, reply) => {
      await flags().deleteSegment(request.params.key, writeOptions(request))
      return reply.status(204).send(null)
    },
  )
}

function flagNotFound(key: string): FlagNotFoundError {
  return new FlagNotFoundError(`Flag ${key} does not exist.`, { key })
}

function checkKeyMatches(pathKey: string, bodyKey: string): void {
  if (pathKey !== bodyKey) {
    throw new ValidationError(
      `The key in the body (${JSON.stringify(bodyKey)}) must match the key in the path (${JSON.stringify(pathKey)}).`,
      { details: [{ field: 'key', message: 'must match the path' }] },
    )
  }
}
