/**
 * Drill 2, SIGKILL under load, for each durable task store (SQLite, PostgreSQL, MariaDB, a
 * private Redis). A child process enqueues persistent tasks continuously through `addTask` and
 * reports every acknowledged one; each run appends its number to a file. At a random moment the
 * drill SIGKILLs it and starts a fresh process on the same store, which recovers the dead one's
 * work (pending tasks once their lease ends, running ones as orphans requeued by
 * `requeueOnInterrupt`); the drill waits, bounded, until every acknowledged task ran.
 *
 * Counted per store: acknowledged tasks, lost ones (acknowledged, never run), duplicated runs
 * (the at-least-once window: a task that was running when the process died, or had run but
 * whose finished record was not yet written, runs again) and the time to drain.
 */
import { readFileSync } from 'node:fs'
import { killUnderLoad, startChild } from '../lib/child.js'
import { exactly, measured, type Drill, type DrillFigure, type DrillScale } from '../lib/drill.js'
import { onEveryStore, storeEnv, storeRound, type StoreKind } from '../lib/task-stores.js'
import { taskKillFlows } from './task-kill-flows.js'

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** What one store's round measured. */
export interface KillRound {
  kind: StoreKind
  acknowledged: number
  lost: number
  duplicated: number
  /** Runs of tasks whose acknowledgement never reached the drill (killed first). */
  unacknowledgedRuns: number
  /** ms from the new process's start to the last acknowledged task run, or null (timed out). */
  drainMs: number | null
  killedAfterMs: number
}

/** Counts of each task number in the side-effect file. */
function runs(path: string): Map<number, number> {
  const counts = new Map<number, number>()
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    if (line === '') continue
    const n = Number(line)
    counts.set(n, (counts.get(n) ?? 0) + 1)
  }
  return counts
}

/** One round on one store. */
export function killRound(kind: StoreKind, scale: DrillScale): Promise<KillRound> {
  return storeRound(kind, 'kill', async ({ store, out, children }) => {
    const env = { ...storeEnv(store), SY_OUT: out, SY_MAX: scale === 'full' ? '4000' : '600' }
    const loader = startChild('task-load', { ...env, SY_MODE: 'load' })
    children.push(loader)
    const killedAfterMs = await killUnderLoad(loader, scale)
    const acknowledged = new Set<number>()
    for (const message of loader.messages)
      if (message.type === 'ack') for (const n of message.ids as number[]) acknowledged.add(n)

    const started = performance.now()
    const recoverer = startChild('task-load', { ...env, SY_MODE: 'recover' })
    children.push(recoverer)
    await recoverer.waitFor('started')
    const limitMs = scale === 'full' ? 60_000 : 30_000
    let drainMs: number | null = null
    while (performance.now() - started < limitMs) {
      const counts = runs(out)
      if ([...acknowledged].every((n) => counts.has(n))) {
        drainMs = Math.round(performance.now() - started)
        break
      }
      await sleep(50)
    }
    // Let runs still in flight land before counting duplicates, then stop cleanly.
    await sleep(300)
    recoverer.send({ type: 'stop' })
    await Promise.race([recoverer.exited, sleep(10_000)])
    const counts = runs(out)
    let lost = 0
    let duplicated = 0
    let unacknowledgedRuns = 0
    for (const n of acknowledged) if (!counts.has(n)) lost++
    for (const [n, count] of counts) {
      duplicated += count - 1
      if (!acknowledged.has(n)) unacknowledgedRuns++
    }
    return {
      kind,
      acknowledged: acknowledged.size,
      lost,
      duplicated,
      unacknowledgedRuns,
      drainMs,
      killedAfterMs,
    }
  })
}

/** Runs the drill on every store, one after the other. */
export function taskKill(scale: DrillScale): Promise<DrillFigure[]> {
  return onEveryStore(async (kind) => {
    const round = await killRound(kind, scale)
    return [
      measured(
        `${kind}: tasks acknowledged (killed after ${round.killedAfterMs} ms)`,
        round.acknowledged,
      ),
      exactly(`${kind}: acknowledged tasks lost`, round.lost, 0),
      measured(`${kind}: duplicated runs (at-least-once window)`, round.duplicated),
      measured(`${kind}: runs of tasks not yet acknowledged`, round.unacknowledgedRuns),
      {
        name: `${kind}: ms to drain after the restart`,
        value: round.drainMs ?? 'never',
        goal: 'all acknowledged tasks run',
        ok: round.drainMs !== null,
      },
    ]
  })
}

/** The drill. */
export const taskKillDrill: Drill = {
  name: 'task-kill',
  title:
    'persistent tasks enqueued under load, process SIGKILLed, a new one drains (4 stores); ' +
    '--flows: the same with 200 flows of 20 tasks',
  run: (scale, flags = []) => (flags.includes('--flows') ? taskKillFlows(scale) : taskKill(scale)),
}
