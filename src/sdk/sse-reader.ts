/**
 * Reads a server-sent event stream from a Node response: one call of `onEvent` per frame with
 * an `event:` type and JSON `data:`; comments (`: keepalive`) and `retry:`/`id:` lines are
 * skipped. Resolves when the stream ends, rejects when it breaks. Frames are split and parsed by
 * common/sse-frames.ts, which the tests' stream clients use too.
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
import { SseFrameSplitter, type SseFrame } from '../common/sse-frames.js'

/** Largest frame accepted (a snapshot of many flags is the biggest one). */
export const MAX_FRAME_BYTES = 64 * 1024 * 1024

/**
 * Reads every event of `body` until it ends. A frame whose data is not JSON is handed to
 * `onMalformed` and skipped (the stream goes on); without `onMalformed` it ends the stream.
 */
export function readEvents(
  body: Readable,
  onEvent: (type: string, data: unknown) => void,
  maxFrameBytes = MAX_FRAME_BYTES,
  onMalformed?: (type: string, error: Error) => void,
): Promise<void> {
  return new Promise((resolve, reject) => {
    const frames = new SseFrameSplitter()
    // Made once, not per chunk: every change reaches every app as a chunk of its own.
    const onFrame = (frame: SseFrame) => {
      if (frame.data === undefined) return
      const type = frame.event?.trim() ?? 'message'
      let data: unknown
      try {
        data = JSON.parse(frame.data)
      } catch (error) {
        if (onMalformed === undefined) throw error
        onMalformed(type, error instanceof Error ? error : new Error(String(error)))
        return
      }
      onEvent(type, data)
    }
    let ended = false
    body.setEncoding('utf8')
    body.on('data', (chunk: string) => {
      try {
        frames.push(chunk, onFrame)
      } catch (error) {
        body.destroy(error instanceof Error ? error : new Error(String(error)))
        return
      }
      if (frames.pending > maxFrameBytes)
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
