/**
 * Multi-service mode: how fast a change reaches every SDK app, and what an SDK app costs per
 * request.
 *
 * 1. Propagation: a central server (the admin app on its own Fastify, memory backend) in this
 *    process and 50 SDK apps over real HTTP on loopback (5 processes × 10 apps: 50 processes do
 *    not fit 2 cores). 200 changes to warm up, then rounds of 1,000 counted changes (5 rounds
 *    by default), one at a time (one every `GAP_MS`, far more than a change takes to arrive; a
 *    change still arriving when the next is made is counted and reported), alternating a route
 *    state (disable / enable `GET:/r0` of service `bench`) and the global rate-limit policy;
 *    for each, the time from just before the server's write to the moment the last of the 50
 *    apps applied it (`process.hrtime.bigint()`, one monotonic clock for every process of the
 *    machine), and the CPU time each change costs the server and each process of apps
 *    (`process.cpuUsage()`): on a shared machine the latency is mostly waiting for a core, the
 *    CPU time is the work. The app processes keep their timestamps and print them after each
 *    round, so the bench's own reporting does not compete with apps still applying a change.
 *    The server's own share is reported too (`server written`: until its call returned, with
 *    every frame on a socket), and the CPU time's system part (on loopback a socket write also
 *    runs the receiving side's TCP path). Goal: p99 ≤ 1.5× the socket floor's (below).
 *    Each round is followed by a round of the floor (`socket floor`): a bare socket server here
 *    writes a line of the same length to 50 plain TCP connections, spread over the same
 *    processes, which only note its arrival (servers/socket-floor.ts). No HTTP, no parsing, no
 *    state: what any change costs to reach 50 receivers in Node on this machine, whoever sends
 *    it. Rounds of the two interleave, so a slower spell of the machine falls on both; the
 *    percentiles are taken over every round's changes, and each round's p99 is listed too: from
 *    one round of 1,000 changes to the next, the p99 of the same code on the same machine moves
 *    by a factor of up to two.
 * 2. Per-request cost: bare Fastify vs an SDK app (same 50 routes, connected to the server, no
 *    change running), with the standalone switchyard plugin as a reference (the SDK app runs the
 *    same request path), with the HTTP harness (interleaved rounds, medians, ratios).
 *    Goal: ≥ 0.98× bare Fastify.
 *
 * Usage: `npm run bench -- sdk-propagation [--quick] [--propagation-only] [--processes=N]
 * [--rounds=N]`; writes bench/results/sdk-propagation.json (not with `--propagation-only`).
 * `--quick` makes one round of 200 changes after 50 to warm up. Every run also writes
 * bench/results/sdk-propagation-<processes>x<apps>.json (`--propagation-only` too): the goal is
 * the SDK's p99 ≤ 1.5× the socket floor's of the same run, at 5 × 10 and at 2 × 25. `--processes=N`
 * spreads the 50 apps over N processes instead of 5 (a divisor of 50): fewer processes wake
 * fewer schedulable threads per change, more spread the apps' work over both cores.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdirSync, readFileSync } from 'node:fs'
import { createServer, type AddressInfo, type Socket } from 'node:net'
import { basename, join } from 'node:path'
import Fastify from 'fastify'
import { adminApp } from '../src/admin/index.js'
import { eventFrame } from '../src/common/sse-frames.js'
import { createEngine } from '../src/index.js'
import { nodeArgsFor } from './lib/compiled.js'
import { runHttpBenchmark } from './lib/http-harness.js'
import { writeResults } from './lib/results.js'
import { median, percentile } from './lib/stats.js'

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
/** Changes counted per round. */
const CHANGES = quick ? 200 : 1000
/** `--rounds=N`: rounds of each kind, interleaved (default 5, 1 with `--quick`). */
function roundsOption(): number {
  const option = process.argv.find((arg) => arg.startsWith('--rounds='))
  if (option === undefined) return quick ? 1 : 5
  const value = Number(option.slice('--rounds='.length))
  if (!Number.isInteger(value) || value < 1 || value > 50)
    throw new Error('--rounds= takes a whole number from 1 to 50')
  return value
}
const ROUNDS = roundsOption()
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

/** One round's notes from a process of receivers. */
interface RoundReport {
  /** When the last receiver of the process handled each change (hrtime ns). */
  applied: Map<number, bigint>
  /**
   * CPU time (µs) the process had used when it handled the round's first and last change:
   * user, system, user, system.
   */
  cpu: number[]
}

