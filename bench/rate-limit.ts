/**
 * Rate-limit overhead: every request counted by a limit that never blocks.
 *
 * 1. memory: bare Fastify vs switchyard (route + global limit, memory counters) vs
 *    @fastify/rate-limit (memory) vs rate-limiter-flexible (memory) in a hook.
 *    Goals (bench/README.md): ≥ 0.93× bare with the headers on every response, ≥ 0.97× with
 *    headers only on 429s.
 *    Two reference cases: `headers-floor` (a hook that only sets the three X-RateLimit headers:
 *    the cost of the headers alone) and `switchyard-429-headers` (headers on 429s only).
 * 2. Redis (when 127.0.0.1:6379 answers): switchyard Redis (both limits of a request in one
 *    EVALSHA, shared by the requests of one event-loop turn) vs @fastify/rate-limit with its
 *    Redis store; bare Fastify and `redis-floor` (the headers plus one shared PING per turn: what
 *    waiting for Redis costs before anything is counted) for reference.
 *    Goal: ≥ 0.75× bare. The Redis server's CPU µs per request is reported too: it runs on the
 *    same two cores as the server and the load generator, so what Redis spends on a request
 *    (running the script) is taken from them.
 * 3. 429 flood (`--file-429`): every request rejected, the blocked-request log full; memory and
 *    file backends, bare Fastify for reference. A 429 must cost microseconds on every backend.
 *
 * 4. `--redis-cluster` (only when asked, with the local cluster of scripts/redis-topologies.sh
 *    up): switchyard's Redis counters on the 6-node cluster vs on one server. Goal ≥ 0.9×.
 *
 * Each server runs in its own process (pinned to core 0 when taskset exists), autocannon here;
 * interleaved rounds, medians and per-round ratios; total well under 3 minutes.
 */
import { Redis } from 'ioredis'
import { runHttpBenchmark, type HttpCase } from './lib/http-harness.js'
import { serverReachable } from '../support/servers.js'

const quick = process.argv.includes('--quick')
// `--memory`, `--redis` or `--file-429` runs one group only
const onlyRedis = process.argv.includes('--redis')
// `--redis-cluster`: the Redis counters on the local cluster vs one server, in one run
const onlyCluster = process.argv.includes('--redis-cluster')
const onlyMemory = process.argv.includes('--memory')
const only429 = process.argv.includes('--file-429')
const server = 'bench/rate-limit-servers/server.ts'
const variant = (name: string): HttpCase => ({
  name,
  script: server,
  env: { RL_VARIANT: name },
  path: '/r25',
})
const settings = {
  rounds: quick ? 2 : 3,
  duration: quick ? 2 : 4,
  warmup: 2,
  connections: 50,
}

// 3. A flood of 429s: the blocked-request log must not make each rejection expensive (it was a
//    full rewrite of the state file per 429 on the file backend).
if (!onlyRedis && !onlyMemory && !onlyCluster)
  await runHttpBenchmark(
    'rate-limit-429',
    ['bare', 'switchyard-memory-429', 'switchyard-file-429'].map(variant),
    { ...settings, baseline: 'bare' },
  )

if (only429 || onlyCluster) {
  // the 429 group only (or the cluster group, below)
} else if (!onlyRedis)
  await runHttpBenchmark(
    'rate-limit-memory',
    [
      'bare',
      'headers-floor',
      'switchyard',
      'switchyard-429-headers',
      'fastify-rate-limit',
      'flexible',
    ].map(variant),
    { ...settings, baseline: 'bare' },
  )

const redisUp = await serverReachable('redis://127.0.0.1:6379', 500)
if (onlyCluster) {
  if (!(await serverReachable('redis://127.0.0.1:7000', 500)))
    throw new Error('--redis-cluster: no cluster on 127.0.0.1:7000 (scripts/redis-topologies.sh)')
  await runHttpBenchmark(
    'rate-limit-redis-cluster',
    ['switchyard-redis', 'switchyard-redis-cluster'].map(variant),
    { ...settings, baseline: 'switchyard-redis' },
  )
} else if (onlyMemory || only429) {
  // memory group only
} else if (redisUp) {
  await runHttpBenchmark(
    'rate-limit-redis',
    [
      'bare',
      'redis-floor',
      'switchyard-redis',
      'fastify-rate-limit-redis',
      // PostgreSQL counters beside Redis's, for a stack without Redis.
      'switchyard-postgres',
    ].map(variant),
    { ...settings, baseline: 'fastify-rate-limit-redis', sideProcess: await redisProcess() },
  )
} else {
  console.warn('Redis at 127.0.0.1:6379 unreachable: skipping the Redis comparison')
}

/** The local Redis server's process, read from `INFO server`. */
async function redisProcess(): Promise<{ label: string; pid: number }> {
  const client = new Redis('redis://127.0.0.1:6379')
  try {
    const info = await client.info('server')
    const pid = Number(/process_id:(\d+)/.exec(info)?.[1])
    if (!Number.isInteger(pid)) throw new Error('INFO server gave no process_id')
    return { label: 'Redis', pid }
  } finally {
    client.disconnect()
  }
}
