/**
 * SIGKILL in the middle of flows (the `task-kill --flows` drill in short form), on SQLite and
 * PostgreSQL: a child process writes flows of 20 tasks and runs them, and is SIGKILLed at a
 * random moment; a fresh process on the same store takes the flows over. Checked: every
 * acknowledged flow completes, every node ran, every parent ran after all its children with
 * all their results, and no parent ran twice after the restart (a parent run again is only one
 * the killed process had run without writing its end: the at-least-once window).
 */
import { describe, expect, it } from 'vitest'
import { flowKillRound } from '../../drill/drills/task-kill-flows.js'
import { storeAvailable } from './store-servers.js'

describe('SIGKILL in the middle of flows (short form)', () => {
  for (const kind of ['sqlite', 'postgres'] as const) {
    it(`${kind}: every acknowledged flow completes after the restart, each parent after its children, none twice on the new process`, async () => {
      if (!(await storeAvailable(kind, 'task-kill-flows.test.ts'))) return
      const round = await flowKillRound(kind, 'short')
      expect(round.acknowledged).toBeGreaterThan(0)
      expect(round.drainMs).not.toBeNull()
      expect(round.completed).toBe(round.acknowledged)
      expect(round.neverRun).toBe(0)
      expect(round.parentsBeforeChildren).toBe(0)
      expect(round.parentsMissingResults).toBe(0)
      expect(round.parentsRunTwiceAfterRestart).toBe(0)
    }, 60_000)
  }
})
