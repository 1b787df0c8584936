/**
 * Drill 1, Redis killed and stalled under load (with `--cluster` or `--sentinel`, a primary
 * failover on those setups instead: see `redis-failover.ts`). Two app instances share a private
 * `redis-server` (route states, policies and rate-limit counters on it); a paced client sends
 * a steady stream of requests to both, each counted in Redis. Then:
 *
 * - killed: Redis is killed (SIGKILL) for a few seconds and restarted empty. Counted: 5xx
 *   caused by switchyard, requests with no answer within two seconds, the time from Redis
 *   being back until a rate limit is enforced again, whether a disabled route stayed disabled
 *   throughout, and the admin writes acknowledged before the kill that a fresh instance no
 *   longer finds (the re-seed refills Redis from the instances' replicas).
 * - stalled: Redis is frozen (SIGSTOP) for a few seconds, then resumed (SIGCONT). Counted:
 *   5xx, and requests that took longer than `redisCommandTimeout` + 10 ms (a baseline window
 *   with Redis healthy is reported beside it, as the load client shares this process).
 */
import { Agent, request as httpRequest } from 'node:http'
import Fastify, { type FastifyInstance } from 'fastify'
import { createEngine, type Engine } from '../../src/index.js'
import { rateLimit, switchyard } from '../../src/fastify/index.js'
import { redisStore } from '../../src/stores/redis.js'
import { atMost, exactly, measured } from '../lib/drill.js'
import type { Drill, DrillFigure, DrillScale } from '../lib/drill.js'
import { booleanFlag } from '../lib/flag-input.js'
import { freePort } from '../../support/servers.js'
import { PrivateRedis } from '../lib/private-redis.js'
import { redisFailover } from './redis-failover.js'

/** `redisCommandTimeout` of the instances, seconds. */
const COMMAND_TIMEOUT_S = 0.05

interface Instance {
  engine: Engine
  app: FastifyInstance
  port: number
  log: string[]
  /** Server-side durations of the /work requests: when each arrived and how long it took. */
  served: { at: number; ms: number }[]
}

async function startInstance(url: string, prefix: string): Promise<Instance> {
  const log: string[] = []
  const engine = createEngine({
    store: redisStore({ url, prefix, onFault: (message) => log.push(message) }),
    service: 'shop',
    retryInterval: 0.05,
    maxRetryInterval: 0.5,
    logger: {
      warn: (fields: object | string, message?: string) =>
        log.push(typeof fields === 'string' ? fields : (message ?? '')),
      error: (fields: object | string, message?: string) =>
        log.push(typeof fields === 'string' ? fields : (message ?? '')),
    },
    rateLimit: { redisCommandTimeout: COMMAND_TIMEOUT_S },
  })
  const app = Fastify()
  const served: Instance['served'] = []
  // Server-side time (arrival to answer), free of the load client's own delays in this process.
  app.addHook('onResponse', (request, reply, done) => {
    if (request.url === '/work')
      served.push({ at: performance.now() - reply.elapsedTime, ms: reply.elapsedTime })
    done()
  })
  await app.register(switchyard, { engine })
  // Every request of the load is counted in Redis (a limit it never reaches).
  app.get('/work', { onRequest: rateLimit({ limit: '1000000/minute' }) }, () => 'ok')
  app.get('/limited', { onRequest: rateLimit({ limit: '2/minute' }) }, () => 'ok')
  app.get('/off', () => 'should be disabled')
  for (let i = 0; i < 20; i++) app.get(`/r${i}`, () => 'ok')
  await app.listen({ host: '127.0.0.1', port: 0 })
  const address = app.server.address()
  if (address === null || typeof address === 'string') throw new Error('no port')
  return { engine, app, port: address.port, log, served }
}

/** One request's outcome. */
interface Sample {
  at: number
  status: number
  ms: number
}

const agent = new Agent({ keepAlive: true, maxSockets: 64 })

