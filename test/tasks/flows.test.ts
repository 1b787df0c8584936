/**
 * Flows (trees of tasks) and chains, on memory and on every durable store: a tree of depth 3
 * and fan-out 10 runs every node once and each parent sees its children's results; a failed
 * leaf fails its ancestors (nothing above runs) and retrying it completes the flow; cancel
 * cascades; a chain passes results; a result over the limit fails its child; bad input stores
 * nothing; two managers on one store share one flow's work.
 */
import { afterAll, describe, expect, it } from 'vitest'
import {
  getTaskContext,
  TaskManager,
  TaskNotRetryableError,
  TaskValidationError,
  type DurableTaskStore,
  type TaskRecord,
} from '../../src/tasks/index.js'
import { childResultsOf, echo } from './fixtures/worker-tasks.js'
import { quietLogger, until } from './helpers.js'
import { makeTask } from './persistence/helpers.js'
import { removeSqliteFiles, storeKinds } from './scheduling/stores.js'

afterAll(() => removeSqliteFiles())

/** Waits until `taskId`'s stored (or local) record has `status`. */
async function reach(manager: TaskManager, taskId: string, status: string): Promise<TaskRecord> {
  let record: TaskRecord | undefined
  try {
    await until(async () => {
      record = await manager.getTask(taskId)
      return record?.status === status
    }, 20_000)
  } catch {
    throw new Error(`${taskId} is ${record?.status ?? 'missing'}, not ${status}`)
  }
  return record as TaskRecord
}

/** Every record of the flow rooted at `rootId`. */
async function flowRecords(manager: TaskManager, rootId: string): Promise<TaskRecord[]> {
  const page = await manager.listTasks({ flow: rootId, perPage: 500 })
  return page.items
}

/** A manager with the test's functions; `runs` counts every start by function and arguments. */
function instance(store: DurableTaskStore | undefined, shared: Shared) {
  const manager = new TaskManager({
    logger: quietLogger,
    maxResultBytes: 1000,
    queues: { narrow: { concurrency: 1 } },
    ...(store === undefined ? {} : { store, leaseSeconds: 3 }),
  })
  const leaf = manager.task({ name: 'leaf' }, (n: number) => {
    shared.runs.push(`leaf:${String(n)}`)
    if (shared.failing.has(n)) throw new Error(`leaf ${String(n)} broke`)
    return n
  })
  const sum = manager.task({ name: 'sum' }, (label: string) => {
    shared.runs.push(`sum:${label}`)
    const results = getTaskContext()?.childResults() ?? {}
    return Object.values(results).reduce<number>((total, value) => total + Number(value), 0)
  })
  const step = manager.task({ name: 'step' }, (add: number, previous?: number) => {
    shared.runs.push(`step:${String(add)}`)
    return (previous ?? 0) * 10 + add
  })
  const huge = manager.task({ name: 'huge' }, () => 'x'.repeat(5000))
  const slow = manager.task({ name: 'slow', queue: 'narrow' }, async () => {
    await until(() => shared.release, 30_000)
    return 1
  })
  return { manager, leaf, sum, step, huge, slow }
}

interface Shared {
  runs: string[]
  failing: Set<number>
  release: boolean
}

type Instance = ReturnType<typeof instance>

/** A tree: root sum over 10 sums of 10 leaves (111 tasks); leaf values 0..99. */
function tree(a: Instance) {
  return {
    task: a.sum,
    args: ['root'],
    children: Array.from({ length: 10 }, (_, i) => ({
      task: a.sum,
      args: [`mid${String(i)}`],
      children: Array.from({ length: 10 }, (_, j) => ({ task: a.leaf, args: [i * 10 + j] })),
    })),
  }
}

