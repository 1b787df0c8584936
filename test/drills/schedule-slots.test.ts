/**
 * Drill 3 in short form: on each durable task store three processes run one every-second
 * schedule over 60 slots of a clock the drill drives, and one is SIGKILLed (between two slots)
 * and restarted midway. Checked: no slot ran twice, none in the range was missed.
 */
import { describe, expect, it } from 'vitest'
import { slotRound } from '../../drill/drills/schedule-slots.js'
import { STORE_KINDS } from '../../drill/lib/task-stores.js'
import { storeAvailable } from './store-servers.js'

describe('three processes on one schedule, one killed and restarted (short form)', () => {
  for (const kind of STORE_KINDS) {
    it(`${kind}: every slot runs exactly once`, async () => {
      if (!(await storeAvailable(kind, 'schedule-slots.test.ts'))) return
      const round = await slotRound(kind, 'short')
      expect(round.duplicates).toBe(0)
      expect(round.missed).toBe(0)
    }, 60_000)
  }
})