/** One child process of receivers: SDK apps, or the floor's plain connections. */
interface Receivers {
  child: ChildProcess
  /** Asks for what the process noted since its last report (after a round). */
  report(): Promise<RoundReport>
}

/**
 * `SY_BENCH_CPU_PROF=<dir>`: each process of receivers writes a V8 CPU profile (sampled every
 * 50 µs) when the run ends, the SDK apps' into `<dir>/sdk-apps`, the floor's into
 * `<dir>/socket-floor` (Node refuses `--cpu-prof` in NODE_OPTIONS, so it is passed here).
 */
const profileDir = process.env.SY_BENCH_CPU_PROF

function profileArgs(script: string): string[] {
  if (profileDir === undefined) return []
  const dir = join(profileDir, basename(script, '.ts'))
  mkdirSync(dir, { recursive: true })
  return ['--cpu-prof', `--cpu-prof-dir=${dir}`, '--cpu-prof-interval=50']
}

function startReceivers(script: string, env: Record<string, string>): Promise<Receivers> {
  const child = spawn(process.execPath, [...profileArgs(script), ...nodeArgsFor(script)], {
    env: {
      ...process.env,
      ...env,
      SDK_APPS: String(APPS_PER_PROCESS),
      SDK_FIRST: String(WARMUP),
      SDK_ROUND: String(CHANGES),
    },
    stdio: ['pipe', 'pipe', 'inherit'],
  })
  let current: RoundReport = { applied: new Map(), cpu: [] }
  let reportEnded: (() => void) | null = null
  const receivers: Receivers = {
    child,
    report: () =>
      new Promise<RoundReport>((resolve) => {
        reportEnded = () => {
          const report = current
          current = { applied: new Map(), cpu: [] }
          resolve(report)
        }
        child.stdin.write('REPORT\n')
      }),
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
        else if (line === 'END') reportEnded?.()
        else if (line.startsWith('CPU ')) current.cpu = line.slice(4).split(' ').map(Number)
        else {
          const match = /^S (\d+) (\d+)$/.exec(line)
          if (match) current.applied.set(Number(match[1]), BigInt(match[2]!))
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

/** One kind of receivers, and how the driver makes change `seq` reach them. */
interface Kind {
  groups: Receivers[]
  apply: (seq: number) => Promise<void> | void
}

/** What one round of a kind measured: per change, and the CPU time it cost. */
interface Round {
  /** Milliseconds from the change to the last receiver handling it, even and odd changes. */
  even: number[]
  odd: number[]
  /** Milliseconds until the driver's call returned, every frame on a socket. */
  written: number[]
  /** CPU time (µs) per change: the server, and each receiving process on average. */
  cpu: { server: number; serverSystem: number; receivers: number; receiversSystem: number }
  /** Changes still arriving when the next one was made. */
  overlapping: number
}

/** Makes change `seq` and waits the gap; returns when it started and when the call returned. */
async function change(kind: Kind, seq: number): Promise<[bigint, bigint]> {
  const started = process.hrtime.bigint()
  await kind.apply(seq)
  const written = process.hrtime.bigint()
  await pause(GAP_MS)
  return [started, written]
}

/** The warm-up changes of a kind (0 to WARMUP - 1), not counted. */
async function warmUp(kind: Kind): Promise<void> {
  for (let seq = 0; seq < WARMUP; seq++) await change(kind, seq)
}

/**
 * Round `index` of a kind: CHANGES changes one at a time, then what every process of receivers
 * noted. Each kind numbers its changes on: warm-up first, then round after round.
 */
async function measureRound(kind: Kind, index: number): Promise<Round> {
  const first = WARMUP + index * CHANGES
  const started: bigint[] = []
  const sent: bigint[] = []
  const serverCpuBefore = process.cpuUsage()
  for (let seq = first; seq < first + CHANGES; seq++)
    [started[seq], sent[seq]] = await change(kind, seq)
  const serverCpu = process.cpuUsage(serverCpuBefore)
  // Time for the last change to arrive, then every process prints what it noted.
  await pause(200)
  const reports = await Promise.all(kind.groups.map((group) => group.report()))

  const even: number[] = []
  const odd: number[] = []
  const written: number[] = []
  let overlapping = 0
  for (let seq = first; seq < first + CHANGES; seq++) {
    let latest = 0n
    for (const report of reports) {
      const at = report.applied.get(seq)
      if (at === undefined) throw new Error(`change ${seq} did not reach every receiver`)
      if (at > latest) latest = at
    }
    const latency = Number(latest - started[seq]!) / 1e6
    if (latency >= GAP_MS) overlapping += 1
    ;(seq % 2 === 0 ? even : odd).push(latency)
    written.push(Number(sent[seq]! - started[seq]!) / 1e6)
  }
  // CPU per change: what each change costs, apart from waiting for a core. The server's is
  // measured over the round's changes, the receivers' from its first change to its last.
  // System time is the kernel's share: on loopback a socket write also runs the receiving
  // side's TCP path.
  const receivers = (offset: 0 | 1) =>
    reports
      .map((report) => (report.cpu[2 + offset]! - report.cpu[offset]!) / (CHANGES - 1))
      .reduce((sum, each) => sum + each, 0) / reports.length
  const cpu = {
    server: (serverCpu.user + serverCpu.system) / CHANGES,
    serverSystem: serverCpu.system / CHANGES,
    receivers: receivers(0) + receivers(1),
    receiversSystem: receivers(1),
  }
  return { even, odd, written, cpu, overlapping }
}

/**
 * Every round of a kind together: percentiles over all their changes, each round's p99 (the
 * spread the machine's noise makes), and the median round's CPU per change.
 */
function summarise(rounds: Round[]) {
  const all = rounds.flatMap((round) => [...round.even, ...round.odd])
  return {
    all: stats(all),
    even: stats(rounds.flatMap((round) => round.even)),
    odd: stats(rounds.flatMap((round) => round.odd)),
    server_written: stats(rounds.flatMap((round) => round.written)),
    round_p99_ms: rounds.map((round) => percentile([...round.even, ...round.odd], 0.99)),
    cpu_per_change: {
      server_us: median(rounds.map((round) => round.cpu.server)),
      server_system_us: median(rounds.map((round) => round.cpu.serverSystem)),
      per_app_process_us: median(rounds.map((round) => round.cpu.receivers)),
      per_app_process_system_us: median(rounds.map((round) => round.cpu.receiversSystem)),
    },
    overlapping: rounds.reduce((sum, round) => sum + round.overlapping, 0),
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

// The SDK apps: alternately a route state (disable / enable `GET:/r0` of service `bench`) and
// the global rate-limit policy; the change's number travels in it, for the apps to note.
const sdk: Kind = {
  groups: await Promise.all(
    Array.from({ length: PROCESSES }, () =>
      startReceivers('bench/servers/sdk-apps.ts', { SDK_SERVER: url }),
    ),
  ),
  apply: async (seq) => {
    if (seq % 2 === 0) {
      const reason = `c${seq}`
      if (seq % 4 === 0) await engine.disable('GET:/r0', { service: 'bench', reason })
      else await engine.enable('GET:/r0', { service: 'bench', reason })
    } else {
      await engine.setGlobalRateLimit({ limit: `${seq + 1}/minute` })
    }
  },
}
await warmUp(sdk)
// As long as an SDK frame of a route state: the floor sends as many bytes per change.
const frameBytes = eventFrame('route_state', {
  service: 'bench',
  route: 'GET:/r0',
  state: engine.routeOverrides('bench').find((state) => state.route === 'GET:/r0') ?? null,
}).length

// The floor: the same number of plain TCP connections, the same bytes per change, written by a
// bare socket server here and only noted on arrival (see servers/socket-floor.ts).
const floorSockets: Socket[] = []
const floorServer = createServer({ noDelay: true }, (socket) => {
  floorSockets.push(socket)
  socket.on('error', () => undefined)
})
await new Promise<void>((resolve) => floorServer.listen(0, '127.0.0.1', resolve))
const floorPort = (floorServer.address() as AddressInfo).port
const floor: Kind = {
  groups: await Promise.all(
    Array.from({ length: PROCESSES }, () =>
      startReceivers('bench/servers/socket-floor.ts', { FLOOR_PORT: String(floorPort) }),
    ),
  ),
  apply: (seq) => {
    const line = Buffer.from(`${seq} `.padEnd(frameBytes - 1, 'x') + '\n')
    for (const socket of floorSockets) socket.write(line)
  },
}
await warmUp(floor)

// The rounds, the two kinds interleaved: a slower spell of the machine falls on both.
const sdkRounds: Round[] = []
const floorRounds: Round[] = []
for (let index = 0; index < ROUNDS; index++) {
  sdkRounds.push(await measureRound(sdk, index))
  floorRounds.push(await measureRound(floor, index))
}
for (const group of [...sdk.groups, ...floor.groups]) group.child.kill('SIGTERM')
for (const socket of floorSockets) socket.destroy()
floorServer.close()
// Leave the state the request-cost run expects: every route active, no policy.
await engine.enable('GET:/r0', { service: 'bench' })
await engine.deleteGlobalRateLimit()

const sdkResult = summarise(sdkRounds)
const floorResult = summarise(floorRounds)
const propagation = {
  apps: PROCESSES * APPS_PER_PROCESS,
  processes: PROCESSES,
  rounds: ROUNDS,
  all: sdkResult.all,
  route_state: sdkResult.even,
  global_rl_policy: sdkResult.odd,
  server_written: sdkResult.server_written,
  round_p99_ms: sdkResult.round_p99_ms,
  cpu_per_change: sdkResult.cpu_per_change,
  gap_ms: GAP_MS,
  overlapping: sdkResult.overlapping,
  socket_floor: {
    all: floorResult.all,
    server_written: floorResult.server_written,
    round_p99_ms: floorResult.round_p99_ms,
    cpu_per_change: floorResult.cpu_per_change,
    overlapping: floorResult.overlapping,
  },
}
const receivers = `${propagation.apps} receivers (${PROCESSES} processes × ${APPS_PER_PROCESS})`
console.log(
  `\nsdk-propagation: ${ROUNDS} round(s) of ${CHANGES} changes (after ${WARMUP} not counted), one at a time, to ${receivers}, SDK apps and plain sockets interleaved; ms from the server's write to the last receiver handling it, over every round\n`,
)
printTable({
  all: sdkResult.all,
  route_state: sdkResult.even,
  global_rl_policy: sdkResult.odd,
  'server written': sdkResult.server_written,
  'socket floor': floorResult.all,
  'floor written': floorResult.server_written,
})
const listed = (values: number[]) => values.map((value) => value.toFixed(2)).join(', ')
console.log(
  `p99 of each round: SDK apps ${listed(sdkResult.round_p99_ms)}; socket floor ${listed(floorResult.round_p99_ms)}`,
)
for (const [name, cpu] of [
  ['SDK', sdkResult.cpu_per_change],
  ['socket floor', floorResult.cpu_per_change],
] as const)
  console.log(
    `CPU per change (median round), ${name}: server ${us(cpu.server_us)} µs (system ${us(cpu.server_system_us)}; writing to 50 receivers included), each receiving process ${us(cpu.per_app_process_us)} µs (system ${us(cpu.per_app_process_system_us)}; ${APPS_PER_PROCESS} receivers)`,
  )
console.log(
  `changes still arriving when the next one was made (${GAP_MS} ms later): ${sdkResult.overlapping} (floor ${floorResult.overlapping})`,
)
// The goal: p99 within 1.5× the floor's p99 of the same run, for this spread of the apps (one
// file per spread, so that the 5 × 10 and 2 × 25 runs are both kept for `--check`).
const ratioToFloor = sdkResult.all.p99_ms / floorResult.all.p99_ms
console.log(
  `target p99 ≤ 1.5× the socket floor's: ${ratioToFloor.toFixed(3)}× (${ratioToFloor <= 1.5 ? 'met' : 'MISSED'}); p99 < 2 ms: ${sdkResult.all.p99_ms < 2 ? 'met' : 'missed'}`,
)
console.log(
  `written ${writeResults(`sdk-propagation-${PROCESSES}x${APPS_PER_PROCESS}`, {
    rounds: ROUNDS,
    changes: CHANGES * ROUNDS,
    ratio_to_floor_p99: ratioToFloor,
    propagation,
  })}`,
)

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
  changes: CHANGES * ROUNDS,
  rounds: ROUNDS,
  warmup_changes: WARMUP,
  propagation,
  request_cost: requestCost,
  targets: { propagation_p99_to_floor_max: 1.5, request_ratio_min: 0.98 },
})
console.log(`written ${written}`)
await server.close()
await engine.close()
