/** The repeating timer the scheduling loops use; tests inject a fake one. */

/** Starts and stops a repeating callback. */
export interface LoopTimer {
  setInterval(callback: () => void, ms: number): unknown
  clearInterval(handle: unknown): void
}

/** Node's timers, unref'd so a loop never keeps a process alive by itself. */
export const systemLoopTimer: LoopTimer = {
  setInterval(callback, ms) {
    const handle = setInterval(callback, ms)
    handle.unref()
    return handle
  },
  clearInterval(handle) {
    clearInterval(handle as ReturnType<typeof setInterval>)
  },
}

/** A source of the current time (epoch ms). */
export interface LoopClock {
  now(): number
}
