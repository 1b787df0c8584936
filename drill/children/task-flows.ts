/**
 * Child of the `task-kill --flows` drill. A TaskManager on the store named by the environment
 * runs flows of one shape: a root over `SY_MIDS` middle nodes, the leaves dealt out among them
 * (`SY_NODES` tasks in all). Every run appends one line to `SY_OUT` (O_APPEND, so the lines of
 * two processes never interleave): `<node> <pid> <results>`, where a node is `f<flow>.r`,
 * `f<flow>.m<i>` or `f<flow>.m<i>.l<j>` and `results` is how many child results a parent saw
 * (0 for a leaf). Leaves await a few ms first: some runs are always in flight. Every task
 * requeues on interrupt, so a run cut by the kill runs again rather than failing its flow.
 *
 * - `SY_MODE=load`: writes `SY_FLOWS` flows through `manager.flow` (a few at a time) until
 *   killed, and reports each acknowledged one (`ack`: its number and root id).
 * - `SY_MODE=recover`: only starts, so that it recovers the dead process's flows and runs them;
 *   `roots` asks for the status of root ids (`statuses`), `stop` shuts it down cleanly.
 */
import { appendFileSync } from 'node:fs'
import { getTaskContext, TaskManager, type FlowSpec } from '../../src/tasks/index.js'
import { tellParent } from '../lib/child.js'
import { openStoreFromEnv } from '../lib/task-stores.js'

const out = process.env.SY_OUT ?? ''
const mode = process.env.SY_MODE
const flows = Number(process.env.SY_FLOWS ?? '200')
const nodes = Number(process.env.SY_NODES ?? '20')
const mids = Number(process.env.SY_MIDS ?? '4')
/** Flows being written at once. */
const IN_FLIGHT = 4

const manager = new TaskManager({
  store: openStoreFromEnv(),
  // A short lease, so that the dead process's work is taken over within about a second.
  leaseSeconds: 1,
  queues: { default: { concurrency: 50 } },
  logger: { warn: () => undefined, error: (message) => console.error(message) },
})

/** Appends this run's line; `results` is the number of child results the run saw. */
function ran(node: string, results: number): void {
  appendFileSync(out, `${node} ${String(process.pid)} ${String(results)}\n`)
}

const leaf = manager.task(
  { name: 'drill-flow-leaf', requeueOnInterrupt: true },
  async (node: string) => {
    await new Promise((resolve) => setTimeout(resolve, Math.random() * 20))
    ran(node, 0)
    return node
  },
)
const parent = manager.task(
  { name: 'drill-flow-parent', requeueOnInterrupt: true },
  (node: string) => {
    const results = Object.keys(getTaskContext()?.childResults() ?? {}).length
    ran(node, results)
    return results
  },
)

/** Flow `n`: the root, `mids` middle nodes, and the leaves dealt out among them. */
function flowOf(n: number): FlowSpec {
  const leaves = nodes - 1 - mids
  return {
    task: parent,
    args: [`f${String(n)}.r`],
    children: Array.from({ length: mids }, (_, i) => ({
      task: parent,
      args: [`f${String(n)}.m${String(i)}`],
      children: Array.from({ length: Math.ceil((leaves - i) / mids) }, (_, j) => ({
        task: leaf,
        args: [`f${String(n)}.m${String(i)}.l${String(j)}`],
      })),
    })),
  }
}

process.on('message', (message: { type?: string; roots?: string[] }) => {
  if (message.type === 'roots') {
    void Promise.all(
      (message.roots ?? []).map(async (id) => (await manager.getTask(id))?.status ?? 'missing'),
    ).then((statuses) => tellParent({ type: 'statuses', statuses }))
  }
  if (message.type === 'stop') void manager.shutdown().then(() => process.exit(0))
})
await manager.startup()
tellParent({ type: 'started' })

if (mode === 'load') {
  let next = 0
  const write = async (): Promise<void> => {
    while (next < flows) {
      const n = next++
      const root = await manager.flow(flowOf(n))
      tellParent({ type: 'ack', flow: n, root })
    }
  }
  await Promise.all(Array.from({ length: IN_FLIGHT }, write))
}
