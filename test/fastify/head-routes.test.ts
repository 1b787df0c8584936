import Fastify, {
  type FastifyInstance,
  type FastifyServerOptions,
  type RouteShorthandOptions,
} from 'fastify'
import { afterEach, describe, expect, it } from 'vitest'
import { createEngine, type Engine } from '../../src/index.js'
import { disabled, switchyard } from '../../src/fastify/index.js'

const apps: Array<{ close(): Promise<unknown> }> = []
afterEach(async () => {
  await Promise.all(apps.splice(0).map((app) => app.close()))
})

/** An app with the plugin and a plugin under `prefix` declaring `get('/')` with `routeOptions`. */
async function prefixRoot(
  prefix: string,
  routeOptions: RouteShorthandOptions = {},
  appOptions: FastifyServerOptions = {},
) {
  const app = Fastify(appOptions)
  apps.push(app)
  const engine = createEngine({ store: 'memory' })
  await app.register(switchyard, { engine })
  await app.register(
    (child, _options, done) => {
      child.get('/', routeOptions, () => 'tasks')
      done()
    },
    { prefix },
  )
  await app.ready()
  return { app, engine }
}

function routeKeys(engine: Engine): string[] {
  return engine.listRoutes().items.map((state) => state.route)
}

async function statuses(app: Awaited<ReturnType<typeof prefixRoot>>['app'], url: string) {
  const get = await app.inject({ method: 'GET', url })
  const head = await app.inject({ method: 'HEAD', url })
  return { get: get.statusCode, head: head.statusCode }
}

describe('automatic HEAD routes follow their GET route', () => {
  it('the root of a prefix, with and without its trailing slash (prefixTrailingSlash both)', async () => {
    const { app, engine } = await prefixRoot('/tasks')
    expect(routeKeys(engine)).toEqual(['GET:/tasks'])
    expect(await statuses(app, '/tasks')).toEqual({ get: 200, head: 200 })
    expect(await statuses(app, '/tasks/')).toEqual({ get: 200, head: 200 })
    await engine.disable('GET:/tasks', { reason: 'moving' })
    expect(await statuses(app, '/tasks')).toEqual({ get: 503, head: 503 })
    expect(await statuses(app, '/tasks/')).toEqual({ get: 503, head: 503 })
    await engine.enable('GET:/tasks')
    expect(await statuses(app, '/tasks/')).toEqual({ get: 200, head: 200 })
  })

  it('the root of a prefix with prefixTrailingSlash slash', async () => {
    const { app, engine } = await prefixRoot('/tasks', { prefixTrailingSlash: 'slash' })
    expect(routeKeys(engine)).toEqual(['GET:/tasks/'])
    await engine.disable('GET:/tasks/')
    expect(await statuses(app, '/tasks/')).toEqual({ get: 503, head: 503 })
    expect(await statuses(app, '/tasks')).toEqual({ get: 404, head: 404 })
  })

  it('the root of a prefix with prefixTrailingSlash no-slash', async () => {
    const { app, engine } = await prefixRoot('/tasks', { prefixTrailingSlash: 'no-slash' })
    expect(routeKeys(engine)).toEqual(['GET:/tasks'])
    await engine.disable('GET:/tasks')
    expect(await statuses(app, '/tasks')).toEqual({ get: 503, head: 503 })
    expect(await statuses(app, '/tasks/')).toEqual({ get: 404, head: 404 })
  })

  it('the root of a prefix when the router ignores trailing slashes', async () => {
    const { app, engine } = await prefixRoot(
      '/tasks',
      {},
      { routerOptions: { ignoreTrailingSlash: true } },
    )
    expect(routeKeys(engine)).toEqual(['GET:/tasks'])
    await engine.disable('GET:/tasks')
    expect(await statuses(app, '/tasks')).toEqual({ get: 503, head: 503 })
    expect(await statuses(app, '/tasks/')).toEqual({ get: 503, head: 503 })
  })

  it('the root of a prefix that ends with a slash', async () => {
    const { app, engine } = await prefixRoot('/tasks/')
    expect(routeKeys(engine)).toEqual(['GET:/tasks/'])
    await engine.disable('GET:/tasks/')
    expect(await statuses(app, '/tasks/')).toEqual({ get: 503, head: 503 })
  })

  it('a disabled GET answers HEAD with the same status and headers, without a body', async () => {
    const app = Fastify()
    apps.push(app)
    const engine = createEngine({ store: 'memory' })
    await app.register(switchyard, { engine })
    await app.register(
      (child, _options, done) => {
        child.get('/', { onRequest: disabled({ reason: 'gone' }) }, () => 'x')
        done()
      },
      { prefix: '/old' },
    )
    await app.ready()
    expect(routeKeys(engine)).toEqual(['GET:/old'])
    const get = await app.inject({ method: 'GET', url: '/old/' })
    const head = await app.inject({ method: 'HEAD', url: '/old/' })
    expect(get.statusCode).toBe(503)
    expect(get.json().error.code).toBe('ROUTE_DISABLED')
    expect(head.statusCode).toBe(503)
    expect(head.headers['content-type']).toBe(get.headers['content-type'])
    expect(head.body).toBe('')
    await engine.enable('GET:/old')
    expect(await statuses(app, '/old/')).toEqual({ get: 200, head: 200 })
  })
})

