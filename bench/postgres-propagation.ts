/**
 * PostgreSQL store: how fast a change made on one instance reaches another through
 * `LISTEN/NOTIFY`. The writing store runs in this process, the receiving one in another
 * (servers/postgres-listener.ts). For each change, the time from just before the write to the
 * moment the other process delivered it to its listeners (`process.hrtime.bigint()`, one
 * monotonic clock for every process of the machine): the transaction with its NOTIFY, the
 * notification, and the receiver's read of the changed record. Two kinds of change, one at a
 * time, each after the previous one arrived: route states, then flags (the section holds 200
 * flags; each change rewrites it, and the receiver reads back only the flag named). 50 changes
 * to warm up, then rounds of 500 (5 rounds; `--quick`: 2 rounds of 200); reports p50 / p99 per
 * round and over all, and the write's own share (until its call returned). Writes
 * bench/results/postgres-propagation.json (the flags' figures under `flags`).
 */
import { spawn } from 'node:child_process'
import { createInterface } from 'node:readline'
import { declaredState } from '../src/core/route-state.js'
import type { Flag } from '../src/flags/model.js'
import { flagStoreFor } from '../src/flags/stores/index.js'
import { postgresStore } from '../src/index.js'
import { nodeArgsFor } from './lib/compiled.js'
import { writeResults } from './lib/results.js'
import { median, percentile } from './lib/stats.js'

const quick = process.argv.includes('--quick')
const ROUNDS = quick ? 2 : 5
const CHANGES = quick ? 200 : 500
const WARMUP = 50
/** Flags in the section while flags change (each change names one). */
const FLAGS = 200
const url = process.env.CTL_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
const tablePrefix = `switchyard_benchprop_${process.pid}_`

const writer = postgresStore({ url, tablePrefix })
await writer.connect()
const child = spawn(process.execPath, nodeArgsFor('bench/servers/postgres-listener.ts'), {
  env: { ...process.env, CTL_POSTGRES_URL: url, CTL_POSTGRES_TABLE_PREFIX: tablePrefix },
  stdio: ['ignore', 'pipe', 'inherit'],
})
const waiting = new Map<string, (at: bigint) => void>()
let ready: () => void = () => undefined
const isReady = new Promise<void>((resolve) => (ready = resolve))
createInterface({ input: child.stdout }).on('line', (line) => {
  if (line === 'READY') ready()
  const [word, route, at] = line.split(' ')
  if (word === 'SEEN' && route !== undefined && at !== undefined) {
    waiting.get(route)?.(BigInt(at))
    waiting.delete(route)
  }
})
await isReady

let serial = 0
/** One route change: [total ms, ms until the write returned]. */
async function routeChange(): Promise<[number, number]> {
  const route = `GET:/p${++serial}`
  const seen = new Promise<bigint>((resolve) => waiting.set(route, resolve))
  const state = {
    ...declaredState({ route, method: 'GET', path: `/p${serial}`, service: 'bench' }, null),
    status: 'disabled' as const,
  }
  const started = process.hrtime.bigint()
  await writer.routes.put(state)
  const written = process.hrtime.bigint()
  const at = await seen
  await writer.routes.delete('bench', route)
  return [Number(at - started) / 1e6, Number(written - started) / 1e6]
}

const flags = flagStoreFor(writer)
await flags.connect()
/** A flag record as the bench writes it (the stores keep records as given). */
const flagRecord = (key: string, name: string) => ({ key, name }) as unknown as Flag
if (writer.backend.kind !== 'postgres') throw new Error('expected the postgres store')
// The flags section holds FLAGS flags: each change rewrites it and announces one of them.
await writer.backend.postgres.sections.write(
  'flags',
  Object.fromEntries(
    Array.from({ length: FLAGS }, (_, i) => [`f${i}`, flagRecord(`f${i}`, 'initial')]),
  ),
)

/** One flag change: [total ms, ms until the write returned]. */
async function flagChange(): Promise<[number, number]> {
  const name = `n${++serial}`
  const key = `f${serial % FLAGS}`
  const seen = new Promise<bigint>((resolve) => waiting.set(`flag:${key}:${name}`, resolve))
  const started = process.hrtime.bigint()
  await flags.putFlag(flagRecord(key, name))
  const written = process.hrtime.bigint()
  const at = await seen
  return [Number(at - started) / 1e6, Number(written - started) / 1e6]
}

/** Warms up, then runs the rounds of `change`, printing each. */
async function measure(what: string, change: () => Promise<[number, number]>) {
  for (let i = 0; i < WARMUP; i++) await change()
  const all: number[] = []
  const writes: number[] = []
  const rounds: { p50: number; p99: number }[] = []
  for (let round = 0; round < ROUNDS; round++) {
    const latencies: number[] = []
    for (let i = 0; i < CHANGES; i++) {
      const [total, write] = await change()
      latencies.push(total)
      writes.push(write)
    }
    all.push(...latencies)
    rounds.push({ p50: percentile(latencies, 0.5), p99: percentile(latencies, 0.99) })
    console.log(
      `${what} round ${round + 1}: p50 ${percentile(latencies, 0.5).toFixed(2)} ms, p99 ${percentile(latencies, 0.99).toFixed(2)} ms`,
    )
  }
  const figures = {
    changes: all.length,
    p50_ms: percentile(all, 0.5),
    p99_ms: percentile(all, 0.99),
    median_round_p99_ms: median(rounds.map((r) => r.p99)),
    write_p50_ms: percentile(writes, 0.5),
    rounds,
  }
  console.log(
    `\nPostgreSQL NOTIFY propagation of ${what} over ${all.length} changes: p50 ${figures.p50_ms.toFixed(2)} ms, p99 ${figures.p99_ms.toFixed(2)} ms (the write itself: p50 ${figures.write_p50_ms.toFixed(2)} ms)\n`,
  )
  return figures
}

try {
  const routes = await measure('route changes', routeChange)
  const flagFigures = await measure(`flag changes (${FLAGS} flags in the section)`, flagChange)
  console.log(
    `written to ${writeResults('postgres-propagation', { ...routes, flags: { flags_in_section: FLAGS, ...flagFigures } })}`,
  )
} finally {
  child.kill('SIGTERM')
  await flags.close()
  await writer.close()
  // The bench's tables go with it.
  const cleanup = postgresStore({ url, tablePrefix })
  if (cleanup.backend.kind === 'postgres') {
    await cleanup.connect()
    const { rows } = await cleanup.backend.postgres.query<{ name: string }>(
      `SELECT tablename AS name FROM pg_tables WHERE tablename LIKE $1`,
      [`${tablePrefix.replace(/_/g, '\\_')}%`],
    )
    for (const { name } of rows) await cleanup.backend.postgres.query(`DROP TABLE "${name}"`)
    await cleanup.backend.postgres.query(`DROP FUNCTION IF EXISTS ${tablePrefix}rl_consume`)
    await cleanup.close()
  }
}
