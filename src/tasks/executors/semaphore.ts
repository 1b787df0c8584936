/**
 * A counting semaphore with FIFO waiters whose wait ends early when the task is aborted.
 */
import type { Cancellation } from '../cancellation.js'

/** Limits how many holders run at once. */
export class Semaphore {
  #available: number
  readonly #waiters: (() => void)[] = []

  constructor(size: number) {
    this.#available = size
  }

  /** Takes a permit; true once held, false when `cancellation` aborted first (no permit held). */
  acquire(cancellation: Cancellation): Promise<boolean> | boolean {
    if (cancellation.aborted) return false
    if (this.#available > 0) {
      this.#available--
      return true
    }
    return new Promise<boolean>((resolve) => {
      const grant = (): void => {
        stopListening()
        resolve(true)
      }
      const stopListening = cancellation.onAbort(() => {
        const index = this.#waiters.indexOf(grant)
        if (index >= 0) this.#waiters.splice(index, 1)
        resolve(false)
      })
      this.#waiters.push(grant)
    })
  }

  /** Returns a permit, handing it to the oldest waiter if any. */
  release(): void {
    const next = this.#waiters.shift()
    if (next === undefined) this.#available++
    else next()
  }
}
