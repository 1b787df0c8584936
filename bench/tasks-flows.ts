/**
 * Flows on the durable stores against BullMQ's FlowProducer: one parent and 1,000 children
 * (`--quick`: the same tree, fewer rounds), all in one queue at concurrency 50, the children
 * no-ops returning their index.
 *
 * 1. Release: the time from the end of the last child (a `performance.now()` taken inside the
 *    child's function, just before it returns) to the start of the parent (the first statement
 *    of its function), through a TaskManager on a fresh SQLite file and on Redis under a fresh
 *    key prefix. It covers the write-behind of the last child's success, the counter change
 *    that releases the parent, the claim and the read of the 1,000 child results the parent
 *    starts with. Goal < 100 ms, median and worst round.
 * 2. Enqueue: `manager.flow(tree)` until it resolves (the whole tree stored in one store call,
 *    on a paused queue, resumed once it resolved, so that no child runs inside the timed part)
 *    against the same 1,001 tasks enqueued independently in one batch, at two levels, on the
 *    same store kind: through the manager (1,001 `addTask` calls of a persistent task in one
 *    tick on a paused queue, each resolving once its pending record is stored, which the
 *    write-behind does in one store call; what a caller does without flows), and by the
 *    store alone (`store.pending.enqueue` of 1,001 records built beforehand, the write that
 *    batch makes). Also the tree through `store.flows.save` with the records built beforehand
 *    (the flow write with nothing of the manager around it, against the store's batch). Goal:
 *    flow ≥ 0.8× the batch.
 * 3. BullMQ on the same Redis: `FlowProducer.add` of the same tree, and last-child-end →
 *    parent-start with a Worker at concurrency 50 (and → the children's values in hand,
 *    `getChildrenValues()`, which a switchyard parent has when it starts). Ratios: switchyard
 *    Redis enqueue speed over BullMQ's, and switchyard's release latency over BullMQ's.
 *
 * Method (bench/README.md): every round runs every case on a fresh store, file or prefix, in an
 * order rotated each round; each flow case first runs a 1 + 1 flow to warm its statements and
 * scripts, each batch case one record. 2 untimed rounds of every case (`--quick`: 1), so that
 * the JIT has optimised both sides' code, then 11 timed rounds (`--quick`: 3); medians,
 * min–max, and the median of the per-round ratios. Redis cases are skipped when Redis is unreachable.
 *
 * Usage: `npm run bench -- tasks-flows [--quick]`; writes bench/results/tasks-flows.json.
 */
import { randomUUID } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { FlowProducer, Worker, type FlowJob } from 'bullmq'
import { Redis } from 'ioredis'
import { TaskManager } from '../src/tasks/index.js'
import type { StoredTask } from '../src/tasks/record.js'
import { redisStore, sqliteStore, type DurableTaskStore } from '../src/tasks/stores/index.js'
import { newTaskId } from '../src/tasks/task-id.js'
import { deleteRedisKeys, serverReachable } from '../support/servers.js'
import { writeResults } from './lib/results.js'
import { median } from './lib/stats.js'

const quick = process.argv.includes('--quick')
const ROUNDS = quick ? 3 : 11
/**
 * Untimed rounds of every case first: a round writes one big tree per case, so without them the
 * first rounds would time each side's code before the JIT optimised it for a thousand nodes.
 */
const WARM_UP_ROUNDS = quick ? 1 : 2
const CHILDREN = 1_000
const CONCURRENCY = 50
const REDIS_URL = process.env.SY_BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379'
/** A flow that has not released its parent after this long failed the round. */
const FLOW_DEADLINE_MS = 120_000
const quietLogger = {
  warn: () => undefined,
  error: (fields: object | string, message?: string) => console.error(message ?? fields, fields),
}

const dir = mkdtempSync(join(tmpdir(), 'sy-bench-flows-'))

/** What one flow case measured. */
interface FlowRun {
  /** ms from the call until the tree was stored. */
  enqueueMs: number
  /** ms from the end of the last child to the start of the parent. */
  releaseMs: number
  /** BullMQ: ms from the end of the last child until the parent holds the children's values. */
  resultsMs?: number
}

/** A store kind: a fresh store for each case, and how to remove what it wrote. */
interface StoreKind {
  name: 'sqlite' | 'redis'
  open(): { store: DurableTaskStore; cleanup: () => Promise<void> }
}

