/**
 * OFREP benchmarks.
 *
 * 1. `ofrep-single`: one flag evaluation over HTTP on loopback, switchyard's
 *    `POST {admin}/ofrep/v1/evaluate/flags/{key}` with an evaluation key vs a bare Fastify
 *    route returning the same JSON (harness method: pinned processes, interleaved rounds).
 *    Goal ≥ 0.8× the bare route.
 * 2. `ofrep-bulk`: the bulk evaluation of 100 flags for one context, timed inside the server
 *    process (Fastify's `inject`: routing, auth, body parsing, evaluation, serialisation — no
 *    socket), and the 304 answer to a matching `If-None-Match`. Goal < 1 ms server time.
 */
import { randomBytes } from 'node:crypto'
import { mkdirSync, writeFileSync } from 'node:fs'
import type { FlagInput } from '../src/flags/index.js'
import { runHttpBenchmark } from './lib/http-harness.js'
import { percentile } from './lib/stats.js'
import { ofrepApp } from './servers/ofrep-app.js'
import {
  CHECKOUT,
  EXPECTED_ANSWER,
  OFREP_KEY_VARIABLE,
  REQUEST_BODY,
} from './servers/ofrep-flags.js'

const quick = process.argv.includes('--quick')
const key = `syk_${randomBytes(32).toString('base64url')}`
const request = {
  method: 'POST',
  headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
  body: REQUEST_BODY,
}
const path = '/switchyard/ofrep/v1/evaluate/flags/checkout'

// Before the rounds: the bare route must send what switchyard sends, or the ratio compares two
// different answers.
{
  const app = await ofrepApp([CHECKOUT], key, null)
  const single = await app.inject({
    method: 'POST',
    url: path,
    headers: request.headers,
    payload: REQUEST_BODY,
  })
  await app.close()
  if (single.body !== JSON.stringify(EXPECTED_ANSWER)) {
    throw new Error(`the single answer differs from the baseline's JSON: ${single.body}`)
  }
}

await runHttpBenchmark(
  'ofrep-single',
  [
    { name: 'fastify-same-json', script: 'bench/servers/ofrep-bare.ts', path, request },
    {
      name: 'switchyard-ofrep',
      script: 'bench/servers/ofrep-switchyard.ts',
      path,
      request,
      env: { [OFREP_KEY_VARIABLE]: key },
    },
  ],
  {
    rounds: quick ? 3 : 5,
    duration: quick ? 3 : 5,
    warmup: 2,
    connections: 50,
    baseline: 'fastify-same-json',
  },
)

// ---- bulk: 100 flags for one context, in-process --------------------------------------------

/** 100 flags of every type: targets, segment and attribute rules, rollouts, prerequisites. */
function hundredFlags(): FlagInput[] {
  const flags: FlagInput[] = []
  for (let n = 0; n < 100; n++) {
    const base = { ...CHECKOUT, key: `flag-${n}`, name: `Flag ${n}` }
    switch (n % 5) {
      case 0:
        flags.push(base)
        break
      case 1:
        flags.push({
          ...base,
          prerequisites: [{ flag_key: `flag-${n - 1}`, variation: 'on' }],
          rules: [],
          fallthrough: 'on',
        })
        break
      case 2:
        flags.push({
          key: base.key,
          name: base.name,
          type: 'string',
          variations: [
            { name: 'a', value: 'alpha' },
            { name: 'b', value: 'beta' },
            { name: 'c', value: 'gamma' },
          ],
          off_variation: 'a',
          rules: [
            {
              id: `country-${n}`,
              clauses: [{ attribute: 'country', operator: 'in', values: ['DE', 'FR'] }],
              variation: 'b',
            },
          ],
          fallthrough: [
            { variation: 'a', weight: 50_000 },
            { variation: 'c', weight: 50_000 },
          ],
        })
        break
      case 3:
        flags.push({
          key: base.key,
          name: base.name,
          type: 'integer',
          variations: [
            { name: 'small', value: 10 },
            { name: 'large', value: 100 },
          ],
          off_variation: 'small',
          rules: [
            {
              id: `email-${n}`,
              clauses: [{ attribute: 'email', operator: 'ends_with', values: ['@shop.example'] }],
              variation: 'large',
            },
          ],
          fallthrough: 'small',
        })
        break
      default:
        flags.push({
          key: base.key,
          name: base.name,
          type: 'json',
          variations: [
            { name: 'basic', value: { rps: 10, regions: ['eu'] } },
            { name: 'pro', value: { rps: 1000, regions: ['eu', 'us'], burst: true } },
          ],
          off_variation: 'basic',
          fallthrough: 'basic',
          rules: [
            {
              id: `plan-${n}`,
              clauses: [{ attribute: 'plan', operator: 'is', values: ['pro'] }],
              variation: 'pro',
            },
          ],
          enabled: n % 10 !== 9,
        })
    }
  }
  return flags
}

const app = await ofrepApp([...hundredFlags(), CHECKOUT], key, null)

const bulk = (headers: Record<string, string>) =>
  app.inject({
    method: 'POST',
    url: '/switchyard/ofrep/v1/evaluate/flags',
    headers,
    payload: REQUEST_BODY,
  })
const first = await bulk(request.headers)
const flagCount = first.json<{ flags: unknown[] }>().flags.length
const etag = String(first.headers.etag)

async function timed(label: string, headers: Record<string, string>, status: number) {
  const runs = quick ? 2000 : 10_000
  const samples: number[] = []
  for (let n = 0; n < runs; n++) {
    const start = process.hrtime.bigint()
    const response = await bulk(headers)
    samples.push(Number(process.hrtime.bigint() - start) / 1000)
    if (response.statusCode !== status) throw new Error(`${label}: status ${response.statusCode}`)
  }
  const at = (q: number) => percentile(samples, q)
  return {
    case: label,
    runs,
    median_us: round(at(0.5)),
    p90_us: round(at(0.9)),
    p99_us: round(at(0.99)),
  }
}

const round = (value: number) => Math.round(value * 10) / 10
// Warm up, then measure.
await timed('warmup', request.headers, 200)
const rows = [
  await timed(`bulk ${flagCount} flags → 200`, request.headers, 200),
  await timed(
    `bulk ${flagCount} flags, If-None-Match → 304`,
    { ...request.headers, 'if-none-match': etag },
    304,
  ),
]
console.log(
  `\n# ofrep-bulk: server time per request (Fastify inject, one process), ${flagCount} flags, one context`,
)
console.log('| case | runs | median µs | p90 µs | p99 µs |')
console.log('|---|---|---|---|---|')
for (const row of rows)
  console.log(`| ${row.case} | ${row.runs} | ${row.median_us} | ${row.p90_us} | ${row.p99_us} |`)
mkdirSync('bench/results', { recursive: true })
writeFileSync(
  'bench/results/ofrep-bulk.json',
  JSON.stringify({ name: 'ofrep-bulk', date: new Date().toISOString(), rows }, null, 2),
)
console.log('\nwritten bench/results/ofrep-bulk.json')
await app.close()
