/**
 * Route-state overhead: bare Fastify vs Fastify + switchyard (states only, 50 routes), and,
 * the switchyard Redis store with two server processes sharing Redis (one of them loaded), and
 * the PostgreSQL store. Goal (bench/README.md): ≥ 0.98× bare Fastify with any store.
 */
import { existsSync } from 'node:fs'
import { runHttpBenchmark, type HttpCase } from './lib/http-harness.js'

const quick = process.argv.includes('--quick')
const cases: HttpCase[] = [
  { name: 'fastify', script: 'bench/servers/bare.ts' },
  { name: 'switchyard-memory', script: 'bench/servers/switchyard-memory.ts' },
]
if (existsSync('bench/servers/switchyard-redis.ts')) {
  cases.push({
    name: 'switchyard-redis',
    script: 'bench/servers/switchyard-redis.ts',
    env: { CTL_BACKEND: 'redis' },
  })
}

if (existsSync('bench/servers/switchyard-postgres.ts')) {
  cases.push({
    name: 'switchyard-postgres',
    script: 'bench/servers/switchyard-postgres.ts',
    env: { CTL_BACKEND: 'postgres' },
  })
}

await runHttpBenchmark('http-overhead', cases, {
  rounds: quick ? 3 : 5,
  duration: quick ? 3 : 5,
  warmup: 2,
  connections: 50,
  baseline: 'fastify',
})