const sqliteKind: StoreKind = {
  name: 'sqlite',
  open() {
    const path = join(dir, `${randomUUID().slice(0, 8)}.db`)
    return {
      store: sqliteStore(path),
      cleanup: () => {
        for (const suffix of ['', '-wal', '-shm']) rmSync(`${path}${suffix}`, { force: true })
        return Promise.resolve()
      },
    }
  },
}

const redisKind: StoreKind = {
  name: 'redis',
  open() {
    const prefix = `sy-bench-flows:${randomUUID().slice(0, 8)}:`
    return {
      store: redisStore({ url: REDIS_URL }, { prefix }),
      cleanup: () => deleteRedisKeys(REDIS_URL, prefix),
    }
  },
}

/** Resolves when `condition` holds (checked every millisecond), rejects after `what` timed out. */
async function waitFor(condition: () => boolean, what: string): Promise<void> {
  const deadline = performance.now() + FLOW_DEADLINE_MS
  while (!condition()) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 1))
  }
}

/** The tree `manager.flow` and `FlowProducer.add` get: a parent and `children` leaves. */
function flowTree<P, C>(parent: P, child: C, children: number) {
  return {
    task: parent,
    args: [] as unknown[],
    children: Array.from({ length: children }, (_, i) => ({ task: child, args: [i] })),
  }
}

/**
 * A TaskManager on a fresh store of `kind`, its one queue at the bench's concurrency; `close`
 * shuts it down and removes what the store wrote.
 */
function freshManager(kind: StoreKind): { manager: TaskManager; close: () => Promise<void> } {
  const { store, cleanup } = kind.open()
  const manager = new TaskManager({
    store,
    queues: { work: { concurrency: CONCURRENCY } },
    logger: quietLogger,
  })
  return {
    manager,
    close: async () => {
      await manager.shutdown()
      await cleanup()
    },
  }
}

/** The flow through a TaskManager on a fresh store of `kind`. */
async function switchyardFlow(kind: StoreKind): Promise<FlowRun> {
  const { manager, close } = freshManager(kind)
  let lastChildEnd = 0
  let parentStart = 0
  let parents = 0
  const child = manager.task({ name: 'child', queue: 'work' }, (i: number) => {
    const end = performance.now()
    if (end > lastChildEnd) lastChildEnd = end
    return Promise.resolve(i)
  })
  const parent = manager.task({ name: 'parent', queue: 'work' }, () => {
    parentStart = performance.now()
    parents++
    return Promise.resolve()
  })
  await manager.startup()
  try {
    await manager.flow(flowTree(parent, child, 1))
    await waitFor(() => parents === 1, `the warm-up flow on ${kind.name}`)
    lastChildEnd = 0
    // Paused while timed, as the batch case is: what is timed is the enqueue, not the first
    // children running (and writing their records) before `flow()` has resolved.
    await manager.pauseQueue('work')
    const started = performance.now()
    await manager.flow(flowTree(parent, child, CHILDREN))
    const enqueueMs = performance.now() - started
    await manager.resumeQueue('work')
    await waitFor(() => parents === 2, `the parent of ${String(CHILDREN)} children on ${kind.name}`)
    return { enqueueMs, releaseMs: parentStart - lastChildEnd }
  } finally {
    await close()
  }
}

/**
 * ms for 1,001 independent `addTask` calls made in one tick on a fresh manager and store of
 * `kind`, until every one resolved: the manager's own batch (the write-behind stores a tick's
 * tasks in one store call), what a caller without flows does with the same tasks.
 */
async function switchyardBatch(kind: StoreKind): Promise<number> {
  const { manager, close } = freshManager(kind)
  let ran = 0
  // Persistent: `addTask` resolves once the pending record is stored, as `flow()` does.
  const child = manager.task({ name: 'child', queue: 'work', persist: true }, (i: number) => {
    ran++
    return Promise.resolve(i)
  })
  await manager.startup()
  try {
    await manager.addTask(child, [-1])
    await waitFor(() => ran === 1, `the warm-up task on ${kind.name}`)
    // Paused while timed: a no-op task that ends before the batch goes out has only its
    // terminal record written (no pending write first), which is not an enqueue.
    await manager.pauseQueue('work')
    const started = performance.now()
    await Promise.all(Array.from({ length: 1 + CHILDREN }, (_, i) => manager.addTask(child, [i])))
    const enqueueMs = performance.now() - started
    await manager.resumeQueue('work')
    await waitFor(() => ran === 2 + CHILDREN, `${String(1 + CHILDREN)} tasks on ${kind.name}`)
    return enqueueMs
  } finally {
    await close()
  }
}

