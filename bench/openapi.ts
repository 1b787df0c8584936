/**
 * The API description under load: @fastify/swagger-ui's JSON and YAML routes with
 * @fastify/swagger alone vs with the switchyard plugin filtering the document by route state
 * (cached per state, so a request costs a freshness check). `switchyard-active` serves the same
 * document as `swagger` (every route active) and isolates that check; `switchyard` serves a
 * filtered, smaller document. Goal: ≥ 0.95× @fastify/swagger.
 */
import { runHttpBenchmark, type HttpCase } from './lib/http-harness.js'

const quick = process.argv.includes('--quick')
const options = {
  rounds: quick ? 3 : 5,
  duration: quick ? 3 : 5,
  warmup: 2,
  connections: 50,
  baseline: 'swagger',
}
const variants = (path: string): HttpCase[] => [
  { name: 'swagger', script: 'bench/servers/openapi.ts', path, env: { OPENAPI_CASE: 'swagger' } },
  {
    name: 'switchyard-active',
    script: 'bench/servers/openapi.ts',
    path,
    env: { OPENAPI_CASE: 'switchyard-active' },
  },
  {
    name: 'switchyard',
    script: 'bench/servers/openapi.ts',
    path,
    env: { OPENAPI_CASE: 'switchyard' },
  },
]

await runHttpBenchmark('openapi-json', variants('/docs/json'), options)
await runHttpBenchmark('openapi-yaml', variants('/docs/yaml'), options)
