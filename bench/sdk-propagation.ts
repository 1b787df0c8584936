/**
 * Multi-service mode: how fast a change reaches every SDK app, and what an SDK app costs per
 * request.
 *
 * 1. Propagation: a central server (the admin app on its own Fastify, memory backend) in this
 *    process and 50 SDK apps over real HTTP on loopback (5 processes × 10 apps: 50 processes do
 *    not fit 2 cores). 1,000 changes, one at a time, alternating a route state (disable /
 *    enable `GET:/r0` of service `bench`) and the global rate-limit policy; for each, the time
 *    from just before the server's write to the moment the last of the 50 apps applied it
 *    (`process.hrtime.bigint()`, one monotonic clock for every process of the machine), and
 *    the CPU time each change costs the server and each process of apps (`process.cpuUsage()`):
 *    on a shared machine the latency is mostly waiting for a core, the CPU time is the work.
 *    Goal: p99 < 2 ms.
 * 2. Per-request cost: bare Fastify vs an SDK app (same 50 routes, connected to the server, no
 *    change running), with the standalone switchyard plugin as a reference (the SDK app runs the
 *    same request path), with the HTTP harness (interleaved rounds, medians, ratios).
 *    Goal: ≥ 0.98× bare Fastify.
 *
 * Usage: `npm run bench -- sdk-propagation [--quick]`; writes bench/results/sdk-propagation.json.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import Fastify from 'fastify'
import { adminApp } from '../src/admin/index.js'
import { createEngine } from '../src/index.js'
import { nodeArgsFor } from './lib/compiled.js'
import { runHttpBenchmark } from './lib/http-harness.js'

const quick = process.argv.includes('--quick')
const PROCESSES = 5
const APPS_PER_PROCESS = 10
const CHANGES = quick ? 200 : 1000

const engine = createEngine({ store: 'memory', service: 'central' })
const server = Fastify({ logger: false })
await server.register(adminApp, { engine, path: '/switchyard', auth: null })
await engine.start()
const address = await server.listen({ host: '127.0.0.1', port: 0 })
const url = `${address}/switchyard`

/** One child process of SDK apps, with the sequence numbers it reported. */
interface Apps {
  child: ChildProcess
  reported: Map<number, bigint>
  /** CPU time (µs) the process had used when it reported each sequence number. */
  cpu: Map<number, number>
}

const waiters = new Set<() => void>()
function startApps(): Promise<Apps> {
  const child = spawn(process.execPath, nodeArgsFor('bench/servers/sdk-apps.ts'), {
    env: { ...process.env, SDK_SERVER: url, SDK_APPS: String(APPS_PER_PROCESS) },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const apps: Apps = { child, reported: new Map(), cpu: new Map() }
  let buffer = ''
  return new Promise((resolve, reject) => {
    child.on('exit', (code) => reject(new Error(`SDK apps exited with ${code}`)))
    child.stdout.on('data', (chunk: Buffer) => {
      buffer += chunk.toString()
      let end = buffer.indexOf('\n')
      while (end >= 0) {
        const line = buffer.slice(0, end)
        buffer = buffer.slice(end + 1)
        end = buffer.indexOf('\n')
        if (line.startsWith('READY')) resolve(apps)
        const match = /^S (\d+) (\d+) (\d+)$/.exec(line)
        if (match) {
          apps.reported.set(Number(match[1]), BigInt(match[2]!))
          apps.cpu.set(Number(match[1]), Number(match[3]))
          for (const wake of waiters) wake()
        }
      }
    })
  })
}

const groups = await Promise.all(Array.from({ length: PROCESSES }, () => startApps()))

function allReported(seq: number): Promise<bigint> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`change ${seq} did not reach every app`)),
      10_000,
    )
    const check = () => {
      if (!groups.every((group) => group.reported.has(seq))) return
      clearTimeout(timer)
      waiters.delete(check)
      let latest = 0n
      for (const group of groups) {
        const at = group.reported.get(seq)!
        group.reported.delete(seq)
        if (at > latest) latest = at
      }
      resolve(latest)
    }
    waiters.add(check)
    check()
  })
}

