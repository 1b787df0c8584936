import swagger, { type FastifyStaticSwaggerOptions } from '@fastify/swagger'
import Fastify from 'fastify'
import { afterEach, describe, expect, it } from 'vitest'
import { ConfigError, createEngine } from '../../src/index.js'
import { disabled, switchyard } from '../../src/fastify/index.js'
import { openApiFilterOf } from '../../src/fastify/openapi.js'
import { FakeClock } from '../helpers/clock.js'
import { expectValidOpenApi } from '../helpers/openapi.js'
import {
  addDocumentedRoutes,
  buildDocsApp,
  closeDocsApps,
  closeLater,
  fetchJson,
  operation,
  operations,
  OPENAPI,
  type Doc,
} from './openapi-helpers.js'

afterEach(closeDocsApps)

const silent = { warn: () => undefined, error: () => undefined }

describe('where @fastify/swagger is registered', () => {
  it('after the plugin: wrapped when the app is ready, filtered all the same', async () => {
    const { app, engine } = await buildDocsApp({ order: 'after' })
    expect(openApiFilterOf(app.swagger)).toBeDefined()
    const doc = await fetchJson(app)
    expect(doc.paths['/legacy']).toBeUndefined()
    await engine.disable('GET:/orders')
    expect(operations(await fetchJson(app))).not.toContain('GET /orders')
  })

  it('in a plugin context below the plugin: that context’s decorator is wrapped', async () => {
    const { app, engine } = await buildDocsApp({ order: 'child' })
    const doc = await fetchJson(app)
    expect(doc.paths['/debug']).toBeUndefined()
    expect(operation(doc, 'GET', '/payments')['x-switchyard-status']).toBe('maintenance')
    await engine.disable('GET:/orders')
    expect(operations(await fetchJson(app))).not.toContain('GET /orders')
  })

  it('openapi: false serves the document exactly as @fastify/swagger builds it', async () => {
    const { app } = await buildDocsApp({ plugin: { openapi: false } })
    expect(openApiFilterOf(app.swagger)).toBeUndefined()
    const doc = await fetchJson(app)
    expect(operations(doc)).toContain('GET /legacy')
    expect(operation(doc, 'GET', '/payments')).not.toHaveProperty('x-switchyard-status')
  })

  it("the switchyard admin API stays out of the app's document (it has its own)", async () => {
    const admin = { path: '/switchyard', auth: { username: 'a', password: 'b' } }
    const { app } = await buildDocsApp({ plugin: { admin } })
    const doc = await fetchJson(app)
    expect(operations(doc)).toContain('GET /orders')
    expect(Object.keys(doc.paths).filter((path) => path.startsWith('/switchyard'))).toEqual([])
    const { app: unfiltered } = await buildDocsApp({ plugin: { admin, openapi: false } })
    expect(operations(await fetchJson(unfiltered))).toContain('GET /switchyard/api/routes')
  })

  it('a renamed decorator is filtered when named in the openapi option', async () => {
    const { app, engine } = await buildDocsApp({
      swagger: { ...OPENAPI, decorator: 'apiDoc' },
      ui: false,
      plugin: { openapi: { decorator: 'apiDoc' } },
    })
    const apiDoc = (app as unknown as { apiDoc: () => Doc }).apiDoc
    await expectValidOpenApi(apiDoc())
    expect(apiDoc().paths['/legacy']).toBeUndefined()
    await engine.disable('GET:/orders')
    expect(operations(apiDoc())).not.toContain('GET /orders')
  })

  it('a decorator named in the openapi option that nobody registers fails the start', async () => {
    const engine = createEngine({ store: 'memory', logger: silent })
    const app = Fastify()
    closeLater(app)
    app.addHook('onClose', () => engine.close())
    await app.register(swagger, OPENAPI)
    await app.register(switchyard, { engine, openapi: { decorator: 'apiDocs' } })
    const error: unknown = await app.ready().then(
      () => null,
      (failure: unknown) => failure,
    )
    expect(error).toBeInstanceOf(ConfigError)
    expect((error as Error).message).toContain(
      'openapi.decorator is "apiDocs", but no such @fastify/swagger decorator is registered',
    )
  })

  it('an openapi option of the wrong type is a ConfigError at registration', async () => {
    const engine = createEngine({ store: 'memory', logger: silent })
    const app = Fastify()
    closeLater(app)
    app.addHook('onClose', () => engine.close())
    const options = { engine, openapi: 'yes' } as unknown as Parameters<typeof switchyard>[1]
    await expect(app.register(switchyard, options)).rejects.toThrow(ConfigError)
  })
})

