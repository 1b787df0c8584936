import type { LoopClock, LoopTimer } from '../../../src/tasks/scheduling/index.js'

/** A clock the test moves. */
export class ManualClock implements LoopClock {
  constructor(public time: number) {}
  now(): number {
    return this.time
  }
}

/** A timer that never fires by itself: tests call `tick()` on the loops. */
export const manualTimer: LoopTimer = {
  setInterval: () => 1,
  clearInterval: () => undefined,
}
