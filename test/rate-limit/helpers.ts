import Fastify, {
  type FastifyInstance,
  type InjectOptions,
  type onRequestHookHandler,
} from 'fastify'
import { createEngine, type Engine } from '../../src/index.js'
import { switchyard, type SwitchyardPluginOptions } from '../../src/fastify/index.js'
import type { RateLimitPolicy } from '../../src/rate-limit/policy.js'
import type { RateLimitService } from '../../src/rate-limit/service.js'
import { FakeClock } from '../helpers/clock.js'

/** A route of a test app: method, path and onRequest hooks. */
export interface TestRoute {
  method?: 'GET' | 'POST'
  path: string
  hooks?: onRequestHookHandler[]
}

/** An app with the plugin, a fake clock aligned to a minute boundary, and the given routes. */
export async function limitedApp(
  routes: TestRoute[],
  options: Omit<SwitchyardPluginOptions, 'engine'> & {
    auth?: onRequestHookHandler
    service?: string
  } = {},
): Promise<{ app: FastifyInstance; engine: Engine; clock: FakeClock; limits: RateLimitService }> {
  const clock = new FakeClock(Date.parse('2026-11-21T12:00:00Z'))
  const engine = createEngine({ store: 'memory', env: 'prod', clock, service: options.service })
  const app = Fastify()
  const { auth, service: _service, ...pluginOptions } = options
  await app.register(switchyard, { engine, ...pluginOptions })
  if (auth) app.addHook('onRequest', auth)
  for (const route of routes) {
    app.route({
      method: route.method ?? 'GET',
      url: route.path,
      onRequest: route.hooks ?? [],
      handler: () => ({ ok: true }),
    })
  }
  await app.ready()
  return { app, engine, clock, limits: engine.rateLimits }
}

/** Sends `count` requests; returns their status codes. */
export async function statuses(
  app: FastifyInstance,
  count: number,
  request: InjectOptions | string = '/x',
): Promise<number[]> {
  const codes: number[] = []
  for (let i = 0; i < count; i++) codes.push((await app.inject(request)).statusCode)
  return codes
}

/** `n` copies of `value`. */
export const times = <T>(n: number, value: T): T[] => Array.from({ length: n }, () => value)

/**
 * A stored route policy as the service returns it: `GET /x` of service `default`, 2 a minute
 * in fixed windows, keyed by IP, with no tiers or exemptions, and `extra` over that.
 */
export function storedRoutePolicy(extra: Partial<RateLimitPolicy> = {}): RateLimitPolicy {
  return {
    service: 'default',
    path: '/x',
    method: 'GET',
    limit: '2/minute',
    algorithm: 'fixed_window',
    key_strategy: 'ip',
    on_missing_key: null,
    burst: 0,
    tiers: [],
    default_tier: null,
    tier_resolver: 'plan',
    exempt_ips: [],
    exempt_roles: [],
    ...extra,
  }
}