describe('document forms', () => {
  it("never mutates @fastify/swagger's own cached document", async () => {
    const clock = new FakeClock()
    const engine = createEngine({ store: 'memory', env: 'prod', service: 'shop', clock })
    const app = Fastify()
    closeLater(app)
    app.addHook('onClose', () => engine.close())
    await app.register(swagger, OPENAPI)
    const unfiltered = app.swagger
    await app.register(switchyard, { engine })
    addDocumentedRoutes(app, clock)
    await app.ready()
    const source = structuredClone(unfiltered())
    expect(operations(source as Doc)).toContain('GET /legacy')
    await engine.setMaintenance('GET:/orders', { reason: 'x' })
    await engine.enableGlobalMaintenance({ reason: 'y' })
    clock.advance(3_600_000)
    app.swagger()
    app.swagger({ yaml: true })
    expect(unfiltered()).toEqual(source)
  })

  it('Swagger 2 (swagger mode): filtered the same way, still a valid Swagger 2.0 document', async () => {
    const { app, engine } = await buildDocsApp({
      swagger: { swagger: { info: { title: 'shop', version: '1.0.0' } } },
    })
    const doc = await fetchJson(app)
    expect(doc.swagger).toBe('2.0')
    expect(doc.paths['/legacy']).toBeUndefined()
    expect(operation(doc, 'GET', '/v1/users').deprecated).toBe(true)
    await engine.enableGlobalMaintenance({ reason: 'z' })
    const marked = await fetchJson(app)
    expect(operation(marked, 'GET', '/orders')['x-switchyard-status']).toBe('maintenance')
  })

  it('static mode: operations matched by path template, under the servers base path', async () => {
    const specification: FastifyStaticSwaggerOptions['specification'] = {
      document: {
        openapi: '3.0.3',
        info: { title: 'static', version: '1' },
        servers: [{ url: 'https://{host}/api', variables: { host: { default: 'example.com' } } }],
        paths: {
          '/orders/{orderId}': {
            get: {
              parameters: [
                { name: 'orderId', in: 'path', required: true, schema: { type: 'string' } },
              ],
              responses: { 200: { description: 'One order' } },
            },
          },
          '/legacy': { get: { responses: { 200: { description: 'Old' } } } },
          '/elsewhere': { get: { responses: { 200: { description: 'Not served here' } } } },
        },
      },
    }
    const source = structuredClone(specification)
    const { app, engine } = await buildDocsApp({
      swagger: { mode: 'static', specification },
      routes: (scope) =>
        scope.register(
          (api, _options, done) => {
            api.get('/orders/:id', () => ({}))
            api.get('/legacy', { onRequest: disabled({ reason: 'old' }) }, () => ({}))
            done()
          },
          { prefix: '/api' },
        ),
    })
    const doc = await fetchJson(app)
    expect(operations(doc)).toEqual(['GET /elsewhere', 'GET /orders/{orderId}'])
    await engine.setMaintenance('GET:/api/orders/:id', { reason: 'moving' })
    const marked = operation(await fetchJson(app), 'GET', '/orders/{orderId}')
    expect(marked['x-switchyard-status']).toBe('maintenance')
    expect(specification).toEqual(source)
  })

  it('OpenAPI 3.1 from dynamic mode stays valid', async () => {
    const { app } = await buildDocsApp({
      swagger: { openapi: { openapi: '3.1.0', info: { title: 'shop', version: '1.0.0' } } },
    })
    const doc = await fetchJson(app)
    expect(doc.openapi).toBe('3.1.0')
    expect(doc.paths['/legacy']).toBeUndefined()
  })

  it('served over real HTTP: /docs/json and /docs/yaml', async () => {
    const { app, engine } = await buildDocsApp()
    const base = await app.listen({ host: '127.0.0.1', port: 0 })
    await engine.disable('GET:/orders')
    const json = (await (await fetch(`${base}/docs/json`)).json()) as Doc
    expect(operations(json)).not.toContain('GET /orders')
    const yaml = await fetch(`${base}/docs/yaml`)
    expect(yaml.headers.get('content-type')).toContain('application/x-yaml')
    const text = await yaml.text()
    expect(text).toContain('x-switchyard-status: maintenance')
    expect(text).not.toContain('/legacy')
  })
})
