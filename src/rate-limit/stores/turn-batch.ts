/**
 * The blocked-request records of one event-loop turn, written together: a flood of 429s then
 * costs one write per turn on a shared store, not one per rejected request.
 */

/** Records gathered until the end of the current event-loop turn, then written in one call. */
export interface TurnBatch {
  /** Queues a record's text; resolves once the write that holds it is done. */
  add(text: string): Promise<void>
  /** Resolves once the write in flight (if any) settled, so a read never overtakes a record. */
  settled(): Promise<void>
}

/** A {@link TurnBatch} over `write`, which receives the texts of a turn in the order added. */
export function turnBatch(write: (texts: string[]) => Promise<void>): TurnBatch {
  let batch: { texts: string[]; written: Promise<void> } | null = null
  return {
    add(text) {
      if (batch === null) {
        const texts: string[] = []
        const written = new Promise<void>((resolve) => setImmediate(resolve)).then(() => {
          batch = null
          return write(texts)
        })
        batch = { texts, written }
      }
      batch.texts.push(text)
      return batch.written
    },
    settled: async () => {
      await batch?.written.catch(() => undefined)
    },
  }
}
