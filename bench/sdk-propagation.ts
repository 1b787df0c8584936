/**
 * Multi-service mode: how fast a change reaches every SDK app, and what an SDK app costs per
 * request.
 *
 * 1. Propagation: a central server (the admin app on its own Fastify, memory backend) in this
 *    process and 50 SDK apps over real HTTP on loopback (5 processes × 10 apps: 50 processes do
 *    not fit 2 cores). 200 changes to warm up, then 1,000 counted, one at a time (one every
 *    `GAP_MS`, far more than a change takes to arrive; a change still arriving when the next
 *    is made is counted and reported),
 *    alternating a route state (disable / enable `GET:/r0` of service `bench`) and the global
 *    rate-limit policy; for each, the time from just before the server's write to the moment
 *    the last of the 50 apps applied it (`process.hrtime.bigint()`, one monotonic clock for
 *    every process of the machine), and the CPU time each change costs the server and each
 *    process of apps (`process.cpuUsage()`): on a shared machine the latency is mostly waiting
 *    for a core, the CPU time is the work. The app processes keep their timestamps and print
 *    them after the run, so the bench's own reporting does not compete with apps still
 *    applying a change. The server's own share is reported too (`server written`: until its
 *    call returned, with every frame on a socket), and the CPU time's system part (on loopback
 *    a socket write also runs the receiving side's TCP path). Goal: p99 < 2 ms.
 *    Then the same measure for the floor (`socket floor`): a bare socket server here writes a
 *    line of the same length to 50 plain TCP connections, spread over the same processes,
 *    which only note its arrival (servers/socket-floor.ts). No HTTP, no parsing, no state: what
 *    any change costs to reach 50 receivers in Node on this machine, whoever sends it.
 * 2. Per-request cost: bare Fastify vs an SDK app (same 50 routes, connected to the server, no
 *    change running), with the standalone switchyard plugin as a reference (the SDK app runs the
 *    same request path), with the HTTP harness (interleaved rounds, medians, ratios).
 *    Goal: ≥ 0.98× bare Fastify.
 *
 * Usage: `npm run bench -- sdk-propagation [--quick] [--propagation-only] [--processes=N]`;
 * writes bench/results/sdk-propagation.json (not with `--propagation-only`). `--processes=N`
 * spreads the 50 apps over N processes instead of 5 (a divisor of 50): fewer processes wake
 * fewer schedulable threads per change, more spread the apps' work over both cores.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { createServer, type AddressInfo, type Socket } from 'node:net'
import Fastify from 'fastify'
import { adminApp } from '../src/admin/index.js'
import { eventFrame } from '../src/common/sse-frames.js'
import { createEngine } from '../src/index.js'
import { nodeArgsFor } from './lib/compiled.js'
import { runHttpBenchmark } from './lib/http-harness.js'
import { writeResults } from './lib/results.js'
import { percentile } from './lib/stats.js'

const quick = process.argv.includes('--quick')
/** Skip the request-cost part (and the results file): for working on propagation. */
const propagationOnly = process.argv.includes('--propagation-only')
/** `--processes=N`: how the 50 apps are spread over processes (default 5 × 10). */
function processesOption(): number {
  const option = process.argv.find((arg) => arg.startsWith('--processes='))
  if (option === undefined) return 5
  const value = Number(option.slice('--processes='.length))
  if (![1, 2, 5, 10, 25, 50].includes(value))
    throw new Error('--processes= takes a divisor of 50: 1, 2, 5, 10, 25 or 50')
  return value
}
const PROCESSES = processesOption()
const APPS_PER_PROCESS = 50 / PROCESSES
const CHANGES = quick ? 200 : 1000
/**
 * Changes made first and not counted, as every other benchmark here warms up: the first few
 * hundred changes run while V8 is still compiling the code that sends and applies them, at up
 * to 10 ms each.
 */
const WARMUP = quick ? 50 : 200
/** Milliseconds between two changes: far more than one takes to reach every app. */
const GAP_MS = 5

const engine = createEngine({ store: 'memory', service: 'central' })
const server = Fastify({ logger: false })
await server.register(adminApp, { engine, path: '/switchyard', auth: null })
await engine.start()
const address = await server.listen({ host: '127.0.0.1', port: 0 })
const url = `${address}/switchyard`

/** One child process of receivers: SDK apps, or the floor's plain connections. */
interface Receivers {
  child: ChildProcess
  /** When the last receiver of the process handled each change (hrtime ns), once reported. */
  applied: Map<number, bigint>
  /**
   * CPU time (µs) the process had used when it handled the first counted and the last change:
   * user, system, user, system.
   */
  cpu: number[]
  /** Resolves when the process has printed its report. */
  reported: Promise<void>
}

