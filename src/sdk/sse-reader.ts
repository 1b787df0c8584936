/**
 * Reads a server-sent event stream from a Node response: one call of `onEvent` per frame with
 * an `event:` type and JSON `data:`; comments (`: keepalive`) and `retry:`/`id:` lines are
 * skipped. Resolves when the stream ends, rejects when it breaks.
 *
 * Why Node's stream and not fetch: every frame is a change the app must enforce at once. A
 * `data` event is parsed and applied in the same tick it arrives, with no promise hop per chunk
 * (iterating a fetch body costs several, and the first applied change then waits behind them).
 *
 * Why a frame is bounded: the server is trusted, but a proxy or a wrong URL could send an
 * endless line; a frame larger than `maxFrameBytes` ends the stream with an error instead of
 * growing the buffer.
 */
import type { Readable } from 'node:stream'

/** Largest frame accepted (a snapshot of many flags is the biggest one). */
export const MAX_FRAME_BYTES = 64 * 1024 * 1024

/** Reads every event of `body` until it ends. */
export function readEvents(
  body: Readable,
  onEvent: (type: string, data: unknown) => void,
  maxFrameBytes = MAX_FRAME_BYTES,
): Promise<void> {
  return new Promise((resolve, reject) => {
    let buffer = ''
    let ended = false
    body.setEncoding('utf8')
    body.on('data', (chunk: string) => {
      buffer += chunk
      try {
        let end = buffer.indexOf('\n\n')
        while (end >= 0) {
          const frame = buffer.slice(0, end)
          buffer = buffer.slice(end + 2)
          dispatch(frame, onEvent)
          end = buffer.indexOf('\n\n')
        }
      } catch (error) {
        body.destroy(error instanceof Error ? error : new Error(String(error)))
        return
      }
      if (buffer.length > maxFrameBytes)
        body.destroy(new Error(`an event stream frame exceeds ${maxFrameBytes} bytes`))
    })
    body.once('end', () => {
      ended = true
      resolve()
    })
    body.on('error', reject)
    body.once('close', () => {
      if (!ended) reject(new Error('the event stream was cut off'))
    })
  })
}

/**
 * One frame: its `event:` type and its `data:` lines joined by newlines, parsed as JSON.
 * Walked line by line in place rather than split into an array: every app parses every change.
 */
function dispatch(frame: string, onEvent: (type: string, data: unknown) => void): void {
  let type = 'message'
  let data: string | null = null
  let start = 0
  while (start < frame.length) {
    let end = frame.indexOf('\n', start)
    if (end < 0) end = frame.length
    if (frame.startsWith('data:', start)) {
      const from = start + (frame.charCodeAt(start + 5) === SPACE ? 6 : 5)
      const line = frame.slice(from, end)
      data = data === null ? line : `${data}\n${line}`
    } else if (frame.startsWith('event:', start)) type = frame.slice(start + 6, end).trim()
    start = end + 1
  }
  if (data !== null) onEvent(type, JSON.parse(data) as unknown)
}

const SPACE = 0x20
