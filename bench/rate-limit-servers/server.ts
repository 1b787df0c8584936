/**
 * One server of bench/rate-limit.ts, chosen by RL_VARIANT. Every variant serves the 50
 * benchmark routes; the limited ones put a limit high enough that nothing is blocked, keyed by
 * client IP, on every request:
 *
 * - `bare`                  Fastify alone
 * - `hook-floor`            Fastify + an `onRequest` hook that does nothing: what any limiter
 *                           that runs before the body is read pays before it does anything
 * - `headers-floor`         Fastify + a hook that only sets three `x-ratelimit-*` headers: what
 *                           any limiter that sends the headers pays before it counts anything
 * - `switchyard`            switchyard plugin, route limit on /r25 + global limit, memory counters
 * - `switchyard-429-headers` as `switchyard`, with `headers: 'blocked'` (headers on 429s only)
 * - `fastify-rate-limit`    @fastify/rate-limit, global, memory store
 * - `flexible`              rate-limiter-flexible RateLimiterMemory in an onRequest hook
 * - `switchyard-redis-cluster` as `switchyard-redis`, on the local Redis Cluster (7000-7005)
 * - `switchyard-postgres`   as `switchyard`, on the PostgreSQL store and its counters (one
 *                           statement per check, an UNLOGGED table)
 * - `switchyard-redis`      as `switchyard`, Redis counters (the requests of one event-loop turn
 *                           share one EVALSHA)
 * - `redis-floor`           `headers-floor` plus a wait for Redis: the requests of one
 *                           event-loop turn share one PING and go on when it answers. What any
 *                           limiter that counts on Redis (batched as switchyard batches) and
 *                           sends the headers pays before it counts anything
 * - `fastify-rate-limit-redis`  @fastify/rate-limit with its Redis store
 * - `switchyard-file-429`   file backend, /r25 limited to 1/hour: every request after the
 *                           first is a 429 written to the blocked-request log, which starts
 *                           full (10 000 records), as under a sustained flood
 * - `switchyard-memory-429` the same on the memory backend, for reference
 */
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Fastify from 'fastify'
import { Redis } from 'ioredis'
import { createEngine, postgresStore } from '../../src/index.js'
import { rateLimit, switchyard } from '../../src/fastify/index.js'
import { redisCounters } from '../../src/rate-limit/counters/redis.js'
import { addRoutes, listen } from '../servers/routes.js'

const HIGH = 100_000_000
const variant = process.env.RL_VARIANT ?? 'bare'
const redisUrl = process.env.CTL_REDIS_URL ?? 'redis://127.0.0.1:6379'
const app = Fastify({ logger: false })

