/**
 * What a ```ts fragment of the documentation runs with (see ./blocks.ts): the generated program
 * imports this module first, so its settings hold before the fragment's own imports run.
 *
 * - The environment the fragments read, for the variables a reader would have set.
 * - Every server listens on a free loopback port, whatever port the fragment names: the docs
 *   show the ports a reader would use (8000, 9999), which are not free on every machine that
 *   runs the tests, and fragments run in parallel.
 * - `makeEngine`, `makeApp`, `makeManager` make the globals a fragment uses without declaring
 *   them; `finish` readies and closes them. Fragments run in batches (./fragment-runner.ts),
 *   which end the process once the last one ran.
 */
import { randomBytes } from 'node:crypto'
import { Server } from 'node:net'
import Fastify, { type FastifyInstance } from 'fastify'
import { createEngine, type Engine } from 'fastify-switchyard'
import { switchyard } from 'fastify-switchyard/fastify'
import { TaskManager } from 'fastify-switchyard/tasks'

/** Environment variables the fragments read, set unless the machine already has them. */
export const FRAGMENT_ENV: Readonly<Record<string, string>> = {
  ADMIN_PASSWORD: 's3cret',
  OPERATOR_PASSWORD: 'operator-s3cret',
  VIEWER_PASSWORD: 'viewer-s3cret',
  HOOK_SECRET: 'a-webhook-secret',
  TASKS_SECRET: 'a-tasks-secret-of-32-characters!',
  // 32 random bytes, hex: what generateEncryptionKey() prints.
  TASKS_KEY: randomBytes(32).toString('hex'),
  PG_URL: 'postgres://postgres@127.0.0.1:5432/test',
  REDIS_URL: 'redis://127.0.0.1:6379',
  SWITCHYARD_TOKEN: 'a-token',
}

for (const [name, value] of Object.entries(FRAGMENT_ENV)) process.env[name] ??= value

type Listen = (...args: unknown[]) => Server
const listen = Reflect.get(Server.prototype, 'listen') as Listen
// Port 0 on the loopback interface instead of the fixed port the fragment names.
Server.prototype.listen = function (this: Server, ...args: unknown[]): Server {
  const [first, second] = args
  if (typeof first === 'number' || (typeof first === 'string' && /^\d+$/.test(first))) {
    args[0] = 0
    if (typeof second !== 'string') args.splice(1, 0, '127.0.0.1')
  } else if (typeof first === 'object' && first !== null && 'port' in first) {
    args[0] = { ...first, port: 0, host: '127.0.0.1' }
  }
  return listen.apply(this, args)
} as Listen as typeof Server.prototype.listen

/**
 * The routes of the shop the pages' fragments talk about (`engine.disable('/payments')`,
 * `setRateLimitPolicy({ path: '/search', method: 'POST' })`): an engine only acts on routes
 * its app registered, and a fragment shows one call, not the app around it.
 */
const SHOP_ROUTES = [
  ['GET', '/payments'],
  ['POST', '/payments'],
  ['GET', '/orders'],
  ['GET', '/items/:id'],
  ['GET', '/search'],
  ['POST', '/search'],
  ['GET', '/health'],
] as const

/** The `engine` of a fragment, with the shop's routes registered. */
export function makeEngine(): Engine {
  const engine = createEngine()
  for (const [method, path] of SHOP_ROUTES) engine.registerRoute(method, path)
  return engine
}

/**
 * The `app` of a fragment: with the switchyard plugin registered on `engine` (on an engine of
 * its own when the fragment uses no `engine`), or plain when `plugin` is false.
 */
export async function makeApp(options: {
  plugin: boolean
  engine: Engine | undefined
}): Promise<FastifyInstance> {
  const app = Fastify()
  if (options.plugin) {
    const engine = options.engine ?? createEngine()
    if (options.engine === undefined) app.addHook('onClose', () => engine.close())
    await app.register(switchyard, { engine })
  }
  return app
}

/** The `manager` of a fragment: on the memory store. */
export function makeManager(): TaskManager {
  return new TaskManager()
}

/** Readies and closes what the prelude made. */
export async function finish(made: {
  app?: FastifyInstance
  engine?: Engine
  manager?: TaskManager
}): Promise<void> {
  if (made.app !== undefined) {
    await made.app.ready()
    await made.app.close()
  }
  await made.manager?.shutdown()
  await made.engine?.close()
}
