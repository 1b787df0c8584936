/**
 * The connection of a task store, opened on first use: concurrent first uses share one
 * opening, a failed opening is tried again by the next use, and closing waits for an opening
 * in flight so that nothing it opens is left behind.
 */

/** A connection opened once, on first use (see the module comment). */
export class OpenOnce<T> {
  #value: T | null = null
  #opening: Promise<T> | null = null

  constructor(private readonly open: () => Promise<T>) {}

  /** The connection if it is open, else null (nothing is opened). */
  current(): T | null {
    return this.#value
  }

  /** The connection, opened now if it is not yet. */
  get(): Promise<T> {
    if (this.#value !== null) return Promise.resolve(this.#value)
    this.#opening ??= this.open()
      .then((value) => {
        this.#value = value
        return value
      })
      .finally(() => {
        this.#opening = null
      })
    return this.#opening
  }

  /**
   * Forgets the connection and hands it back for closing (null when none was opened); an
   * opening in flight is waited for first.
   */
  async release(): Promise<T | null> {
    const opening = this.#opening
    if (opening !== null) await opening.catch(() => undefined)
    const value = this.#value
    this.#value = null
    return value
  }
}