function get(
  port: number,
  path: string,
  timeoutMs = 2000,
): Promise<{ status: number; ms: number }> {
  const started = performance.now()
  return new Promise((resolve) => {
    const request = httpRequest(
      { host: '127.0.0.1', port, path, agent, timeout: timeoutMs },
      (response) => {
        response.resume()
        response.on('end', () =>
          resolve({ status: response.statusCode ?? 0, ms: performance.now() - started }),
        )
      },
    )
    request.on('timeout', () => request.destroy(new Error('timeout')))
    request.on('error', () => resolve({ status: 0, ms: performance.now() - started }))
    request.end()
  })
}

/** Sends GET /work to the instances in turn every `intervalMs` until stopped. */
function pacedLoad(instances: Instance[], intervalMs: number) {
  const samples: Sample[] = []
  const pending = new Set<Promise<void>>()
  let n = 0
  const timer = setInterval(() => {
    const instance = instances[n++ % instances.length]!
    const at = performance.now()
    const done = get(instance.port, '/work').then(({ status, ms }) => {
      samples.push({ at, status, ms })
    })
    pending.add(done)
    void done.finally(() => pending.delete(done))
  }, intervalMs)
  return {
    samples,
    async stop() {
      clearInterval(timer)
      await Promise.all(pending)
    },
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Polls until `probe` is true or `limitMs` passed; resolves the ms it took (or null). */
async function timeUntil(probe: () => Promise<boolean>, limitMs: number): Promise<number | null> {
  const started = performance.now()
  while (performance.now() - started < limitMs) {
    if (await probe()) return performance.now() - started
    await sleep(20)
  }
  return null
}

/** Runs the drill; the counts and durations depend on `scale`. */
export async function redisOutage(scale: DrillScale): Promise<DrillFigure[]> {
  const downMs = scale === 'full' ? 5000 : 1500
  const redis = new PrivateRedis(await freePort())
  await redis.start()
  const prefix = 'drill:'
  const instances: Instance[] = []
  try {
    instances.push(await startInstance(redis.url, prefix), await startInstance(redis.url, prefix))
    const [a, b] = instances as [Instance, Instance]
    // Acknowledged admin writes: states of many routes, a flag, a policy.
    const writes = scale === 'full' ? 20 : 6
    await a.engine.disable('GET:/off', { reason: 'drill' })
    for (let i = 0; i < writes; i++) {
      const writer = i % 2 === 0 ? a : b
      if (i % 3 === 0) await writer.engine.setMaintenance(`GET:/r${i}`, { reason: `write ${i}` })
      else await writer.engine.disable(`GET:/r${i}`, { reason: `write ${i}` })
    }
    await a.engine.saveFlag(booleanFlag('drill-flag'))
    await b.engine.setGlobalRateLimit({ limit: '1000000/minute' })
    const expected = {
      routes: a.engine
        .listRoutes({ perPage: 500 })
        .items.filter((state) => state.status !== 'active'),
      flag: await a.engine.getFlag('drill-flag'),
      global: b.engine.getGlobalRateLimit(),
    }
    // Both replicas hold the writes before the fault (propagation is not what is measured).
    await timeUntil(
      () => Promise.resolve(b.engine.getState('GET:/off')[0]?.status === 'disabled'),
      5000,
    )

    const load = pacedLoad(instances, scale === 'full' ? 4 : 10)
    let offServed = 0
    const offProbe = setInterval(() => {
      void get(a.port, '/off').then(({ status }) => {
        if (status === 200) offServed++
      })
    }, 50)
    await sleep(1000)
    const baselineFrom = performance.now()
    await sleep(scale === 'full' ? 3000 : 1000)
    const baselineTo = performance.now()

    // ---- killed, back empty --------------------------------------------------------------
    await redis.stop()
    await sleep(downMs)
    await redis.start()
    // Limits enforced again: the exhausted-after-two limit answers 429 once more.
    const enforcedMs = await timeUntil(
      async () => (await get(a.port, '/limited')).status === 429,
      15_000,
    )
    await timeUntil(
      () => Promise.resolve(a.log.concat(b.log).some((line) => /re-seeded/.test(line))),
      15_000,
    )

    // ---- stalled ---------------------------------------------------------------------------
    await sleep(1000)
    redis.pause()
    const stallFrom = performance.now()
    await sleep(downMs)
    redis.resume()
    const stallTo = performance.now()
    await sleep(1000)
    clearInterval(offProbe)
    await load.stop()

    // ---- what a fresh instance finds -----------------------------------------------------------
    const fresh = await startInstance(redis.url, prefix)
    instances.push(fresh)
    const lostNow = async () =>
      expected.routes.filter((state) => {
        const found = fresh.engine.getState(state.route)[0]
        return found?.status !== state.status || found.reason !== state.reason
      }).length +
      (JSON.stringify(await fresh.engine.getFlag('drill-flag')) === JSON.stringify(expected.flag)
        ? 0
        : 1) +
      (fresh.engine.getGlobalRateLimit()?.limit === expected.global?.limit ? 0 : 1)
    // The fresh instance loads flags and policies just after its route states: wait for them.
    await timeUntil(async () => (await lostNow()) === 0, 5000)
    const lost = await lostNow()
    const samples = load.samples
    const in5xx = samples.filter((sample) => sample.status >= 500).length
    const hung = samples.filter((sample) => sample.status === 0).length
    const served = instances.flatMap((instance) => instance.served)
    const overDeadline = COMMAND_TIMEOUT_S * 1000 + 10
    const slow = (from: number, to: number) =>
      served.filter((entry) => entry.at >= from && entry.at <= to && entry.ms > overDeadline).length
    const slowest = served
      .filter((entry) => entry.at >= stallFrom && entry.at <= stallTo)
      .map((entry) => Math.round(entry.ms))
      .sort((x, y) => y - x)
      .slice(0, 5)
    const inWindow = (from: number, to: number) =>
      served.filter((entry) => entry.at >= from && entry.at <= to).length
    const stallWindow = inWindow(stallFrom, stallTo)
    const baselineWindow = inWindow(baselineFrom, baselineTo)
    const p99 = (values: number[]) =>
      values.sort((x, y) => x - y)[Math.floor(values.length * 0.99)] ?? 0
    return [
      measured('requests sent (paced, both instances)', samples.length),
      exactly('answers 5xx (/work)', in5xx, 0),
      exactly('requests hung (no answer in 2 s)', hung, 0),
      exactly('disabled route served while Redis was away', offServed, 0),
      {
        name: 'ms from Redis back (empty) to a limit enforced again',
        value: enforcedMs === null ? 'never' : Math.round(enforcedMs),
        goal: '< 2000',
        ok: enforcedMs !== null && enforcedMs < 2000,
      },
      exactly('acknowledged admin writes lost', lost, 0),
      measured('acknowledged admin writes checked', expected.routes.length + 2),
      atMost(`stalled: requests served in over ${overDeadline} ms`, slow(stallFrom, stallTo), 0),
      measured('stalled: requests in the window', stallWindow),
      measured('stalled: slowest server times (ms)', slowest.join(', ')),
      measured(
        `baseline: requests served in over ${overDeadline} ms (Redis healthy)`,
        `${slow(baselineFrom, baselineTo)} of ${baselineWindow}`,
      ),
      measured(
        'p99 latency ms (whole run)',
        Math.round(p99(samples.map((sample) => sample.ms)) * 10) / 10,
      ),
      measured('Redis down / stalled for ms', downMs),
      measured(
        're-seed logged',
        a.log.concat(b.log).filter((line) => /re-seeded/.test(line)).length,
      ),
    ]
  } finally {
    redis.resume()
    for (const instance of instances) {
      await instance.app.close()
      await instance.engine.close()
    }
    await redis.stop()
  }
}

/** The drill. */
export const redisOutageDrill: Drill = {
  name: 'redis-outage',
  title:
    'two instances under paced load; Redis killed and back empty, then stalled (SIGSTOP); ' +
    '--cluster / --sentinel: the primary of a Redis Cluster / Sentinel setup fails over',
  run: (scale, flags = []) =>
    flags.includes('--cluster')
      ? redisFailover(scale, 'cluster')
      : flags.includes('--sentinel')
        ? redisFailover(scale, 'sentinel')
        : redisOutage(scale),
}
