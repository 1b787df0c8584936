/**
 * The waiting line of a queue: higher priority first, first-in first-out among equal priorities.
 *
 * Priorities are few distinct integers in practice (none, or 1–10), so items are kept in one
 * FIFO per priority plus a short list of the priorities in use, sorted high to low: pushing and
 * popping are O(1) apart from the rare first use of a new priority, and FIFO order is exact.
 */

/** Something that can wait in a {@link PriorityLine}. */
export interface Prioritised {
  readonly priority: number
}

/** A FIFO backed by an array with a moving head (amortised O(1) shift). */
class Fifo<T> {
  #items: T[] = []
  #head = 0

  get size(): number {
    return this.#items.length - this.#head
  }

  push(item: T): void {
    this.#items.push(item)
  }

  shift(): T | undefined {
    if (this.#head >= this.#items.length) return undefined
    const item = this.#items[this.#head] as T
    this.#head++
    if (this.#head > 1024 && this.#head * 2 > this.#items.length) {
      this.#items = this.#items.slice(this.#head)
      this.#head = 0
    }
    return item
  }
}

/** Items ordered by priority (descending), then arrival. */
export class PriorityLine<T extends Prioritised> {
  /** Priorities in use, highest first. */
  readonly #priorities: number[] = []
  readonly #lines = new Map<number, Fifo<T>>()
  #size = 0

  /** Number of items held. */
  get size(): number {
    return this.#size
  }

  /** Adds an item behind every item of the same or higher priority. */
  push(item: T): void {
    let line = this.#lines.get(item.priority)
    if (line === undefined) {
      line = new Fifo<T>()
      this.#lines.set(item.priority, line)
      const priorities = this.#priorities
      let index = 0
      while (index < priorities.length && (priorities[index] as number) > item.priority) index++
      priorities.splice(index, 0, item.priority)
    }
    line.push(item)
    this.#size++
  }

  /** Removes and returns the first item, or undefined when empty. */
  pop(): T | undefined {
    const priority = this.#priorities[0]
    if (priority === undefined) return undefined
    const line = this.#lines.get(priority) as Fifo<T>
    const item = line.shift()
    if (line.size === 0) {
      this.#lines.delete(priority)
      this.#priorities.shift()
    }
    this.#size--
    return item
  }
}
