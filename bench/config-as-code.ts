/**
 * Configuration as code at scale: a document of 1,000 flags (every fifth with a rule on a
 * segment, every tenth with a prerequisite), 200 segments and 2,000 route overrides, on an app
 * with 2,000 registered routes. (a) `GET {admin}/api/config` (export) and (b)
 * `POST {admin}/api/config/plan` of that document against the engine holding it (no change to
 * find: every item compared), both in-process through Fastify's `inject`, median of a few
 * rounds; (c) `POST {admin}/api/config/apply` of the document to an empty engine on the Redis
 * store (127.0.0.1:6379, a prefix of its own, deleted afterwards), one round per fresh prefix.
 *
 * There is no peer: absolute figures against the goals, export < 1 s, plan < 1 s, apply to
 * Redis < 5 s. Usage: `npm run bench -- config-as-code [--quick]`. Writes
 * bench/results/config-as-code.json.
 */
import Fastify from 'fastify'
import { Redis } from 'ioredis'
import { createEngine, type Engine } from '../src/index.js'
import { switchyard } from '../src/fastify/index.js'
import { redisStore } from '../src/stores/redis.js'
import { writeResults } from './lib/results.js'
import { median } from './lib/stats.js'

const quick = process.argv.includes('--quick')
const ROUNDS = quick ? 3 : 5
const APPLY_ROUNDS = quick ? 1 : 3
const FLAGS = 1000
const SEGMENTS = 200
const ROUTES = 2000
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'
const API = '/switchyard/api'
const quiet = { warn: () => undefined, error: () => undefined }

const routeOf = (i: number) => ({
  method: i % 2 === 0 ? 'GET' : 'POST',
  path: `/area-${i % 40}/item-${i}`,
})

/** An open-mode admin app on `engine` with the bench's 2,000 routes registered. */
async function adminApp(engine: Engine) {
  const app = Fastify({ logger: false, bodyLimit: 64 * 1024 * 1024 })
  await app.register(switchyard, { engine, admin: { path: '/switchyard' } })
  for (let i = 0; i < ROUTES; i++) {
    const { method, path } = routeOf(i)
    engine.registerRoute(method, path, null)
  }
  await app.ready()
  return app
}

/** The document: segments, flags using them, and an override for every registered route. */
function buildDocument() {
  const future = new Date(Date.now() + 30 * 86_400_000).toISOString()
  const segments = Array.from({ length: SEGMENTS }, (_, i) => ({
    key: `segment-${i}`,
    name: `Segment ${i}`,
    included: [`user-${i}`, `user-${i + 1}`],
  }))
  const flags = Array.from({ length: FLAGS }, (_, i) => ({
    key: `flag-${i}`,
    name: `Flag ${i}`,
    type: 'boolean',
    variations: [
      { name: 'on', value: true },
      { name: 'off', value: false },
    ],
    off_variation: 'off',
    fallthrough: 'on',
    ...(i % 10 === 9 ? { prerequisites: [{ flag_key: `flag-${i - 1}`, variation: 'on' }] } : {}),
    ...(i % 5 === 0
      ? {
          rules: [
            {
              clauses: [
                { attribute: 'key', operator: 'in_segment', values: [`segment-${i % SEGMENTS}`] },
              ],
              variation: 'off',
            },
          ],
        }
      : {}),
  }))
  const routes = Array.from({ length: ROUTES }, (_, i) => {
    const { method, path } = routeOf(i)
    return i % 2 === 0
      ? { route: `${method}:${path}`, status: 'disabled', reason: `override ${i}`, until: future }
      : { route: `${method}:${path}`, status: 'maintenance', reason: `override ${i}` }
  })
  return { apiVersion: 'switchyard/v1', kind: 'Config', segments, flags, routes }
}

/** Wall time of `run` in ms, failing loudly on a response that is not 200. */
async function timed<R extends { statusCode: number; body: string }>(run: () => Promise<R>) {
  const started = process.hrtime.bigint()
  const response = await run()
  const ms = Number(process.hrtime.bigint() - started) / 1e6
  if (response.statusCode !== 200)
    throw new Error(`${response.statusCode}: ${response.body.slice(0, 2000)}`)
  return { ms, response }
}

