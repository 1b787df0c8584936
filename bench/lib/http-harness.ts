/**
 * A side-by-side HTTP benchmark harness (the method of bench/README.md): every case runs in its
 * own server process pinned to core 0, autocannon runs here pinned to core 1; cases are
 * interleaved round by round with their order rotated; the table reports medians, min–max, the
 * per-round ratio to the baseline of the same round, and server CPU µs per request from
 * /proc/<pid>/stat (and that of a side process such as Redis, when named: on a machine of
 * two cores its CPU time competes with the server's and the load generator's).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { cpus } from 'node:os'
import autocannon from 'autocannon'
import { nodeArgsFor } from './compiled.js'
import { median } from './stats.js'

/** One server variant to measure. */
export interface HttpCase {
  name: string
  /** Script (relative to the repository root) that listens and prints `READY <port>`. */
  script: string
  env?: Record<string, string>
  /** Path requested by the load generator. */
  path?: string
  /** Method, headers and body of every request (default a bodiless GET). */
  request?: { method?: string; headers?: Record<string, string>; body?: string }
  /**
   * Server processes to start (default 1). Extra instances share the backend (e.g. Redis) and
   * receive no load: they are there so the measured one runs as part of a cluster.
   */
  instances?: number
}

/** Harness settings (seconds). */
export interface HarnessOptions {
  rounds: number
  duration: number
  warmup: number
  connections: number
  /** Name of the baseline case for ratios. */
  baseline: string
  /** A process whose CPU µs per request is reported too (for example the Redis server). */
  sideProcess?: { label: string; pid: number }
}

interface Server {
  child: ChildProcess
  port: number
}

interface Sample {
  rps: number
  cpuUsPerRequest: number
  /** The side process's CPU µs per request (NaN without one). */
  sideUsPerRequest: number
  errors: number
  non2xx: number
}

const canPin = spawnSync('taskset', ['--version']).status === 0 && cpus().length >= 2

async function startServer(testCase: HttpCase): Promise<Server> {
  const command = canPin ? 'taskset' : process.execPath
  const args = nodeArgsFor(testCase.script)
  const child = spawn(command, canPin ? ['-c', '0', process.execPath, ...args] : args, {
    env: { ...process.env, ...testCase.env, PORT: '0', NODE_ENV: 'production' },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${testCase.name} did not start`)), 30_000)
    let text = ''
    child.stdout.on('data', (chunk: Buffer) => {
      text += chunk.toString()
      const match = /READY (\d+)/.exec(text)
      if (match) {
        clearTimeout(timer)
        resolve(Number(match[1]))
      }
    })
    child.on('exit', (code) => reject(new Error(`${testCase.name} exited with ${code}`)))
  })
  return { child, port }
}

/** utime + stime of a process in clock ticks (100 Hz on Linux). */
function cpuTicks(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return Number(fields[11]) + Number(fields[12])
}

/** The pid of the node process (taskset execs into it, so it is the child itself). */
function serverPid(server: Server): number {
  return server.child.pid ?? 0
}

async function load(port: number, testCase: HttpCase, seconds: number, connections: number) {
  return autocannon({
    url: `http://127.0.0.1:${port}${testCase.path ?? '/r25'}`,
    connections,
    duration: seconds,
    pipelining: 1,
    ...testCase.request,
  })
}

async function measure(
  server: Server,
  testCase: HttpCase,
  options: HarnessOptions,
): Promise<Sample> {
  const pid = serverPid(server)
  const side = options.sideProcess?.pid
  const before = cpuTicks(pid)
  const sideBefore = side === undefined ? 0 : cpuTicks(side)
  const result = await load(server.port, testCase, options.duration, options.connections)
  const ticks = cpuTicks(pid) - before
  const sideTicks = side === undefined ? Number.NaN : cpuTicks(side) - sideBefore
  const requests = result.requests.total
  const perRequest = (count: number) => (requests > 0 ? (count * 10_000) / requests : Number.NaN)
  return {
    rps: result.requests.average,
    cpuUsPerRequest: perRequest(ticks),
    sideUsPerRequest: perRequest(sideTicks),
    errors: result.errors,
    non2xx: result.non2xx,
  }
}