switch (variant) {
  case 'bare':
    addRoutes(app)
    break
  case 'hook-floor':
    app.addHook('onRequest', (_request, _reply, done) => {
      done()
    })
    addRoutes(app)
    break
  case 'headers-floor': {
    let remaining = HIGH
    app.addHook('onRequest', (_request, reply, done) => {
      reply.header('x-ratelimit-limit', '100000000')
      reply.header('x-ratelimit-remaining', String(--remaining))
      reply.header('x-ratelimit-reset', '1800000000')
      done()
    })
    addRoutes(app)
    break
  }
  case 'redis-floor': {
    const client = new Redis(redisUrl)
    let remaining = HIGH
    let waiting: (() => void)[] = []
    const flush = () => {
      const batch = waiting
      waiting = []
      void client.ping().then(() => {
        for (const done of batch) done()
      })
    }
    app.addHook('onRequest', (_request, reply, done) => {
      reply.header('x-ratelimit-limit', '100000000')
      reply.header('x-ratelimit-remaining', String(--remaining))
      reply.header('x-ratelimit-reset', '1800000000')
      if (waiting.push(done) === 1) setImmediate(flush)
    })
    addRoutes(app)
    break
  }
  case 'switchyard':
  case 'switchyard-429-headers':
  case 'switchyard-redis':
  case 'switchyard-redis-cluster':
  case 'switchyard-postgres': {
    // On the PostgreSQL store the engine counts in its UNLOGGED counter table.
    const engine =
      variant === 'switchyard-postgres'
        ? createEngine({
            store: postgresStore({
              url: process.env.CTL_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test',
              // One fixed prefix: runs reuse the tables (the limits are far above a run's count).
              tablePrefix: 'bench_rl_',
            }),
            service: 'bench',
          })
        : createEngine({ store: 'memory', service: 'bench' })
    const counters =
      variant === 'switchyard-redis'
        ? redisCounters({ url: redisUrl, prefix: `bench:rl:${process.pid}:` })
        : variant === 'switchyard-redis-cluster'
          ? redisCounters({
              cluster: (process.env.RL_CLUSTER_NODES ?? '127.0.0.1:7000,127.0.0.1:7001').split(','),
              prefix: `bench:rl:${process.pid}:`,
            })
          : undefined
    await app.register(switchyard, {
      engine,
      rateLimit: {
        ...(counters ? { counters } : {}),
        ...(variant === 'switchyard-429-headers' ? { headers: 'blocked' as const } : {}),
      },
    })
    await engine.setGlobalRateLimit({ limit: `${HIGH}/minute` })
    // /r25 (the measured route) gets its own limit on top of the global one
    app.get('/r25', { onRequest: rateLimit({ limit: `${HIGH}/minute` }) }, () => ({
      hello: 'world',
      route: 25,
    }))
    addRoutes(withoutR25(app))
    break
  }
  case 'switchyard-file-429':
  case 'switchyard-memory-429': {
    let store = 'memory'
    if (variant === 'switchyard-file-429') {
      const path = join(mkdtempSync(join(tmpdir(), 'switchyard-bench-')), 'state.json')
      writeFileSync(path, JSON.stringify(fullHitLog()))
      process.env.CTL_FILE_PATH = path
      store = 'file'
    }
    const engine = createEngine({ store, service: 'bench' })
    await app.register(switchyard, { engine })
    app.get('/r25', { onRequest: rateLimit({ limit: '1/hour' }) }, () => ({ hello: 'world' }))
    addRoutes(withoutR25(app))
    break
  }
  case 'fastify-rate-limit':
  case 'fastify-rate-limit-redis': {
    const { default: fastifyRateLimit } = await import('@fastify/rate-limit')
    await app.register(fastifyRateLimit, {
      max: HIGH,
      timeWindow: 60_000,
      ...(variant === 'fastify-rate-limit-redis'
        ? { redis: new Redis(redisUrl), nameSpace: `bench:frl:${process.pid}:` }
        : {}),
    })
    addRoutes(app)
    break
  }
  case 'flexible': {
    const { RateLimiterMemory, RateLimiterRes } = await import('rate-limiter-flexible')
    const limiter = new RateLimiterMemory({ points: HIGH, duration: 60 })
    app.addHook('onRequest', async (request, reply) => {
      try {
        await limiter.consume(request.ip)
      } catch (rejection) {
        if (!(rejection instanceof RateLimiterRes)) throw rejection
        return reply.code(429).send({ error: 'Too many requests' })
      }
    })
    addRoutes(app)
    break
  }
  default:
    throw new Error(`unknown RL_VARIANT ${variant}`)
}
await listen(app)

/** A state file whose blocked-request log is full (10 000 records), as after a long flood. */
function fullHitLog(): object {
  const hits = Array.from({ length: 10_000 }, (_, i) => ({
    id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
    timestamp: new Date(Date.now() - i * 1000).toISOString(),
    path: '/r25',
    method: 'GET',
    key: 'rl:route:bench:GET:/r25:ip:127.0.0.1',
    limit: '1/hour',
    tier: null,
    reset_at: new Date(Date.now() + 3_600_000).toISOString(),
  }))
  return {
    format: 1,
    version: 0,
    routes: [],
    global: null,
    services: {},
    audit: [],
    tokens: {},
    claims: {},
    sections: { rl_hits: hits },
  }
}

/** The app, registering every benchmark route except /r25 (already registered with its limit). */
function withoutR25(target: typeof app): typeof app {
  return new Proxy(target, {
    get(object, property, receiver) {
      if (property === 'get') {
        return (path: string, handler: () => unknown) =>
          path === '/r25' ? object : object.get(path, handler)
      }
      return Reflect.get(object, property, receiver) as unknown
    },
  })
}