/** The flow checks on instances `a` and `b` (b may be a itself). */
async function flows(a: Instance, b: Instance, shared: Shared) {
  await Promise.all([a.manager.startup(), b.manager.startup()])
  try {
    // Depth 3, fan-out 10: every node once, the root sees the sums of its children.
    const rootId = await a.manager.flow(tree(a))
    const root = await reach(a.manager, rootId, 'success')
    expect(root.parent_id).toBeNull()
    let records: TaskRecord[] = []
    // The other instance reads the store, where the root's end lands a moment later.
    await until(async () => {
      records = await flowRecords(b.manager, rootId)
      return records.every((record) => record.status === 'success')
    }, 20_000)
    expect(records).toHaveLength(111)
    expect(records.filter((record) => record.parent_id === rootId)).toHaveLength(10)
    expect(shared.runs.filter((run) => run.startsWith('leaf:'))).toHaveLength(100)
    expect(new Set(shared.runs).size).toBe(shared.runs.length)
    const stored = await a.manager.getStoredTask(rootId)
    expect(stored?.flow_result ?? null).toBeNull()
    expect(JSON.parse(stored?.result ?? 'null')).toBe(4950)

    // A failed leaf fails its ancestors; nothing above it runs; retrying it completes the flow.
    shared.runs.length = 0
    shared.failing.add(1007)
    const failingRoot = await a.manager.flow({
      task: a.sum,
      args: ['top'],
      children: [
        {
          task: a.sum,
          args: ['middle'],
          children: [
            { task: a.leaf, args: [1007] },
            { task: a.leaf, args: [1] },
          ],
        },
        { task: a.leaf, args: [2] },
      ],
    })
    const failedTop = await reach(a.manager, failingRoot, 'failed')
    expect(failedTop.error).toMatch(/^FlowChildFailedError:/)
    const nodes = await flowRecords(a.manager, failingRoot)
    const middle = nodes.find(
      (record) => record.parent_id === failingRoot && record.func_name === 'sum',
    )
    const broken = nodes.find((record) => record.func_name === 'leaf' && record.status === 'failed')
    expect(middle?.status).toBe('failed')
    expect(middle?.error).toMatch(/FlowChildFailedError/)
    expect(shared.runs.filter((run) => run.startsWith('sum:'))).toEqual([])
    await expect(b.manager.retryTask(failingRoot)).rejects.toBeInstanceOf(TaskNotRetryableError)
    shared.failing.delete(1007)
    const retryId = await b.manager.retryTask(broken?.task_id as string)
    expect((await reach(b.manager, retryId, 'success')).parent_id).toBe(middle?.task_id)
    const done = await reach(a.manager, failingRoot, 'success')
    expect(done.error).toBeNull()
    expect(JSON.parse((await a.manager.getStoredTask(failingRoot))?.result ?? 'null')).toBe(1010)
    // The retry ran on B, and B's write of its success released the parents there.
    if (a !== b) {
      const workers = new Set((await flowRecords(a.manager, failingRoot)).map((r) => r.worker))
      expect(workers).toContain(a.manager.workerId)
      expect(workers).toContain(b.manager.workerId)
    }
    expect(shared.runs.filter((run) => run.startsWith('sum:')).sort()).toEqual([
      'sum:middle',
      'sum:top',
    ])

    // Cancelling a waiting parent cancels its pending children (and fails nothing above it).
    shared.release = false
    const slowRoot = await a.manager.flow({
      task: a.sum,
      args: ['cancelled'],
      children: [
        { task: a.slow, args: [] },
        { task: a.slow, args: [] },
      ],
    })
    const cancelled = await b.manager.cancel(slowRoot)
    expect(['pending', 'cancelled']).toContain(cancelled.status)
    await reach(a.manager, slowRoot, 'cancelled')
    let cancelledNodes: TaskRecord[] = []
    await until(async () => {
      cancelledNodes = await flowRecords(a.manager, slowRoot)
      return cancelledNodes.some((r) => r.task_id !== slowRoot && r.status === 'cancelled')
    }, 20_000)
    expect(cancelledNodes.filter((r) => r.status === 'success')).toEqual([])
    shared.release = true

    // Cancelling a child fails its parent.
    shared.release = false
    const childCancel = await a.manager.flow({
      task: a.sum,
      args: ['child-cancel'],
      children: [{ task: a.slow, args: [] }],
    })
    const [slowChild] = (await flowRecords(a.manager, childCancel)).filter(
      (r) => r.parent_id === childCancel,
    )
    await b.manager.cancel(slowChild?.task_id as string)
    const failedByCancel = await reach(a.manager, childCancel, 'failed')
    expect(failedByCancel.error).toMatch(/FlowChildFailedError/)
    shared.release = true

    // A chain passes each result on as the last argument.
    const last = await a.manager.chain([
      { task: a.step, args: [1] },
      { task: a.step, args: [2] },
      { task: a.step, args: [3] },
    ])
    await reach(a.manager, last, 'success')
    expect(JSON.parse((await a.manager.getStoredTask(last))?.result ?? 'null')).toBe(123)

    // Deleting a flow's records takes its index entries with them.
    let chainRecords: TaskRecord[] = []
    await until(async () => {
      chainRecords = await flowRecords(b.manager, last)
      return chainRecords.length === 3 && chainRecords.every((r) => r.status === 'success')
    }, 20_000)
    expect(await a.manager.deleteTasks(chainRecords.map((r) => r.task_id))).toBe(3)
    // (A SQL store's totals are cached per instance for a few seconds: read the page's items.)
    expect((await a.manager.listTasks({ flow: last })).total).toBe(0)
    expect((await b.manager.listTasks({ flow: last })).items).toEqual([])

    // A result over maxResultBytes fails its child with a clear code, and its parent.
    const hugeRoot = await a.manager.flow({
      task: a.sum,
      args: ['huge'],
      children: [{ task: a.huge, args: [] }],
    })
    await reach(a.manager, hugeRoot, 'failed')
    const hugeChild = (await flowRecords(a.manager, hugeRoot)).find((r) => r.func_name === 'huge')
    expect(hugeChild?.status).toBe('failed')
    expect(hugeChild?.error).toMatch(/^FlowResultTooLargeError:/)

    // The root's idempotency key stands for the flow: a second flow with it writes nothing.
    const keyed = await a.manager.flow({
      task: a.sum,
      args: ['keyed'],
      options: { idempotencyKey: `flow-key-${rootId}` },
      children: [{ task: a.leaf, args: [5] }],
    })
    const again = await b.manager.flow({
      task: b.sum,
      args: ['keyed'],
      options: { idempotencyKey: `flow-key-${rootId}` },
      children: [{ task: b.leaf, args: [6] }],
    })
    expect(again).toBe(keyed)
    await reach(a.manager, keyed, 'success')
    expect(await flowRecords(a.manager, keyed)).toHaveLength(2)
  } finally {
    shared.release = true
    await Promise.all([a.manager.shutdown(), b.manager.shutdown()])
  }
}

