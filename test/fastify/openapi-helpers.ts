import swagger, { type FastifyDynamicSwaggerOptions, type SwaggerOptions } from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import Fastify, { type FastifyInstance } from 'fastify'
import { parse } from 'yaml'
import { createEngine, type Engine } from '../../src/index.js'
import {
  deprecated,
  disabled,
  envOnly,
  forceActive,
  maintenance,
  switchyard,
  type SwitchyardPluginOptions,
} from '../../src/fastify/index.js'
import { FakeClock } from '../helpers/clock.js'
import { expectValidOpenApi } from '../helpers/openapi.js'

/** An OpenAPI / Swagger document as served. */
export type Doc = {
  paths: Record<string, Record<string, Operation>>
  tags?: { name: string }[]
  [key: string]: unknown
}
/** One operation of a served document. */
export type Operation = {
  description?: string
  deprecated?: boolean
  tags?: string[]
  'x-switchyard-status'?: string
}

/** One hour in ms. */
export const HOUR = 3_600_000

/**
 * The routes every OpenAPI test documents (service `shop`, env `prod`): /orders (GET, POST),
 * /orders/:id, /payments (maintenance, no window), /reports (maintenance window one to two
 * hours ahead), /legacy (disabled), /debug (dev only), /prod-tools (prod only), /v1/users
 * (deprecated), /health (force-active). Tags: orders, payments, legacy, debug, users.
 */
export function addDocumentedRoutes(app: FastifyInstance, clock: FakeClock): void {
  const ok = () => ({ ok: true })
  app.get('/orders', { schema: { tags: ['orders'], summary: 'List orders' } }, ok)
  app.post('/orders', { schema: { tags: ['orders'] } }, ok)
  app.get('/orders/:id', { schema: { tags: ['orders'] } }, ok)
  app.get(
    '/payments',
    {
      schema: { tags: ['payments'], description: 'Takes payments.' },
      onRequest: maintenance({ reason: 'DB migration' }),
    },
    ok,
  )
  app.get(
    '/reports',
    {
      onRequest: maintenance({
        reason: 'Reindex',
        start: new Date(clock.time + HOUR),
        end: new Date(clock.time + 2 * HOUR),
      }),
    },
    ok,
  )
  app.get(
    '/legacy',
    { schema: { tags: ['legacy'] }, onRequest: disabled({ reason: 'Replaced' }) },
    ok,
  )
  app.get('/debug', { schema: { tags: ['debug'] }, onRequest: envOnly('dev') }, ok)
  app.get('/prod-tools', { onRequest: envOnly('prod') }, ok)
  app.get(
    '/v1/users',
    {
      schema: { tags: ['users'] },
      onRequest: deprecated({
        sunset: 'Sat, 01 Jan 2028 00:00:00 GMT',
        useInstead: '/v2/users',
      }),
    },
    ok,
  )
  app.get('/health', { onRequest: forceActive() }, ok)
}

/** Options of {@link buildDocsApp}. */
export interface DocsAppOptions {
  /** Where @fastify/swagger is registered relative to the plugin (default `before`). */
  order?: 'before' | 'after' | 'child'
  swagger?: SwaggerOptions
  plugin?: Omit<SwitchyardPluginOptions, 'engine'>
  /** Register @fastify/swagger-ui at /docs (default true). */
  ui?: boolean
  /** Adds the app's routes (default {@link addDocumentedRoutes}). */
  routes?: (app: FastifyInstance, clock: FakeClock) => unknown
}

const TAGS = ['orders', 'payments', 'legacy', 'debug', 'users', 'unused'].map((name) => ({
  name,
  description: `The ${name} operations`,
}))

/** Default @fastify/swagger options: OpenAPI 3.0.3, dynamic mode, the tags above. */
export const OPENAPI: FastifyDynamicSwaggerOptions = {
  openapi: { openapi: '3.0.3', info: { title: 'shop', version: '1.0.0' }, tags: TAGS },
}

const opened: FastifyInstance[] = []

/** Has {@link closeDocsApps} close `app` (an app a test built itself). */
export function closeLater(app: FastifyInstance): void {
  opened.push(app)
}

/** Closes every app {@link buildDocsApp} built (and {@link closeLater} got); use in `afterEach`. */
export async function closeDocsApps(): Promise<void> {
  await Promise.all(opened.splice(0).map((app) => app.close()))
}

/**
 * An app with @fastify/swagger (+ swagger-ui at /docs), the switchyard plugin and the documented
 * routes, on a memory engine with a fake clock; ready, and closed by {@link closeDocsApps}.
 */
export async function buildDocsApp(
  options: DocsAppOptions = {},
): Promise<{ app: FastifyInstance; engine: Engine; clock: FakeClock }> {
  const clock = new FakeClock()
  const engine = createEngine({
    store: 'memory',
    env: 'prod',
    service: 'shop',
    clock,
    logger: { warn: () => undefined, error: () => undefined },
  })
  const app = Fastify()
  closeLater(app)
  const docs = async (scope: FastifyInstance) => {
    await scope.register(swagger, options.swagger ?? OPENAPI)
    if (options.ui !== false) await scope.register(swaggerUi, { routePrefix: '/docs' })
  }
  const order = options.order ?? 'before'
  if (order === 'before') await docs(app)
  await app.register(switchyard, { engine, ...options.plugin })
  if (order === 'after') await docs(app)
  // Awaiting through Promise.resolve accepts both plain and promise-returning route adders.
  const routes = (scope: FastifyInstance, at: FakeClock): Promise<unknown> =>
    Promise.resolve((options.routes ?? addDocumentedRoutes)(scope, at))
  if (order === 'child') {
    await app.register(async (child) => {
      await docs(child)
      await routes(child, clock)
    })
  } else {
    await routes(app, clock)
  }
  app.addHook('onClose', async () => {
    await engine.close()
  })
  await app.ready()
  return { app, engine, clock }
}

/** GET /docs/json, checked to be a valid document. */
export async function fetchJson(app: FastifyInstance): Promise<Doc> {
  const response = await app.inject('/docs/json')
  if (response.statusCode !== 200) throw new Error(`/docs/json answered ${response.statusCode}`)
  const doc = response.json<Doc>()
  await expectValidOpenApi(doc)
  return doc
}

/** GET /docs/yaml, parsed. */
export async function fetchYaml(app: FastifyInstance): Promise<Doc> {
  const response = await app.inject('/docs/yaml')
  if (response.statusCode !== 200) throw new Error(`/docs/yaml answered ${response.statusCode}`)
  return parse(response.body) as Doc
}

/** `METHOD path` of every operation of a document, sorted. */
export function operations(doc: Doc): string[] {
  return Object.entries(doc.paths)
    .flatMap(([path, item]) => Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`))
    .sort()
}

/** One operation of a document, or throws. */
export function operation(doc: Doc, method: string, path: string): Operation {
  const found = doc.paths[path]?.[method.toLowerCase()]
  if (found === undefined) throw new Error(`${method} ${path} is not in the document`)
  return found
}
