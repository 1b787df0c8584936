/**
 * Drill 2 with flows (`npm run drill -- task-kill --flows`), for each durable task store. A
 * child process writes flows of 20 tasks (a root over 4 middle nodes over 15 leaves) — 200 of
 * them, a few at a time — and reports every acknowledged one; each run appends its node, its
 * process and how many child results it saw to a file. Between 0.5 and 2 s after the first
 * acknowledgement the drill SIGKILLs it and starts a fresh process on the same store, which
 * takes the dead one's flows over; the drill waits, bounded, until every acknowledged flow's
 * root ran, then reads the roots' records.
 *
 * Counted per store: flows acknowledged and completed (root `success`), nodes never run, parent
 * runs that came before one of their children's first run or saw fewer child results than
 * children, parents run twice by the new process (a release counted twice), and parents run
 * again after the kill (the at-least-once window: the dead process had run the parent but not
 * yet written its end).
 */
import { readFileSync } from 'node:fs'
import { killUnderLoad, startChild } from '../lib/child.js'
import { exactly, measured, type DrillFigure, type DrillScale } from '../lib/drill.js'
import { onEveryStore, storeEnv, storeRound, type StoreKind } from '../lib/task-stores.js'

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Tasks per flow, and middle nodes under each root. */
const NODES = 20
const MIDS = 4

/** What one store's round measured. */
export interface FlowKillRound {
  kind: StoreKind
  acknowledged: number
  /** Acknowledged flows whose root record is `success` at the end. */
  completed: number
  /** Nodes of acknowledged flows that never ran. */
  neverRun: number
  /** Parent runs before the first run of one of their children. */
  parentsBeforeChildren: number
  /** Parent runs that saw fewer child results than the parent has children. */
  parentsMissingResults: number
  /** Parents the new process ran more than once. */
  parentsRunTwiceAfterRestart: number
  /** Parents run again by the new process after the killed one had run them. */
  parentsRerunAfterKill: number
  /** Leaves run more than once (the killed process's runs whose end was not written). */
  leavesRerun: number
  /** ms from the new process's start to the last acknowledged root's run, or null (timed out). */
  drainMs: number | null
  killedAfterMs: number
}

/** One line of the side-effect file. */
interface Run {
  node: string
  pid: number
  results: number
}

function runsOf(path: string): Run[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => {
      const [node = '', pid = '0', results = '0'] = line.split(' ')
      return { node, pid: Number(pid), results: Number(results) }
    })
}

/** The nodes of flow `n` with their children, as the child builds them. */
function shapeOf(n: number): Map<string, string[]> {
  const leaves = NODES - 1 - MIDS
  const shape = new Map<string, string[]>()
  const root = `f${String(n)}.r`
  shape.set(root, [])
  for (let i = 0; i < MIDS; i++) {
    const mid = `f${String(n)}.m${String(i)}`
    shape.get(root)?.push(mid)
    shape.set(
      mid,
      Array.from({ length: Math.ceil((leaves - i) / MIDS) }, (_, j) => `${mid}.l${String(j)}`),
    )
    for (const leaf of shape.get(mid) ?? []) shape.set(leaf, [])
  }
  return shape
}