describe('flows', () => {
  it('memory: runs trees, fails and retries, cancels, chains, bounds results', async () => {
    const shared: Shared = { runs: [], failing: new Set(), release: true }
    const only = instance(undefined, shared)
    await flows(only, only, shared)
  }, 60_000)

  it('bad input is refused and stores nothing', async () => {
    const shared: Shared = { runs: [], failing: new Set(), release: true }
    const a = instance(undefined, shared)
    const other = instance(undefined, shared)
    const bad: unknown[] = [
      null,
      { task: a.leaf, args: 'x' },
      { task: other.leaf, args: [1] },
      { task: a.sum, args: [], children: 'no' },
      {
        task: a.sum,
        args: [],
        children: [{ task: a.leaf, args: [1], options: { idempotencyKey: 'k' } }],
      },
      { task: a.sum, args: [], children: [{ task: 'leaf', args: [1] }] },
      { task: a.sum, args: [], children: [{ task: a.leaf, args: [1], options: { nope: 1 } }] },
    ]
    for (const spec of bad) {
      await expect(a.manager.flow(spec as never)).rejects.toBeInstanceOf(TaskValidationError)
    }
    const node = { task: a.leaf, args: [1] }
    await expect(a.manager.flow({ task: a.sum, args: [], children: [node, node] })).rejects.toThrow(
      /twice/,
    )
    await expect(a.manager.chain([])).rejects.toBeInstanceOf(TaskValidationError)
    await expect(a.manager.chain('x' as never)).rejects.toBeInstanceOf(TaskValidationError)
    expect((await a.manager.listTasks()).total).toBe(0)
    expect(shared.runs).toEqual([])
    // An empty children array is a leaf.
    const id = await a.manager.flow({ task: a.leaf, args: [3], children: [] })
    expect((await reach(a.manager, id, 'success')).parent_id).toBeNull()
    await a.manager.shutdown()
    await other.manager.shutdown()
  })

  it('sqlite with an encryption key: results are stored encrypted and reach the parent', async () => {
    const kind = storeKinds('flows-encrypted')[0]!
    const manager = new TaskManager({
      logger: quietLogger,
      store: kind.open(),
      encryptionKey: 'a'.repeat(64),
    })
    const secret = manager.task({ name: 'secret' }, (n: number) => ({ pin: 1000 + n }))
    const seen: number[] = []
    const collect = manager.task({ name: 'collect' }, () => {
      for (const value of Object.values(getTaskContext()?.childResults() ?? {})) {
        seen.push((value as { pin: number }).pin)
      }
    })
    await manager.startup()
    try {
      const rootId = await manager.flow({
        task: collect,
        args: [],
        children: [
          { task: secret, args: [1] },
          { task: secret, args: [2] },
        ],
      })
      await reach(manager, rootId, 'success')
      expect(seen.sort()).toEqual([1001, 1002])
      const children = (await manager.listStoredTasks({ flow: rootId })).items.filter(
        (task) => task.record.parent_id === rootId,
      )
      expect(children).toHaveLength(2)
      for (const child of children) {
        expect(child.args).toBeNull()
        expect(child.flow_result?.startsWith('e:')).toBe(true)
        expect(child.flow_result).not.toContain('1001')
      }
      // The root's own display result stays unrecorded (its arguments are encrypted).
      const root = await manager.getStoredTask(rootId)
      expect(root?.result ?? null).toBeNull()
      expect(root?.encrypted_args).not.toBeNull()
    } finally {
      await manager.shutdown()
    }
  })

  for (const kind of storeKinds('flows')) {
    it(`${kind.name}: the same on two managers sharing the store`, async ({ skip }) => {
      if (!(await kind.enabled())) skip()
      const shared: Shared = { runs: [], failing: new Set(), release: true }
      try {
        await flows(instance(kind.open(), shared), instance(kind.open(), shared), shared)
      } finally {
        await kind.cleanup()
      }
    }, 120_000)
  }
})

