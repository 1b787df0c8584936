/**
 * Where Redis's time per task goes, the Redis task store next to BullMQ: on a Redis of its own
 * (give a private server, `INFO commandstats` is server-wide), each case runs `count` tasks and
 * prints the server's CPU per task (`INFO cpu`), this process's CPU per task over the same
 * measured part, and, per command, calls and µs per task (from `INFO commandstats`; commands a
 * script calls are counted both on their own line and inside the script's `evalsha` time, so the
 * script's own Lua work is `evalsha` minus the rest).
 *
 *   redis-server --port 6391 --save '' --appendonly no --daemonize yes
 *   npx tsc -p tsconfig.bench.json && node scripts/copy-assets.mjs bench/.out/src
 *   node bench/.out/bench/lib/redis-task-costs.js redis://127.0.0.1:6391 [count] [cases]
 *
 * Cases (comma-separated, default all): `enqueue` (the store's `pending.enqueue`, batches of
 * 500), `bull-enqueue` (BullMQ `addBulk` of 500), `e2e` (the manager, persistent no-op tasks,
 * until shutdown has flushed every record), `bull-e2e` (`addBulk` + a worker at concurrency 50).
 * `e2e-grouped` (only when named) is `e2e` on a queue with `groupConcurrency: 1` and 100
 * groups, as tasks-groups.ts runs it.
 * More, only when named: `raw-layout` writes the store's keys for the same pending records
 * with plain pipelined commands (redis-raw-layout.ts), and `raw-lean` the same without the
 * creation-time, function and queue indexes, which a lean queue would leave out;
 * `save-finished` is the store's `records.save` of finished records shaped as the manager's end
 * to end writes them (with no manager around it), batches of 500, and `ship-finished` sends the
 * same calls' arguments to a script that does nothing (the client's cost of shipping them).
 */
import { execFileSync } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { Redis } from 'ioredis'
import type { StoredTask } from '../../src/tasks/record.js'
import { redisStore } from '../../src/tasks/stores/index.js'
import type { RedisOps } from '../../src/tasks/stores/redis/ops.js'
import { writeTasks } from '../../src/tasks/stores/redis/records.js'
import { deleteRedisKeys } from '../../support/servers.js'
import { startBullmq } from './bullmq-peer.js'
import { managerEndToEnd, redisFactory } from './durable-e2e.js'
import { writeRawLayout } from './redis-raw-layout.js'
import { benchTask } from './task-history.js'

const url = process.argv[2] ?? 'redis://127.0.0.1:6391'
const count = Number(process.argv[3] ?? 20_000)
const wanted = (process.argv[4] ?? 'enqueue,bull-enqueue,e2e,bull-e2e').split(',')
const BATCH = 500

interface Snapshot {
  cpu: number
  commands: Map<string, { calls: number; usec: number }>
}

/**
 * Under bench/lib/count-redis-task-instructions.sh (`CALLGRIND_PID` set), zeroes the server's
 * callgrind counters before a measured part and dumps them after it, so that warm-up and
 * cleanup are not counted.
 */
function callgrind(action: '-z' | '-d'): void {
  const pid = process.env.CALLGRIND_PID
  if (pid !== undefined) execFileSync('callgrind_control', [action, pid], { stdio: 'ignore' })
}

/** This process's CPU time (µs) over the last measured part, between the two marks. */
let clientCpu = 0
let clientCpuAtStart = process.cpuUsage()
/** Around each measured part: callgrind's counters, and this process's CPU time. */
const marks = {
  start: () => {
    callgrind('-z')
    clientCpuAtStart = process.cpuUsage()
  },
  stop: () => {
    const used = process.cpuUsage(clientCpuAtStart)
    clientCpu = used.user + used.system
    callgrind('-d')
  },
}

async function snapshot(client: Redis): Promise<Snapshot> {
  const cpuInfo = await client.info('cpu')
  const seconds = (field: string) =>
    Number(new RegExp(`${field}:([\\d.]+)`).exec(cpuInfo)?.[1] ?? 0)
  const commands = new Map<string, { calls: number; usec: number }>()
  for (const line of (await client.info('commandstats')).split('\n')) {
    const match = /^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/.exec(line)
    if (match !== null) commands.set(match[1]!, { calls: Number(match[2]), usec: Number(match[3]) })
  }
  return { cpu: (seconds('used_cpu_user') + seconds('used_cpu_sys')) * 1e6, commands }
}

function report(name: string, before: Snapshot, after: Snapshot, ms: number): void {
  console.log(
    `\n${name}: ${Math.round(count / (ms / 1000))} tasks/s, Redis CPU ${((after.cpu - before.cpu) / count).toFixed(2)} µs/task, this process's CPU ${(clientCpu / count).toFixed(2)} µs/task`,
  )
  const rows: [string, number, number][] = []
  for (const [command, now] of after.commands) {
    const then = before.commands.get(command) ?? { calls: 0, usec: 0 }
    const calls = now.calls - then.calls
    if (calls === 0 || command === 'info') continue
    rows.push([command, calls / count, (now.usec - then.usec) / count])
  }
  rows.sort((a, b) => b[2] - a[2])
  for (const [command, calls, usec] of rows)
    console.log(
      `  ${command.padEnd(20)} ${calls.toFixed(3).padStart(8)} calls ${usec.toFixed(2).padStart(7)} µs`,
    )
}