/** Runs every case for every round and prints/writes the results. */
export async function runHttpBenchmark(
  name: string,
  cases: HttpCase[],
  options: HarnessOptions,
): Promise<void> {
  if (canPin) spawnSync('taskset', ['-cp', '1', String(process.pid)])
  console.log(
    `\n# ${name}: ${cases.length} cases, ${options.rounds} rounds × ${options.duration}s, ${options.connections} connections${canPin ? ', server on core 0, load on core 1' : ''}`,
  )
  const servers = new Map<string, Server>()
  const companions: Server[] = []
  try {
    for (const testCase of cases) {
      const server = await startServer(testCase)
      servers.set(testCase.name, server)
      for (let i = 1; i < (testCase.instances ?? 1); i++)
        companions.push(await startServer(testCase))
      await load(server.port, testCase, options.warmup, options.connections)
    }
    const samples = new Map<string, Sample[]>(cases.map((c) => [c.name, []]))
    const ratios = new Map<string, number[]>(cases.map((c) => [c.name, []]))
    for (let round = 0; round < options.rounds; round++) {
      const order = cases.map((_, i) => cases[(i + round) % cases.length] as HttpCase)
      const roundRps = new Map<string, number>()
      for (const testCase of order) {
        const sample = await measure(servers.get(testCase.name) as Server, testCase, options)
        samples.get(testCase.name)?.push(sample)
        roundRps.set(testCase.name, sample.rps)
      }
      const base = roundRps.get(options.baseline) ?? Number.NaN
      for (const testCase of cases)
        ratios.get(testCase.name)?.push((roundRps.get(testCase.name) ?? 0) / base)
      console.log(
        `  round ${round + 1}: ${order.map((c) => `${c.name} ${Math.round(roundRps.get(c.name) ?? 0)}`).join(' | ')}`,
      )
    }
    const rows = cases.map((testCase) => {
      const list = samples.get(testCase.name) ?? []
      const rps = list.map((s) => s.rps)
      return {
        case: testCase.name,
        median_rps: Math.round(median(rps)),
        min_rps: Math.round(Math.min(...rps)),
        max_rps: Math.round(Math.max(...rps)),
        median_ratio: Number(median(ratios.get(testCase.name) ?? []).toFixed(3)),
        cpu_us_per_request: Number(median(list.map((s) => s.cpuUsPerRequest)).toFixed(1)),
        ...(options.sideProcess === undefined
          ? {}
          : {
              side_cpu_us_per_request: Number(
                median(list.map((s) => s.sideUsPerRequest)).toFixed(1),
              ),
            }),
        errors: list.reduce((sum, s) => sum + s.errors + s.non2xx, 0),
      }
    })
    console.log('')
    const sideLabel = options.sideProcess?.label
    console.log(
      '| case | median req/s | min–max | ratio to ' +
        options.baseline +
        ' (median of rounds) | server CPU µs/req |' +
        (sideLabel === undefined ? '' : ` ${sideLabel} CPU µs/req |`) +
        ' errors+non2xx |',
    )
    console.log(`|---|---|---|---|---|${sideLabel === undefined ? '' : '---|'}---|`)
    for (const row of rows) {
      const sideCell =
        row.side_cpu_us_per_request === undefined ? '' : ` ${row.side_cpu_us_per_request} |`
      console.log(
        `| ${row.case} | ${row.median_rps} | ${row.min_rps}–${row.max_rps} | ${row.median_ratio.toFixed(3)} | ${row.cpu_us_per_request} |${sideCell} ${row.errors} |`,
      )
    }
    mkdirSync('bench/results', { recursive: true })
    writeFileSync(
      `bench/results/${name}.json`,
      JSON.stringify({ name, options, date: new Date().toISOString(), rows }, null, 2),
    )
    console.log(`\nwritten bench/results/${name}.json`)
  } finally {
    for (const server of [...servers.values(), ...companions]) server.child.kill('SIGTERM')
  }
}