/**
 * An expired leaf counts like a child that failed for good: its parent fails with
 * FLOW_CHILD_FAILED, and so does the root; nothing above it runs. Checked where a waiting leaf
 * expires in its queue (the sweep) and, on a durable store, where the claim finds it expired.
 */
async function expiredLeaves(store: () => DurableTaskStore | undefined, shared: Shared) {
  const a = instance(store(), shared)
  await a.manager.startup()
  try {
    // The leaf waits behind a slow task in a queue of one and expires there.
    shared.release = false
    const blocker = await a.manager.flow({ task: a.slow, args: [] })
    const rootId = await a.manager.flow({
      task: a.sum,
      args: ['expired-root'],
      children: [
        {
          task: a.sum,
          args: ['expired-mid'],
          children: [
            { task: a.slow, args: [], options: { ttl: 0.3 } },
            { task: a.leaf, args: [3] },
          ],
        },
      ],
    })
    const root = await reach(a.manager, rootId, 'failed')
    expect(root.error).toMatch(/^FlowChildFailedError:/)
    const nodes = await flowRecords(a.manager, rootId)
    expect(nodes.find((r) => r.func_name === 'slow')?.status).toBe('expired')
    expect(nodes.find((r) => r.parent_id === rootId)?.error).toMatch(/FlowChildFailedError/)
    expect(shared.runs.filter((run) => run.startsWith('sum:'))).toEqual([])
    shared.release = true
    await reach(a.manager, blocker, 'success')
  } finally {
    shared.release = true
    await a.manager.shutdown()
  }
}

/**
 * A flow written by an instance that died before its leaves ran, one leaf already expired:
 * the next instance's claim ends that leaf, and its parent and the root fail at once.
 */
async function expiredAtClaim(store: DurableTaskStore, shared: Shared) {
  const now = Date.now()
  const at = (ms: number) => new Date(ms).toISOString().replace('Z', '+00:00')
  const root = makeTask({ func_name: 'sum', created: now - 3000 })
  root.args = ['claim-root']
  const mid = makeTask({ func_name: 'sum', created: now - 3000, parent_id: root.record.task_id })
  mid.args = ['claim-mid']
  const expiring = makeTask({
    func_name: 'leaf',
    created: now - 3000,
    parent_id: mid.record.task_id,
    expires_at: at(now - 1000),
  })
  expiring.args = [41]
  const live = makeTask({ func_name: 'leaf', created: now - 3000, parent_id: mid.record.task_id })
  live.args = [42]
  for (const task of [root, mid, expiring, live]) task.flow_id = root.record.task_id
  root.flow_children = 1
  mid.flow_children = 2
  await store.flows?.save([root, mid, expiring, live], {
    claim: { owner: 'an-instance-that-died', leaseUntil: now - 500 },
    holds: [
      { task_id: root.record.task_id, children: 1 },
      { task_id: mid.record.task_id, children: 2 },
    ],
  })
  const b = instance(store, shared)
  await b.manager.startup()
  try {
    const failed = await reach(b.manager, root.record.task_id, 'failed')
    expect(failed.error).toMatch(/^FlowChildFailedError:/)
    expect((await b.manager.getTask(mid.record.task_id))?.status).toBe('failed')
    expect((await b.manager.getTask(expiring.record.task_id))?.status).toBe('expired')
    await reach(b.manager, live.record.task_id, 'success')
    expect(shared.runs).toEqual(['leaf:42'])
  } finally {
    await b.manager.shutdown()
  }
}