/** A pending record as `addTask` writes it for the bench's child task. */
function pendingTask(i: number, created: string): StoredTask {
  return {
    record: {
      task_id: newTaskId(),
      func_name: i === 0 ? 'parent' : 'child',
      status: 'pending',
      created_at: created,
      start_time: null,
      end_time: null,
      duration: 0,
      retries_used: 0,
      error: null,
      logs: [],
      stacktrace: null,
      tags: {},
      source: 'manual',
      priority: null,
      executor: 'async',
      queue: 'work',
      progress: null,
      progress_message: null,
      expires_at: null,
      retry_of: null,
      retried_as: null,
      parent_id: null,
    },
    args: i === 0 ? [] : [i - 1],
    encrypted_args: null,
    idempotency_key: null,
  }
}

/** `count` pending records created now. */
function pendingTasks(count: number): StoredTask[] {
  const created = new Date().toISOString().replace('Z', '+00:00')
  return Array.from({ length: count }, (_, i) => pendingTask(i, created))
}

/** The same records as one flow: the first is the root and parent of all the others. */
function asFlow(tasks: StoredTask[]): StoredTask[] {
  const root = (tasks[0] as StoredTask).record.task_id
  return tasks.map((task, i) => {
    task.flow_id = root
    if (i === 0) task.flow_children = tasks.length - 1
    else task.record.parent_id = root
    return task
  })
}

/**
 * ms to write 1 + `CHILDREN` records on a fresh store of `kind` in one store call: one
 * independent batch (`flow` false) or the tree through the store's flows.
 */
async function storeWrite(kind: StoreKind, flow: boolean): Promise<number> {
  const { store, cleanup } = kind.open()
  const lease = () => ({ owner: 'bench', leaseUntil: Date.now() + 60_000 })
  try {
    const flows = store.flows
    if (flows === undefined) throw new Error(`the ${kind.name} store has no flows`)
    // Warm-up: the store's connection, schema and statements or scripts.
    if (flow) await flows.save(asFlow(pendingTasks(2)), { claim: lease() })
    else await store.pending.enqueue(pendingTasks(1), lease())
    const tasks = pendingTasks(1 + CHILDREN)
    const nodes = flow ? asFlow(tasks) : tasks
    const root = (tasks[0] as StoredTask).record.task_id
    const started = performance.now()
    if (flow) {
      await flows.save(nodes, { claim: lease(), holds: [{ task_id: root, children: CHILDREN }] })
    } else await store.pending.enqueue(nodes, lease())
    return performance.now() - started
  } finally {
    await store.close()
    await cleanup()
  }
}

/** Writes per kind of the steady-state case, after as many untimed ones. */
const STEADY_WRITES = quick ? 8 : 20

/**
 * The store-level writes again, steady state: one store of `kind`, trees and independent
 * batches of the same size written alternately to it, `STEADY_WRITES` of each after as many
 * untimed; ms of each, in order.
 */
async function steadyStoreWrites(kind: StoreKind): Promise<{ flow: number[]; batch: number[] }> {
  const { store, cleanup } = kind.open()
  const lease = () => ({ owner: 'bench', leaseUntil: Date.now() + 60_000 })
  const timed = { flow: [] as number[], batch: [] as number[] }
  try {
    const flows = store.flows
    if (flows === undefined) throw new Error(`the ${kind.name} store has no flows`)
    for (let i = 0; i < 2 * STEADY_WRITES; i++) {
      for (const flow of [true, false]) {
        const tasks = pendingTasks(1 + CHILDREN)
        const root = (tasks[0] as StoredTask).record.task_id
        const started = performance.now()
        if (flow) {
          await flows.save(asFlow(tasks), {
            claim: lease(),
            holds: [{ task_id: root, children: CHILDREN }],
          })
        } else await store.pending.enqueue(tasks, lease())
        if (i >= STEADY_WRITES) (flow ? timed.flow : timed.batch).push(performance.now() - started)
      }
    }
    return timed
  } finally {
    await store.close()
    await cleanup()
  }
}

