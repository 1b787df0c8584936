/**
 * Re-reading the stored operator controls (queue configs and pauses, schedule pauses) one read
 * at a time. Why serialise: two overlapping reads may finish out of order, and the older
 * answer applied last would undo a pause until the next round. A request that comes while a
 * read runs is served by one more read after it, so the last state applied is never older than
 * the last request.
 */

/** Runs `load` for each request, never two at once, coalescing the requests made meanwhile. */
export class ControlRefresh {
  #running: Promise<void> | null = null
  #again: Promise<void> | null = null

  constructor(private readonly load: () => Promise<void>) {}

  /** Resolves once a read started after this call has finished (rejects with its error). */
  request(): Promise<void> {
    if (this.#running === null) {
      this.#running = this.load().finally(() => {
        this.#running = null
      })
      return this.#running
    }
    this.#again ??= this.#running
      .catch(() => undefined)
      .then(() => {
        this.#again = null
        return this.request()
      })
    return this.#again
  }
}