describe('expired flow children', () => {
  it('memory: an expired leaf fails its parent and the root; nothing above it runs', async () => {
    const shared: Shared = { runs: [], failing: new Set(), release: true }
    await expiredLeaves(() => undefined, shared)
  }, 60_000)

  for (const kind of storeKinds('flows_expired')) {
    it(`${kind.name}: the same where the queue or the claim finds the leaf expired`, async ({
      skip,
    }) => {
      if (!(await kind.enabled())) skip()
      try {
        await expiredLeaves(() => kind.open(), { runs: [], failing: new Set(), release: true })
        await expiredAtClaim(kind.open(), { runs: [], failing: new Set(), release: true })
      } finally {
        await kind.cleanup()
      }
    }, 120_000)
  }
})

describe('childResults in thread and process tasks', () => {
  const fixture = new URL('./fixtures/worker-tasks.ts', import.meta.url).href
  for (const executor of ['thread', 'process'] as const) {
    it(`${executor}: a parent reads its children's results in its worker`, async () => {
      const manager = new TaskManager({
        logger: quietLogger,
        maxSyncThreads: 1,
        maxProcessWorkers: 1,
        processShutdownTimeout: 0.2,
      })
      const on = { executor, module: fixture }
      const leaf = manager.task({ ...on, name: 'echo' }, echo)
      const parent = manager.task({ ...on, name: 'childResultsOf' }, childResultsOf)
      await manager.startup()
      try {
        const rootId = await manager.flow({
          task: parent,
          args: ['root'],
          children: [
            { task: leaf, args: [{ n: 1 }] },
            { task: leaf, args: ['two'] },
          ],
        })
        await reach(manager, rootId, 'success')
        const children = (await manager.listStoredTasks({ flow: rootId })).items.filter(
          (task) => task.record.parent_id === rootId,
        )
        const byId = Object.fromEntries(
          children.map((child) => [child.record.task_id, child.args?.[0]]),
        )
        expect(Object.keys(byId)).toHaveLength(2)
        const result = JSON.parse((await manager.getStoredTask(rootId))?.result ?? 'null') as {
          label: string
          children: unknown
        }
        expect(result).toEqual({ label: 'root', children: byId })
        // A chain step in a worker still gets the previous result as its last argument.
        const last = await manager.chain([
          { task: leaf, args: [7] },
          { task: parent, args: ['step'] },
        ])
        await reach(manager, last, 'success')
        const step = JSON.parse((await manager.getStoredTask(last))?.result ?? 'null') as {
          label: string
          children: Record<string, unknown>
        }
        expect(step.label).toBe('step')
        expect(Object.values(step.children)).toEqual([7])
      } finally {
        await manager.shutdown()
      }
    }, 60_000)
  }
})

describe('flows across a restart', () => {
  it('sqlite: a flow left by a stopped instance is finished by the next one', async () => {
    const kind = storeKinds('flows-restart')[0]!
    let release = false
    const open = () => {
      const manager = new TaskManager({
        logger: quietLogger,
        store: kind.open(),
        queues: { narrow: { concurrency: 1 } },
      })
      const slow = manager.task(
        { name: 'slow', queue: 'narrow', requeueOnInterrupt: true },
        async (n: number) => {
          await until(() => release, 30_000).catch(() => undefined)
          return n
        },
      )
      const sum = manager.task({ name: 'sum' }, () =>
        Object.values(getTaskContext()?.childResults() ?? {}).reduce<number>(
          (total, value) => total + Number(value),
          0,
        ),
      )
      return { manager, slow, sum }
    }
    const first = open()
    await first.manager.startup()
    const rootId = await first.manager.flow({
      task: first.sum,
      args: [],
      children: [
        { task: first.slow, args: [20] },
        { task: first.slow, args: [22] },
      ],
    })
    // One child runs, the other waits in its queue: stop the instance in the middle.
    await until(async () => {
      const items = (await first.manager.listTasks({ flow: rootId })).items
      return items.some((record) => record.status === 'running')
    })
    const stopping = first.manager.shutdown()
    release = true
    await stopping
    const second = open()
    await second.manager.startup()
    try {
      await reach(second.manager, rootId, 'success')
      expect(JSON.parse((await second.manager.getStoredTask(rootId))?.result ?? 'null')).toBe(42)
    } finally {
      await second.manager.shutdown()
    }
  }, 60_000)
})