function startReceivers(script: string, env: Record<string, string>): Promise<Receivers> {
  const child = spawn(process.execPath, nodeArgsFor(script), {
    env: {
      ...process.env,
      ...env,
      SDK_APPS: String(APPS_PER_PROCESS),
      SDK_FIRST: String(WARMUP),
      SDK_CHANGES: String(WARMUP + CHANGES),
    },
    stdio: ['pipe', 'pipe', 'inherit'],
  })
  let reportEnded!: () => void
  const receivers: Receivers = {
    child,
    applied: new Map(),
    cpu: [],
    reported: new Promise((resolve) => (reportEnded = resolve)),
  }
  let buffer = ''
  return new Promise((resolve, reject) => {
    child.on('exit', (code) => reject(new Error(`${script} exited with ${code}`)))
    child.stdout.on('data', (chunk: Buffer) => {
      buffer += chunk.toString()
      let end = buffer.indexOf('\n')
      while (end >= 0) {
        const line = buffer.slice(0, end)
        buffer = buffer.slice(end + 1)
        end = buffer.indexOf('\n')
        if (line.startsWith('READY')) resolve(receivers)
        else if (line === 'END') reportEnded()
        else if (line.startsWith('CPU ')) receivers.cpu = line.slice(4).split(' ').map(Number)
        else {
          const match = /^S (\d+) (\d+)$/.exec(line)
          if (match) receivers.applied.set(Number(match[1]), BigInt(match[2]!))
        }
      }
    })
  })
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

function stats(values: number[]) {
  const at = (q: number) => percentile(values, q)
  return {
    count: values.length,
    p50_ms: at(0.5),
    p90_ms: at(0.9),
    p95_ms: at(0.95),
    p99_ms: at(0.99),
    max_ms: Math.max(...values),
  }
}

/**
 * Makes the warm-up and the counted changes one at a time with `apply` (which sends change
 * `seq`), then collects what every process of `groups` noted.
 */
async function measurePropagation(
  groups: Receivers[],
  apply: (seq: number) => Promise<void> | void,
) {
  const started: bigint[] = []
  /** When `apply` returned: the change applied and written to every receiver's socket. */
  const sent: bigint[] = []
  const change = async (seq: number) => {
    started[seq] = process.hrtime.bigint()
    await apply(seq)
    sent[seq] = process.hrtime.bigint()
    await pause(GAP_MS)
  }
  for (let seq = 0; seq < WARMUP; seq++) await change(seq)
  const serverCpuBefore = process.cpuUsage()
  for (let seq = WARMUP; seq < WARMUP + CHANGES; seq++) await change(seq)
  const serverCpu = process.cpuUsage(serverCpuBefore)
  // Time for the last change to arrive, then every process prints what it noted.
  await pause(200)
  for (const group of groups) group.child.stdin!.write('REPORT\n')
  await Promise.all(groups.map((group) => group.reported))
  for (const group of groups) group.child.kill('SIGTERM')

  const evenLatencies: number[] = []
  const oddLatencies: number[] = []
  let overlapping = 0
  const measured = Array.from({ length: CHANGES }, (_, index) => WARMUP + index)
  for (const seq of measured) {
    let latest = 0n
    for (const group of groups) {
      const at = group.applied.get(seq)
      if (at === undefined) throw new Error(`change ${seq} did not reach every receiver`)
      if (at > latest) latest = at
    }
    const latency = Number(latest - started[seq]!) / 1e6
    if (latency >= GAP_MS) overlapping += 1
    ;(seq % 2 === 0 ? evenLatencies : oddLatencies).push(latency)
  }
  // CPU per change: what each change costs, apart from waiting for a core. The server's is
  // measured over the counted changes, the receivers' from the first counted change to the
  // last. System time is the kernel's share: on loopback a socket write also runs the
  // receiving side's TCP path.
  const receiversCpu = (offset: 0 | 1) =>
    groups
      .map((group) => (group.cpu[2 + offset]! - group.cpu[offset]!) / (CHANGES - 1))
      .reduce((sum, each) => sum + each, 0) / groups.length
  return {
    all: stats([...evenLatencies, ...oddLatencies]),
    even: stats(evenLatencies),
    odd: stats(oddLatencies),
    // The server's own share of the latency: until its call returned, every frame was on a socket.
    server_written: stats(measured.map((seq) => Number(sent[seq]! - started[seq]!) / 1e6)),
    cpu_per_change: {
      server_us: (serverCpu.user + serverCpu.system) / CHANGES,
      server_system_us: serverCpu.system / CHANGES,
      per_app_process_us: receiversCpu(0) + receiversCpu(1),
      per_app_process_system_us: receiversCpu(1),
    },
    overlapping,
  }
}

const fmt = (value: number) => value.toFixed(3).padStart(9)
const us = (value: number) => value.toFixed(0)
function printTable(rows: Record<string, ReturnType<typeof stats>>): void {
  console.log(
    `${'change'.padEnd(20)}${['p50', 'p90', 'p95', 'p99', 'max'].map((q) => q.padStart(9)).join('')}`,
  )
  for (const [name, row] of Object.entries(rows))
    console.log(
      `${name.padEnd(20)}${[row.p50_ms, row.p90_ms, row.p95_ms, row.p99_ms, row.max_ms].map(fmt).join('')}`,
    )
}

// 1. The SDK apps: alternately a route state (disable / enable `GET:/r0` of service `bench`)
//    and the global rate-limit policy; the change's number travels in it, for the apps to note.
const apps = await Promise.all(
  Array.from({ length: PROCESSES }, () =>
    startReceivers('bench/servers/sdk-apps.ts', { SDK_SERVER: url }),
  ),
)
const sdk = await measurePropagation(apps, async (seq) => {
  if (seq % 2 === 0) {
    const reason = `c${seq}`
    if (seq % 4 === 0) await engine.disable('GET:/r0', { service: 'bench', reason })
    else await engine.enable('GET:/r0', { service: 'bench', reason })
  } else {
    await engine.setGlobalRateLimit({ limit: `${seq + 1}/minute` })
  }
})
// Leave the state the request-cost run expects: every route active, no policy.
await engine.enable('GET:/r0', { service: 'bench' })
await engine.deleteGlobalRateLimit()
// As long as an SDK frame of a route state: the floor sends as many bytes per change.
const frameBytes = eventFrame('route_state', {
  service: 'bench',
  route: 'GET:/r0',
  state: engine.routeOverrides('bench').find((state) => state.route === 'GET:/r0') ?? null,
}).length

// 2. The floor: the same number of plain TCP connections, the same bytes per change, written
//    by a bare socket server here and only noted on arrival (see servers/socket-floor.ts).
const floorSockets: Socket[] = []
const floorServer = createServer({ noDelay: true }, (socket) => {
  floorSockets.push(socket)
  socket.on('error', () => undefined)
})
await new Promise<void>((resolve) => floorServer.listen(0, '127.0.0.1', resolve))
const floorPort = (floorServer.address() as AddressInfo).port
const floorGroups = await Promise.all(
  Array.from({ length: PROCESSES }, () =>
    startReceivers('bench/servers/socket-floor.ts', { FLOOR_PORT: String(floorPort) }),
  ),
)
const floor = await measurePropagation(floorGroups, (seq) => {
  const line = Buffer.from(`${seq} `.padEnd(frameBytes - 1, 'x') + '\n')
  for (const socket of floorSockets) socket.write(line)
})
for (const socket of floorSockets) socket.destroy()
floorServer.close()

const propagation = {
  apps: PROCESSES * APPS_PER_PROCESS,
  processes: PROCESSES,
  all: sdk.all,
  route_state: sdk.even,
  global_rl_policy: sdk.odd,
  server_written: sdk.server_written,
  cpu_per_change: sdk.cpu_per_change,
  gap_ms: GAP_MS,
  overlapping: sdk.overlapping,
  socket_floor: {
    all: floor.all,
    server_written: floor.server_written,
    cpu_per_change: floor.cpu_per_change,
    overlapping: floor.overlapping,
  },
}
const receivers = `${propagation.apps} receivers (${PROCESSES} processes × ${APPS_PER_PROCESS})`
console.log(
  `\nsdk-propagation: ${CHANGES} changes (after ${WARMUP} not counted), one at a time, to ${receivers}; ms from the server's write to the last receiver handling it\n`,
)
printTable({
  all: sdk.all,
  route_state: sdk.even,
  global_rl_policy: sdk.odd,
  'server written': sdk.server_written,
  'socket floor': floor.all,
  'floor written': floor.server_written,
})
for (const [name, cpu] of [
  ['SDK', sdk.cpu_per_change],
  ['socket floor', floor.cpu_per_change],
] as const)
  console.log(
    `CPU per change, ${name}: server ${us(cpu.server_us)} µs (system ${us(cpu.server_system_us)}; writing to 50 receivers included), each receiving process ${us(cpu.per_app_process_us)} µs (system ${us(cpu.per_app_process_system_us)}; ${APPS_PER_PROCESS} receivers)`,
  )
console.log(
  `changes still arriving when the next one was made (${GAP_MS} ms later): ${sdk.overlapping} (floor ${floor.overlapping})`,
)
console.log(`target p99 < 2 ms: ${sdk.all.p99_ms < 2 ? 'met' : 'MISSED'}`)

if (propagationOnly) process.exit(0)
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

const written = writeResults('sdk-propagation', {
  changes: CHANGES,
  warmup_changes: WARMUP,
  propagation,
  request_cost: requestCost,
  targets: { propagation_p99_ms: 2, request_ratio_min: 0.98 },
})
console.log(`written ${written}`)
await server.close()
await engine.close()