describe('declared HEAD routes keep their own state', () => {
  async function build(declare: (app: FastifyInstance) => void) {
    const app = Fastify()
    apps.push(app)
    const engine = createEngine({ store: 'memory' })
    await app.register(switchyard, { engine })
    declare(app)
    await app.ready()
    return { app, engine }
  }

  it('a HEAD route declared before its GET route', async () => {
    const { app, engine } = await build((app) => {
      app.head('/x', (_request, reply) => {
        void reply.header('x-head', 'own').send()
      })
      app.get('/x', () => 'x')
    })
    expect(routeKeys(engine)).toEqual(['GET:/x', 'HEAD:/x'])
    await engine.disable('GET:/x')
    const head = await app.inject({ method: 'HEAD', url: '/x' })
    expect(head.statusCode).toBe(200)
    expect(head.headers['x-head']).toBe('own')
    await engine.enable('GET:/x')
    await engine.disable('HEAD:/x')
    expect(await statuses(app, '/x')).toEqual({ get: 200, head: 503 })
  })

  it('HEAD declared with GET in one route (method: [GET, HEAD])', async () => {
    const { app, engine } = await build((app) => {
      app.route({ method: ['GET', 'HEAD'], url: '/both', handler: () => 'both' })
    })
    expect(routeKeys(engine)).toEqual(['GET:/both', 'HEAD:/both'])
    await engine.disable('GET:/both')
    expect(await statuses(app, '/both')).toEqual({ get: 503, head: 200 })
    await engine.enable('/both')
    await engine.disable('HEAD:/both')
    expect(await statuses(app, '/both')).toEqual({ get: 200, head: 503 })
  })

  it('a HEAD route declared after a GET route that exposes no HEAD route', async () => {
    const handler = () => 'same'
    const { app, engine } = await build((app) => {
      app.get('/y', { exposeHeadRoute: false }, handler)
      app.head('/y', handler)
    })
    expect(routeKeys(engine)).toEqual(['GET:/y', 'HEAD:/y'])
    await engine.disable('GET:/y')
    expect(await statuses(app, '/y')).toEqual({ get: 503, head: 200 })
  })

  it('a HEAD route declared under a prefix root when the app exposes no HEAD routes', async () => {
    const handler = () => 'same'
    const app = Fastify({ exposeHeadRoutes: false })
    apps.push(app)
    const engine = createEngine({ store: 'memory' })
    await app.register(switchyard, { engine })
    await app.register(
      (child, _options, done) => {
        child.get('/', handler)
        child.head('/', handler)
        done()
      },
      { prefix: '/tasks' },
    )
    await app.ready()
    expect(routeKeys(engine)).toEqual(['GET:/tasks', 'HEAD:/tasks/'])
    await engine.disable('GET:/tasks')
    expect(await statuses(app, '/tasks/')).toEqual({ get: 503, head: 200 })
  })
})
