/** Every drill, in the order `npm run drill` runs them. */
import type { Drill } from '../lib/drill.js'
import { authSweep } from './auth-sweep.js'
import { fuzzDrill } from './fuzz.js'
import { redisOutageDrill } from './redis-outage.js'
import { scheduleSlotsDrill } from './schedule-slots.js'
import { sseClientsDrill } from './sse-clients.js'
import { taskKillDrill } from './task-kill.js'

/** The drills. */
export const DRILLS: readonly Drill[] = [
  redisOutageDrill,
  taskKillDrill,
  scheduleSlotsDrill,
  authSweep,
  fuzzDrill,
  sseClientsDrill,
]
