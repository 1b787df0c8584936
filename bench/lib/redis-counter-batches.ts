/**
 * Drives the Redis rate-limit counters for bench/lib/count-redis-instructions.sh: batches of
 * `BATCH` requests issued in one event-loop turn (so they share one EVALSHA, as under load),
 * each counted by a global and a route limit (fixed windows, never blocking), from four client
 * addresses. `node redis-counter-batches.js <port> <batches> [build]` sends `batches` batches
 * to the Redis at 127.0.0.1:<port> and prints how many requests they held (the script divides
 * by it); `build` is the compiled tree whose counters to use (default this one), so an earlier
 * commit's counters can be counted alike.
 */
import { pathToFileURL } from 'node:url'
import { resolve } from 'node:path'
import type { CounterCheck } from '../../src/rate-limit/counters/types.js'
import type { RedisCounters } from '../../src/rate-limit/counters/redis.js'

/** Requests per batch: about what one event-loop turn holds in the rate-limit bench's Redis case. */
const BATCH = 18

const [port, batchesText, build] = process.argv.slice(2)
const root =
  build === undefined ? new URL('../../', import.meta.url) : pathToFileURL(`${resolve(build)}/`)
const { redisCounters } = (await import(
  new URL('src/rate-limit/counters/redis.js', root).href
)) as { redisCounters: (options: object) => RedisCounters }

const counters = redisCounters({
  url: `redis://127.0.0.1:${port}`,
  prefix: 'count:',
  commandTimeout: 60,
})
// Two rule objects, as a global and a route policy each compile their own: a batch sends two.
const globalRule = {
  algorithm: 'fixed_window',
  count: 100_000_000,
  periodMs: 60_000,
  burst: 0,
} as const
const routeRule = {
  algorithm: 'fixed_window',
  count: 100_000_000,
  periodMs: 60_000,
  burst: 0,
} as const
const checks: CounterCheck[][] = Array.from({ length: 4 }, (_, client) => [
  { scope: 'global', bucket: `ip:10.0.0.${client}`, rule: globalRule },
  { scope: 'route:default:GET:/r25', bucket: `ip:10.0.0.${client}`, rule: routeRule },
])
const batches = Number(batchesText)
for (let batch = 0; batch < batches; batch++) {
  const now = Date.now()
  await Promise.all(Array.from({ length: BATCH }, (_, i) => counters.consume(checks[i % 4]!, now)))
}
await counters.close()
console.log(batches * BATCH)