/** The flow through BullMQ's FlowProducer and a Worker at concurrency 50, fresh prefix. */
async function bullmqFlow(): Promise<FlowRun> {
  // BullMQ's workers block on their connection: it wants maxRetriesPerRequest null.
  const connection = new Redis(REDIS_URL, { maxRetriesPerRequest: null })
  const prefix = `sy-bench-flows-bull-${randomUUID().slice(0, 8)}`
  const queueName = 'work'
  const producer = new FlowProducer({ connection, prefix })
  let lastChildEnd = 0
  let parentStart = 0
  let resultsAt = 0
  let parents = 0
  const worker = new Worker(
    queueName,
    async (job) => {
      if (job.name !== 'parent') {
        const end = performance.now()
        if (end > lastChildEnd) lastChildEnd = end
        return job.data as number
      }
      parentStart = performance.now()
      await job.getChildrenValues()
      resultsAt = performance.now()
      parents++
      return undefined
    },
    { connection, prefix, concurrency: CONCURRENCY },
  )
  const tree = (children: number): FlowJob => ({
    name: 'parent',
    queueName,
    children: Array.from({ length: children }, (_, i) => ({ name: 'child', queueName, data: i })),
  })
  try {
    await worker.waitUntilReady()
    await producer.add(tree(1))
    await waitFor(() => parents === 1, 'the warm-up flow on BullMQ')
    lastChildEnd = 0
    const started = performance.now()
    await producer.add(tree(CHILDREN))
    const enqueueMs = performance.now() - started
    await waitFor(() => parents === 2, `the parent of ${String(CHILDREN)} children on BullMQ`)
    return {
      enqueueMs,
      releaseMs: parentStart - lastChildEnd,
      resultsMs: resultsAt - lastChildEnd,
    }
  } finally {
    await worker.close()
    await producer.close()
    await deleteRedisKeys(REDIS_URL, `${prefix}:`)
    connection.disconnect()
  }
}

/** Median, min and max of `values`. */
const spread = (values: readonly number[]) => ({
  median: median(values),
  min: Math.min(...values),
  max: Math.max(...values),
})

const redisUp = await serverReachable(REDIS_URL)
if (!redisUp) console.warn(`No Redis at ${REDIS_URL}: the Redis and BullMQ cases are skipped.`)
const kinds = redisUp ? [sqliteKind, redisKind] : [sqliteKind]

/** Every case of a round, by name; each returns its figures. */
const cases = new Map<string, () => Promise<FlowRun | number>>()
for (const kind of kinds) {
  cases.set(`${kind.name} flow`, () => switchyardFlow(kind))
  cases.set(`${kind.name} manager batch`, () => switchyardBatch(kind))
  cases.set(`${kind.name} store flow`, () => storeWrite(kind, true))
  cases.set(`${kind.name} store batch`, () => storeWrite(kind, false))
}
if (redisUp) cases.set('bullmq flow', bullmqFlow)

const measured = new Map<string, (FlowRun | number)[]>([...cases.keys()].map((name) => [name, []]))
const names = [...cases.keys()]
const steady = new Map<string, { flow: number[]; batch: number[] }>()
try {
  for (let round = -WARM_UP_ROUNDS; round < ROUNDS; round++) {
    const order = names.map((_, i) => names[(i + round + WARM_UP_ROUNDS) % names.length] as string)
    for (const name of order) {
      const result = await (cases.get(name) as () => Promise<FlowRun | number>)()
      if (round >= 0) measured.get(name)?.push(result)
    }
  }
  for (const kind of kinds) steady.set(kind.name, await steadyStoreWrites(kind))
} finally {
  rmSync(dir, { recursive: true, force: true })
}

const flowRuns = (name: string) => (measured.get(name) ?? []) as FlowRun[]
const writeMs = (name: string) => (measured.get(name) ?? []) as number[]
/** Per-round ratios `a[i] / b[i]`. */
const perRound = (a: readonly number[], b: readonly number[]) =>
  a.map((value, i) => value / (b[i] as number))