const load = (await import('node:os')).loadavg()[0] ?? 0
console.log(`load average at start: ${load.toFixed(1)}`)
const document = buildDocument()
const payload = JSON.stringify(document)
const headers = { 'content-type': 'application/json' }

// (c) first, on fresh Redis prefixes: apply to an empty engine.
const redis = new Redis(REDIS_URL)
const applyTimes: number[] = []
// CPU time of this process: the rest of the wall time is waiting on Redis.
const applyCpu: number[] = []
let applied = 0
let engineForReads: Engine | null = null
let appForReads: Awaited<ReturnType<typeof adminApp>> | null = null
const prefixes: string[] = []
try {
  for (let round = 0; round < APPLY_ROUNDS; round++) {
    const prefix = `bench-cfg-${process.pid}-${round}:`
    prefixes.push(prefix)
    const engine = createEngine({
      store: redisStore({ url: REDIS_URL, prefix }),
      logger: quiet,
    })
    const app = await adminApp(engine)
    const cpu = process.cpuUsage()
    const { ms, response } = await timed(() =>
      app.inject({ method: 'POST', url: `${API}/config/apply`, headers, payload }),
    )
    const used = process.cpuUsage(cpu)
    applyTimes.push(ms)
    applyCpu.push((used.user + used.system) / 1000)
    applied = response.json<{ changes: unknown[] }>().changes.length
    console.log(
      `apply round ${round + 1}: ${ms.toFixed(0)} ms (CPU ${applyCpu.at(-1)?.toFixed(0)} ms), ${applied} changes`,
    )
    if (round === APPLY_ROUNDS - 1) {
      engineForReads = engine
      appForReads = app
    } else {
      await app.close()
      await engine.close()
    }
  }
  if (appForReads === null || engineForReads === null) throw new Error('no apply round ran')
  const app = appForReads

  // (a) export and (b) plan against the engine holding the document (the last apply's).
  for (let i = 0; i < 2; i++) {
    await app.inject({ url: `${API}/config` })
    await app.inject({ method: 'POST', url: `${API}/config/plan`, headers, payload })
  }
  const exportTimes: number[] = []
  const planTimes: number[] = []
  let exportBytes = 0
  let planChanges = -1
  for (let round = 0; round < ROUNDS; round++) {
    const exported = await timed(() => app.inject({ url: `${API}/config` }))
    exportTimes.push(exported.ms)
    exportBytes = exported.response.body.length
    const planned = await timed(() =>
      app.inject({ method: 'POST', url: `${API}/config/plan`, headers, payload }),
    )
    planTimes.push(planned.ms)
    planChanges = planned.response.json<{ changes: unknown[] }>().changes.length
  }
  await app.close()
  await engineForReads.close()

  const results = {
    load_average: load,
    document: { flags: FLAGS, segments: SEGMENTS, routes: ROUTES, bytes: payload.length },
    export: { median_ms: median(exportTimes), runs_ms: exportTimes, bytes: exportBytes },
    plan: { median_ms: median(planTimes), runs_ms: planTimes, changes: planChanges },
    apply_redis: {
      median_ms: median(applyTimes),
      runs_ms: applyTimes,
      cpu_median_ms: median(applyCpu),
      changes: applied,
    },
  }
  console.log('| case | median | runs | goal |')
  console.log('|---|---|---|---|')
  const runs = (values: number[]) => values.map((value) => value.toFixed(0)).join(', ')
  console.log(
    `| export | ${results.export.median_ms.toFixed(0)} ms | ${runs(exportTimes)} | < 1000 ms |`,
  )
  console.log(
    `| plan (${planChanges} changes) | ${results.plan.median_ms.toFixed(0)} ms | ${runs(planTimes)} | < 1000 ms |`,
  )
  console.log(
    `| apply to Redis (${applied} changes) | ${results.apply_redis.median_ms.toFixed(0)} ms | ${runs(applyTimes)} | < 5000 ms |`,
  )
  console.log(`wrote ${writeResults('config-as-code', results)}`)
} finally {
  for (const prefix of prefixes) {
    let cursor = '0'
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000)
      cursor = next
      if (keys.length > 0) await redis.del(...keys)
    } while (cursor !== '0')
  }
  await redis.quit()
}
