/**
 * The admin API's own OpenAPI 3 document, built from the schemas its routes were registered
 * with, so the description cannot drift from the validation. Served at `GET /api/openapi.json`.
 *
 * Why OpenAPI 3.1: its Schema Object is JSON Schema 2020-12, which is what TypeBox emits
 * (`type: "null"` in nullable unions, `const` for literals); OpenAPI 3.0 rejects both.
 * A route schema may name its 2xx media types in `produces` (the event stream does).
 */
import type { FastifySchema, RouteOptions } from 'fastify'

/** A registered admin endpoint, as collected at `onRoute`. */
export interface EndpointRecord {
  method: string
  /** Path relative to the mount, Fastify style (`/api/services/:service/maintenance`). */
  url: string
  schema: FastifySchema | undefined
  public: boolean
}

/** Collects endpoint records from route options (used in the admin app's `onRoute` hook). */
export function endpointRecords(route: RouteOptions, prefix: string): EndpointRecord[] {
  // Hidden routes (the dashboard's HTML pages) are not part of the API.
  if (route.schema?.hide === true) return []
  const methods = Array.isArray(route.method) ? route.method : [route.method]
  const url = route.url.startsWith(prefix) ? route.url.slice(prefix.length) : route.url
  return methods
    .filter((method) => method !== 'HEAD')
    .map((method) => ({
      method,
      url: url === '' ? '/' : url,
      schema: route.schema,
      public: route.config?.public === true,
    }))
}

/** Builds the OpenAPI document of the collected endpoints. */
export function buildOpenApi(endpoints: readonly EndpointRecord[], mountPath: string): object {
  const paths: Record<string, Record<string, unknown>> = {}
  for (const endpoint of endpoints) {
    const path = endpoint.url.replace(/:([A-Za-z0-9_]+)/g, '{$1}')
    const schema = (endpoint.schema ?? {}) as Record<string, unknown>
    const operation: Record<string, unknown> = {
      summary: schema.summary,
      tags: schema.tags,
      parameters: [
        ...pathParameters(endpoint.url, schema.params),
        ...parameters(schema.querystring, 'query'),
      ],
      responses: responses(schema.response, schema.produces),
      ...(endpoint.public ? { security: [] } : {}),
    }
    if (schema.body !== undefined) {
      operation.requestBody = {
        required: true,
        content: { 'application/json': { schema: schema.body } },
      }
    }
    ;(paths[path] ??= {})[endpoint.method.toLowerCase()] = operation
  }
  return {
    openapi: '3.1.0',
    info: { title: 'switchyard admin API', version: '1' },
    servers: [{ url: mountPath }],
    components: {
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer' },
        cookie: { type: 'apiKey', in: 'cookie', name: 'switchyard_session' },
      },
    },
    security: [{ bearer: [] }, { cookie: [] }],
    paths,
  }
}

/**
 * The path parameters of `url`: those its params schema describes, and a plain string for each
 * template segment it does not (a route may skip the schema on a hot path), so the document
 * names every `{param}` of its paths, as OpenAPI requires.
 */
function pathParameters(url: string, schema: unknown): object[] {
  const described = parameters(schema, 'path')
  const names = new Set(described.map((parameter) => (parameter as { name: string }).name))
  const implied = [...url.matchAll(/:([A-Za-z0-9_]+)/g)]
    .map((match) => match[1] ?? '')
    .filter((name) => !names.has(name))
    .map((name) => ({ name, in: 'path', required: true, schema: { type: 'string' } }))
  return [...described, ...implied]
}

function parameters(schema: unknown, where: 'path' | 'query'): object[] {
  const object = schema as { properties?: Record<string, unknown>; required?: string[] } | undefined
  if (object?.properties === undefined) return []
  return Object.entries(object.properties).map(([name, property]) => ({
    name,
    in: where,
    required: where === 'path' || (object.required ?? []).includes(name),
    schema: property,
  }))
}

function responses(schema: unknown, produces: unknown): Record<string, object> {
  const result: Record<string, object> = {}
  const types = Array.isArray(produces) ? (produces as string[]) : ['application/json']
  for (const [status, body] of Object.entries((schema ?? {}) as Record<string, unknown>)) {
    const success = status.startsWith('2')
    // A 204 has no body to describe.
    result[status] =
      status === '204'
        ? { description: 'No content' }
        : {
            description: success ? 'OK' : 'Error',
            content: Object.fromEntries(
              (success ? types : ['application/json']).map((type) => [type, { schema: body }]),
            ),
          }
  }
  if (Object.keys(result).length === 0) result['200'] = { description: 'OK' }
  return result
}
