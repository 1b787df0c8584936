/**
 * The frames of a server-sent event stream (`text/event-stream`): blocks of `field: value`
 * lines ended by a blank line, `:` lines being comments. A stream is read by pushing its text
 * chunks into a {@link SseFrameSplitter}; a frame is written with {@link eventFrame}.
 */

/**
 * One event as a frame: `event: <type>`, `data: <data as JSON>` (JSON has no raw newline, so
 * one data line), preceded by `id: <id>` when given.
 */
export function eventFrame(type: string, data: unknown, id?: number): string {
  const frame = `event: ${type}\ndata: ${JSON.stringify(data)}\n\n`
  return id === undefined ? frame : `id: ${id}\n${frame}`
}

/**
 * One frame of an event stream with its fields as sent: `data` lines joined by newlines, the
 * last `event` and `id`, and the text of its comment lines (`: keepalive` → `keepalive`).
 */
export interface SseFrame {
  event?: string
  data?: string
  id?: string
  comments: string[]
}

/**
 * Splits event-stream text into frames as chunks arrive. Synchronous, so a frame is handled in
 * the tick its last chunk arrives. The SDK's event reader and the tests' stream clients share
 * it, so a test reads a stream as the SDK does.
 */
export class SseFrameSplitter {
  #buffer = ''

  /** Adds a chunk and calls `onFrame` for every frame it completes, in order. */
  push(chunk: string, onFrame: (frame: SseFrame) => void): void {
    this.#buffer += chunk
    let end = this.#buffer.indexOf('\n\n')
    while (end >= 0) {
      const block = this.#buffer.slice(0, end)
      this.#buffer = this.#buffer.slice(end + 2)
      onFrame(parseFrame(block))
      end = this.#buffer.indexOf('\n\n')
    }
  }

  /** The length of the frame still incomplete. */
  get pending(): number {
    return this.#buffer.length
  }
}

/**
 * Parses one frame (its lines, without the blank line that ends it). Walks the lines in place
 * rather than splitting them into an array: every SDK app parses every change.
 */
export function parseFrame(block: string): SseFrame {
  const frame: SseFrame = { comments: [] }
  let start = 0
  for (;;) {
    const newline = block.indexOf('\n', start)
    const end = newline < 0 ? block.length : newline
    const colon = block.indexOf(':', start)
    const named = colon >= 0 && colon < end
    const name = block.slice(start, named ? colon : end)
    let from = named ? colon + 1 : end
    // A value loses one leading space: `data: x` and `data:x` are the same.
    if (from < end && block.charCodeAt(from) === SPACE) from += 1
    const value = block.slice(from, end)
    if (name === '') frame.comments.push(value)
    else if (name === 'data')
      frame.data = frame.data === undefined ? value : `${frame.data}\n${value}`
    else if (name === 'event' || name === 'id') frame[name] = value
    if (newline < 0) return frame
    start = newline + 1
  }
}

const SPACE = 0x20
