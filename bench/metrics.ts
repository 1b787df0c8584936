/**
 * Prometheus metrics: route-state requests with metrics on vs bare Fastify (goal ≥ 0.95×; a
 * passing request does no metrics work; the plugin without metrics is measured beside them), and one scrape of 2,000 routes with each of the four
 * block reasons counted on every route (goal < 50 ms, median of interleaved rounds).
 */
import Fastify from 'fastify'
import { createEngine } from '../src/index.js'
import { switchyard } from '../src/fastify/index.js'
import type { Decision } from '../src/core/decision.js'
import { runHttpBenchmark } from './lib/http-harness.js'
import { writeResults } from './lib/results.js'
import { median, percentile } from './lib/stats.js'

const quick = process.argv.includes('--quick')

await runHttpBenchmark(
  'metrics',
  [
    { name: 'fastify', script: 'bench/servers/bare.ts' },
    // The plugin without metrics: what metrics add is the difference from this one.
    { name: 'switchyard-memory', script: 'bench/servers/switchyard-memory.ts' },
    { name: 'switchyard-metrics', script: 'bench/servers/switchyard-metrics.ts' },
  ],
  {
    rounds: quick ? 3 : 5,
    duration: quick ? 3 : 5,
    warmup: 2,
    connections: 50,
    baseline: 'fastify',
  },
)

const ROUTES = 2000
const block = (code: string): Decision => ({
  action: 'block',
  statusCode: code === 'RATE_LIMITED' ? 429 : 503,
  body: { error: { code, message: code } },
  headers: [],
})
const decisions: Decision[] = [
  block('MAINTENANCE_MODE'),
  block('ROUTE_DISABLED'),
  block('RATE_LIMITED'),
  { action: 'not_found' },
]
const engine = createEngine({ store: 'memory', service: 'bench' })
const app = Fastify({ logger: false })
await app.register(switchyard, { engine, metrics: { public: true } })
for (let i = 0; i < ROUTES; i++) app.get(`/scrape/r${i}/:id`, () => 'ok')
await app.ready()
// Count every reason on every route through the plugin's own observer, as blocked requests do.
const metrics = (await import('../src/metrics/registry.js')).createMetrics
const collectors = await metrics({ engine })
for (const slot of engine.registeredRoutes())
  for (const decision of decisions) collectors.routes.observe(slot, decision)
const timings: number[] = []
let bytes = 0
const rounds = quick ? 20 : 50
for (let round = 0; round < rounds + 5; round++) {
  const started = performance.now()
  const text = await collectors.scrape()
  const elapsed = performance.now() - started
  bytes = text.length
  if (round >= 5) timings.push(elapsed) // the first rounds warm up
}
const scrapeMs = median(timings)
console.log(
  `\n# metrics scrape: ${ROUTES} routes × ${decisions.length} reasons (+ ${ROUTES} route_state series), ${rounds} rounds`,
)
console.log('| median ms | p95 ms | body bytes |')
console.log('|---|---|---|')
console.log(
  `| ${scrapeMs.toFixed(2)} | ${percentile(timings, 0.95).toFixed(2)} | ${bytes.toLocaleString('en-US')} |`,
)
console.log(
  `written ${writeResults('metrics-scrape', { routes: ROUTES, median_ms: scrapeMs, bytes })}`,
)
collectors.close()
await app.close()
