/**
 * Drill 2 in short form: on each durable task store a child process enqueues persistent tasks
 * under load and is SIGKILLed at a random moment; a fresh process on the same store runs what
 * is left. Checked: no acknowledged task lost, and the new process drains them all (duplicated
 * runs are the documented at-least-once window and only reported by the drill).
 */
import { describe, expect, it } from 'vitest'
import { killRound } from '../../drill/drills/task-kill.js'
import { STORE_KINDS } from '../../drill/lib/task-stores.js'
import { storeAvailable } from './store-servers.js'

describe('SIGKILL under load, persistent tasks (short form)', () => {
  for (const kind of STORE_KINDS) {
    it(`${kind}: every acknowledged task runs after the restart`, async () => {
      if (!(await storeAvailable(kind, 'task-kill.test.ts'))) return
      const round = await killRound(kind, 'short')
      expect(round.acknowledged).toBeGreaterThan(0)
      expect(round.lost).toBe(0)
      expect(round.drainMs).not.toBeNull()
    }, 60_000)
  }
})