/** One round on one store. */
export function flowKillRound(kind: StoreKind, scale: DrillScale): Promise<FlowKillRound> {
  return storeRound(kind, 'killflows', async ({ store, out, children }) => {
    const env = {
      ...storeEnv(store),
      SY_OUT: out,
      SY_FLOWS: scale === 'full' ? '200' : '20',
      SY_NODES: String(NODES),
      SY_MIDS: String(MIDS),
    }
    const loader = startChild('task-flows', { ...env, SY_MODE: 'load' })
    children.push(loader)
    const killedAfterMs = await killUnderLoad(loader, scale)
    const acked = new Map<number, string>()
    for (const message of loader.messages) {
      if (message.type === 'ack') acked.set(message.flow as number, message.root as string)
    }
    const killedPid = loader.process.pid ?? -1

    const started = performance.now()
    const recoverer = startChild('task-flows', { ...env, SY_MODE: 'recover' })
    children.push(recoverer)
    await recoverer.waitFor('started')
    const limitMs = scale === 'full' ? 60_000 : 30_000
    const roots = [...acked.keys()].map((n) => `f${String(n)}.r`)
    let drainMs: number | null = null
    while (performance.now() - started < limitMs) {
      const seen = new Set(runsOf(out).map((run) => run.node))
      if (roots.every((root) => seen.has(root))) {
        drainMs = Math.round(performance.now() - started)
        break
      }
      await sleep(50)
    }
    // The roots' ends are written a moment after their runs: read them until all succeeded.
    let statuses: string[] = []
    const until = performance.now() + 10_000
    do {
      const answer = await recoverer.ask({ type: 'roots', roots: [...acked.values()] }, 'statuses')
      statuses = answer.statuses as string[]
      if (statuses.every((status) => status === 'success')) break
      await sleep(200)
    } while (performance.now() < until)
    recoverer.send({ type: 'stop' })
    await Promise.race([recoverer.exited, sleep(10_000)])

    const runs = runsOf(out)
    /** Position of each node's first run, and every run of each node. */
    const first = new Map<string, number>()
    const byNode = new Map<string, Run[]>()
    runs.forEach((run, index) => {
      if (!first.has(run.node)) first.set(run.node, index)
      const list = byNode.get(run.node) ?? []
      list.push(run)
      byNode.set(run.node, list)
    })
    const round: FlowKillRound = {
      kind,
      acknowledged: acked.size,
      completed: statuses.filter((status) => status === 'success').length,
      neverRun: 0,
      parentsBeforeChildren: 0,
      parentsMissingResults: 0,
      parentsRunTwiceAfterRestart: 0,
      parentsRerunAfterKill: 0,
      leavesRerun: 0,
      drainMs,
      killedAfterMs,
    }
    for (const n of acked.keys()) {
      for (const [node, nodeChildren] of shapeOf(n)) {
        const nodeRuns = byNode.get(node) ?? []
        if (nodeRuns.length === 0) round.neverRun++
        if (nodeChildren.length === 0) {
          if (nodeRuns.length > 1) round.leavesRerun++
          continue
        }
        runs.forEach((run, index) => {
          if (run.node !== node) return
          if (nodeChildren.some((child) => (first.get(child) ?? Infinity) > index)) {
            round.parentsBeforeChildren++
          }
          if (run.results !== nodeChildren.length) round.parentsMissingResults++
        })
        const afterRestart = nodeRuns.filter((run) => run.pid !== killedPid).length
        if (afterRestart > 1) round.parentsRunTwiceAfterRestart++
        if (afterRestart > 0 && nodeRuns.some((run) => run.pid === killedPid)) {
          round.parentsRerunAfterKill++
        }
      }
    }
    return round
  })
}

/** Runs the flows form on every store, one after the other. */
export function taskKillFlows(scale: DrillScale): Promise<DrillFigure[]> {
  return onEveryStore(async (kind) => {
    const round = await flowKillRound(kind, scale)
    return [
      measured(
        `${kind}: flows of ${String(NODES)} acknowledged (killed after ${String(round.killedAfterMs)} ms)`,
        round.acknowledged,
      ),
      exactly(`${kind}: acknowledged flows not completed`, round.acknowledged - round.completed, 0),
      exactly(`${kind}: nodes never run`, round.neverRun, 0),
      exactly(
        `${kind}: parent runs before a child / missing a result`,
        round.parentsBeforeChildren + round.parentsMissingResults,
        0,
      ),
      exactly(`${kind}: parents run twice after the restart`, round.parentsRunTwiceAfterRestart, 0),
      measured(
        `${kind}: parents / leaves run again after the kill (at-least-once window)`,
        `${String(round.parentsRerunAfterKill)} / ${String(round.leavesRerun)}`,
      ),
      {
        name: `${kind}: ms until every acknowledged root ran after the restart`,
        value: round.drainMs ?? 'never',
        goal: 'all acknowledged flows complete',
        ok: round.drainMs !== null,
      },
    ]
  })
}