const figures: Record<string, unknown> = {
  children: CHILDREN,
  concurrency: CONCURRENCY,
  rounds: ROUNDS,
  load_average: loadavg(),
}
const r1 = (n: number) => n.toFixed(1)
const rate = (ms: number) => Math.round(((1 + CHILDREN) / ms) * 1000).toLocaleString('en')
console.log(
  `\nFlows of 1 parent + ${CHILDREN.toLocaleString('en')} children, concurrency ${String(CONCURRENCY)}, ${String(ROUNDS)} rounds; load average ${loadavg()
    .map((n) => n.toFixed(2))
    .join(' ')}`,
)
console.log(
  '| case | last child end → parent start (ms), median (min–max) | enqueue (ms), median | tasks/s |',
)
console.log('|---|---|---|---|')
for (const kind of kinds) {
  const runs = flowRuns(`${kind.name} flow`)
  const release = runs.map((run) => run.releaseMs)
  const flowMs = runs.map((run) => run.enqueueMs)
  const storeFlowMs = writeMs(`${kind.name} store flow`)
  const batchMs = writeMs(`${kind.name} store batch`)
  const managerBatchMs = writeMs(`${kind.name} manager batch`)
  figures[kind.name] = {
    release_ms: spread(release),
    flow_enqueue_ms: spread(flowMs),
    store_flow_ms: spread(storeFlowMs),
    store_batch_ms: spread(batchMs),
    manager_batch_ms: spread(managerBatchMs),
    // Rates: the batch's time over the flow's is the flow's rate over the batch's.
    ratio_flow_to_batch: median(perRound(batchMs, flowMs)),
    ratio_flow_to_manager_batch: median(perRound(managerBatchMs, flowMs)),
    ratio_store_flow_to_batch: median(perRound(batchMs, storeFlowMs)),
    steady_store_flow_ms: median(steady.get(kind.name)?.flow ?? []),
    steady_store_batch_ms: median(steady.get(kind.name)?.batch ?? []),
    ratio_steady_store_flow_to_batch: median(
      perRound(steady.get(kind.name)?.batch ?? [], steady.get(kind.name)?.flow ?? []),
    ),
  }
  const s = spread(release)
  console.log(
    `| ${kind.name}: manager.flow | ${r1(s.median)} (${r1(s.min)}–${r1(s.max)}) | ${r1(median(flowMs))} | ${rate(median(flowMs))} |`,
  )
  console.log(
    `| ${kind.name}: 1,001 addTask in one tick | | ${r1(median(managerBatchMs))} | ${rate(median(managerBatchMs))} |`,
  )
  console.log(
    `| ${kind.name}: store.flows.save, records built | | ${r1(median(storeFlowMs))} | ${rate(median(storeFlowMs))} |`,
  )
  console.log(
    `| ${kind.name}: store.pending.enqueue, 1,001 independent | | ${r1(median(batchMs))} | ${rate(median(batchMs))} |`,
  )
}
if (redisUp) {
  const bull = flowRuns('bullmq flow')
  const ours = flowRuns('redis flow')
  const release = bull.map((run) => run.releaseMs)
  const results = bull.map((run) => run.resultsMs ?? Number.NaN)
  const enqueue = bull.map((run) => run.enqueueMs)
  figures.bullmq = {
    release_ms: spread(release),
    results_ms: spread(results),
    enqueue_ms: spread(enqueue),
  }
  figures.redis_vs_bullmq = {
    // > 1: switchyard stores the tree faster.
    enqueue_speed: median(
      perRound(
        enqueue,
        ours.map((run) => run.enqueueMs),
      ),
    ),
    // < 1: switchyard's parent starts sooner after the last child.
    release_latency: median(
      perRound(
        ours.map((run) => run.releaseMs),
        release,
      ),
    ),
    release_latency_vs_results: median(
      perRound(
        ours.map((run) => run.releaseMs),
        results,
      ),
    ),
  }
  const s = spread(release)
  console.log(
    `| BullMQ FlowProducer + Worker | ${r1(s.median)} (${r1(s.min)}–${r1(s.max)}); with getChildrenValues ${r1(median(results))} | ${r1(median(enqueue))} | ${rate(median(enqueue))} |`,
  )
}
for (const kind of kinds) {
  const f = figures[kind.name] as Record<string, number>
  console.log(
    `${kind.name}: manager.flow vs 1,001 addTask ${(f.ratio_flow_to_manager_batch as number).toFixed(2)}×, vs the store's batch ${(f.ratio_flow_to_batch as number).toFixed(2)}× (store level ${(f.ratio_store_flow_to_batch as number).toFixed(2)}×; goal ≥ 0.8×); steady state, ${String(STEADY_WRITES)} of each written alternately to one store: ${(f.steady_store_flow_ms as number).toFixed(1)} vs ${(f.steady_store_batch_ms as number).toFixed(1)} ms, ${(f.ratio_steady_store_flow_to_batch as number).toFixed(2)}×`,
  )
}
if (redisUp) {
  const v = figures.redis_vs_bullmq as Record<string, number>
  console.log(
    `switchyard Redis vs BullMQ: enqueue ${(v.enqueue_speed as number).toFixed(2)}× as fast; release latency ${(v.release_latency as number).toFixed(2)}× BullMQ's (${(v.release_latency_vs_results as number).toFixed(2)}× its latency to the children's values)`,
  )
}
console.log(`results: ${writeResults('tasks-flows', figures)}`)
