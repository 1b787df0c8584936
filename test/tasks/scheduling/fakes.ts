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

/** Moves `clock` to `at`, then runs one tick of each loop, together (as instances would). */
export async function tickAt(
  clock: ManualClock,
  at: number,
  ...loops: { tick(): Promise<unknown> }[]
): Promise<void> {
  clock.time = at
  await Promise.all(loops.map((loop) => loop.tick()))
}