const routeLatencies: number[] = []
const policyLatencies: number[] = []
const serverCpuBefore = process.cpuUsage()
for (let seq = 0; seq < CHANGES; seq++) {
  const applied = allReported(seq)
  const started = process.hrtime.bigint()
  if (seq % 2 === 0) {
    const reason = `c${seq}`
    if (seq % 4 === 0) await engine.disable('GET:/r0', { service: 'bench', reason })
    else await engine.enable('GET:/r0', { service: 'bench', reason })
  } else {
    await engine.setGlobalRateLimit({ limit: `${seq + 1}/minute` })
  }
  const latency = Number((await applied) - started) / 1e6
  ;(seq % 2 === 0 ? routeLatencies : policyLatencies).push(latency)
}

const serverCpu = process.cpuUsage(serverCpuBefore)
// CPU per change: what each change costs, apart from waiting for a core (first change excluded:
// it is counted from the process's start).
const cpuPerChange = {
  server_us: (serverCpu.user + serverCpu.system) / CHANGES,
  per_app_process_us:
    groups
      .map((group) => (group.cpu.get(CHANGES - 1)! - group.cpu.get(0)!) / (CHANGES - 1))
      .reduce((sum, each) => sum + each, 0) / groups.length,
}

function stats(values: number[]) {
  const sorted = [...values].sort((a, b) => a - b)
  const at = (q: number) =>
    sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? 0
  return { count: sorted.length, p50_ms: at(0.5), p99_ms: at(0.99), max_ms: sorted.at(-1) ?? 0 }
}
const all = stats([...routeLatencies, ...policyLatencies])
const propagation = {
  apps: PROCESSES * APPS_PER_PROCESS,
  all,
  route_state: stats(routeLatencies),
  global_rl_policy: stats(policyLatencies),
  cpu_per_change: cpuPerChange,
}
const fmt = (value: number) => value.toFixed(3).padStart(9)
console.log(
  `\nsdk-propagation: ${CHANGES} changes, one at a time, to ${propagation.apps} SDK apps (${PROCESSES} processes × ${APPS_PER_PROCESS}); ms from the server's write to the last app applying it\n`,
)
console.log(`${'change'.padEnd(20)}${'p50'.padStart(9)}${'p99'.padStart(9)}${'max'.padStart(9)}`)
for (const [name, row] of Object.entries({
  all,
  route_state: propagation.route_state,
  global_rl_policy: propagation.global_rl_policy,
}))
  console.log(`${name.padEnd(20)}${fmt(row.p50_ms)}${fmt(row.p99_ms)}${fmt(row.max_ms)}`)
console.log(
  `CPU per change: server ${cpuPerChange.server_us.toFixed(0)} µs (writing to 50 apps included), each app process ${cpuPerChange.per_app_process_us.toFixed(0)} µs (${APPS_PER_PROCESS} apps)`,
)
console.log(`target p99 < 2 ms: ${all.p99_ms < 2 ? 'met' : 'MISSED'}`)
for (const group of groups) group.child.kill('SIGTERM')
// Leave the state the request-cost run expects: every route active, no policy.
await engine.enable('GET:/r0', { service: 'bench' })
await engine.deleteGlobalRateLimit()

// Per-request cost of an SDK app (the server above stays connected to it).
await runHttpBenchmark(
  'sdk-request-cost',
  [
    { name: 'fastify', script: 'bench/servers/bare.ts' },
    // Reference: the same routes with the switchyard plugin of a standalone app.
    { name: 'switchyard-plugin', script: 'bench/servers/switchyard-memory.ts' },
    {
      name: 'switchyard-sdk',
      script: 'bench/servers/sdk-apps.ts',
      env: { SDK_SERVER: url, SDK_HTTP: '1' },
    },
  ],
  {
    rounds: quick ? 3 : 5,
    duration: quick ? 3 : 5,
    warmup: 2,
    connections: 50,
    baseline: 'fastify',
  },
)
const requestCost = JSON.parse(
  readFileSync('bench/results/sdk-request-cost.json', 'utf8'),
) as unknown

mkdirSync('bench/results', { recursive: true })
writeFileSync(
  'bench/results/sdk-propagation.json',
  `${JSON.stringify(
    {
      benchmark: 'sdk-propagation',
      date: new Date().toISOString(),
      node: process.version,
      changes: CHANGES,
      propagation,
      request_cost: requestCost,
      targets: { propagation_p99_ms: 2, request_ratio_min: 0.98 },
    },
    null,
    2,
  )}\n`,
)
console.log('written bench/results/sdk-propagation.json')
await server.close()
await engine.close()