/**
 * A finished record shaped as the manager's end to end writes one: one no-op function on the
 * default queue, no tags, no log lines, a duration of microseconds.
 */
function finishedNoop(i: number): StoredTask {
  const task = benchTask(i, 'success')
  Object.assign(task.record, {
    func_name: 'noop',
    queue: 'default',
    tags: {},
    logs: [],
    duration: 0.00005,
  })
  return task
}

const client = new Redis(url)
const tasks = () => Array.from({ length: count }, (_, i) => benchTask(i))

/** Writes `all` in batches of `BATCH` with `write`, counting only that, and reports it. */
async function measureBatches(
  name: string,
  all: StoredTask[],
  write: (batch: StoredTask[]) => Promise<unknown>,
): Promise<void> {
  const before = await snapshot(client)
  marks.start()
  const started = performance.now()
  for (let i = 0; i < all.length; i += BATCH) await write(all.slice(i, i + BATCH))
  const ms = performance.now() - started
  marks.stop()
  report(name, before, await snapshot(client), ms)
}
try {
  if (wanted.includes('enqueue')) {
    const prefix = `sy-costs:${randomUUID().slice(0, 8)}:`
    const store = redisStore({ url }, { prefix })
    const lease = () => ({ owner: 'bench', leaseUntil: Date.now() + 60_000 })
    await store.pending.enqueue(
      Array.from({ length: BATCH }, (_, i) => benchTask(i)),
      lease(),
    )
    await measureBatches('store enqueue', tasks(), (batch) => store.pending.enqueue(batch, lease()))
    await store.close()
    await deleteRedisKeys(url, prefix)
  }
  for (const lean of [false, true]) {
    const name = lean ? 'raw-lean' : 'raw-layout'
    if (!wanted.includes(name)) continue
    const prefix = `sy-costs:${randomUUID().slice(0, 8)}:`
    const write = (batch: readonly StoredTask[]) =>
      writeRawLayout(client, prefix, batch, 'bench', Date.now() + 60_000, lean)
    await write(Array.from({ length: BATCH }, (_, i) => benchTask(i)))
    await measureBatches(
      lean
        ? 'the layout without the lean queue’s three indexes'
        : 'the store’s layout, plain commands',
      tasks(),
      write,
    )
    await deleteRedisKeys(url, prefix)
  }
  for (const ship of [false, true]) {
    const name = ship ? 'ship-finished' : 'save-finished'
    if (!wanted.includes(name)) continue
    const prefix = `sy-costs:${randomUUID().slice(0, 8)}:`
    let save: (batch: StoredTask[]) => Promise<unknown>
    let close = () => Promise.resolve()
    if (ship) {
      const sha = (await client.script('LOAD', 'return 0')) as string
      const ops: RedisOps = {
        prefix,
        key: (...parts) => prefix + parts.join(''),
        run: (_name, keys, args) => client.evalsha(sha, keys.length, ...keys, ...args),
        call: (command, ...args) => client.call(command, ...args),
        isOpen: () => true,
        ordered: true,
      }
      save = (batch) => writeTasks(ops, 'bench', batch, '', '')
    } else {
      const store = redisStore({ url }, { prefix })
      save = (batch) => store.records.save(batch)
      close = () => store.close()
    }
    await save(Array.from({ length: BATCH }, (_, i) => finishedNoop(count + i)))
    await measureBatches(
      ship ? 'finished records, shipped to a no-op script' : 'store records.save, finished records',
      Array.from({ length: count }, (_, i) => finishedNoop(i)),
      save,
    )
    await close()
    await deleteRedisKeys(url, prefix)
  }
  if (wanted.includes('bull-enqueue') || wanted.includes('bull-e2e')) {
    const bull = startBullmq(url)
    if (wanted.includes('bull-enqueue')) {
      await bull.enqueue(
        Array.from({ length: BATCH }, (_, i) => benchTask(i)),
        BATCH,
      )
      const all = tasks()
      const before = await snapshot(client)
      marks.start()
      const started = performance.now()
      await bull.enqueue(all, BATCH)
      marks.stop()
      report('BullMQ addBulk', before, await snapshot(client), performance.now() - started)
    }
    if (wanted.includes('bull-e2e')) {
      await bull.endToEnd(
        Array.from({ length: 1000 }, (_, i) => benchTask(i)),
        BATCH,
      )
      const before = await snapshot(client)
      const ms = await bull.endToEnd(tasks(), BATCH, marks)
      report('BullMQ addBulk + Worker', before, await snapshot(client), ms)
    }
    await bull.close()
  }
  for (const groups of [0, 100]) {
    if (!wanted.includes(groups === 0 ? 'e2e' : 'e2e-grouped')) continue
    await managerEndToEnd(redisFactory(url), 1000, undefined, groups)
    // The keys are removed after the snapshot, not inside it (the check of the stored records,
    // one list call, is inside).
    const factory = redisFactory(url)
    const before = await snapshot(client)
    const ms = await managerEndToEnd(
      { ...factory, cleanup: () => Promise.resolve() },
      count,
      marks,
      groups,
    )
    const name = groups === 0 ? 'store end to end (manager)' : `the same, ${groups} groups of 1`
    report(name, before, await snapshot(client), ms)
    await factory.cleanup()
  }
} finally {
  await client.quit()
}
