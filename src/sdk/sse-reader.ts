/**
 * Reads a server-sent event stream from a Node response: one call of `onEvent` per event with
 * its type and JSON `data`. Lines are parsed by `eventsource-parser`, which follows the
 * event-stream format in full: CRLF, CR and LF line endings, comments (`: keepalive`), `retry:`
 * and `id:` lines, multi-line `data:`, a byte-order mark. Resolves when the stream ends,
 * rejects when it breaks.
 *
 * Why Node's stream and not fetch: every event is a change the app must enforce at once. A
 * `data` event is parsed and applied in the same tick it arrives, with no promise hop per chunk
 * (iterating a fetch body costs several, and the first applied change then waits behind them).
 * The parser is synchronous too: an event is handed over within the `feed` call that completes
 * it.
 *
 * Why an event is bounded: the server is trusted, but a proxy or a wrong URL could send an
 * endless line; an event larger than `maxFrameBytes` (characters buffered: the unfinished line
 * and the data gathered so far) ends the stream with an error instead of growing the buffer.
 */
import type { Readable } from 'node:stream'
import { createParser } from 'eventsource-parser'

/** Largest event accepted (a snapshot of many flags is the biggest one). */
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
    const fail = (error: unknown) =>
      body.destroy(error instanceof Error ? error : new Error(String(error)))
    // Made once, not per chunk: every change reaches every app as a chunk of its own.
    const parser = createParser({
      maxBufferSize: maxFrameBytes,
      onEvent: (event) => {
        // The type loses surrounding spaces (`event:  flag ` is `flag`); none is `message`.
        const type = event.event?.trim() || 'message'
        let data: unknown
        try {
          data = JSON.parse(event.data)
        } catch (error) {
          if (onMalformed === undefined) throw error
          onMalformed(type, error instanceof Error ? error : new Error(String(error)))
          return
        }
        onEvent(type, data)
      },
      // Only an oversized event is fatal: an unknown field or a bad `retry:` line is skipped
      // (the server may add fields; the SDK's reconnection has its own backoff).
      onError: (error) => {
        if (error.type === 'max-buffer-size-exceeded')
          fail(new Error(`an event stream frame exceeds ${maxFrameBytes} bytes`))
      },
    })
    let ended = false
    // A chunk ending in CR: the line (and so maybe the frame) is complete, but the parser waits
    // for the next byte to tell CR from CRLF, and on a CR-only stream that byte comes with the
    // next change, many seconds later. So the CR is fed as CRLF at once, and an LF that then
    // opens the next chunk, the rest of that same line ending, is dropped.
    let completedCr = false
    body.setEncoding('utf8')
    body.on('data', (chunk: string) => {
      const text = completedCr && chunk.startsWith('\n') ? chunk.slice(1) : chunk
      completedCr = text.endsWith('\r')
      try {
        parser.feed(completedCr ? `${text}\n` : text)
      } catch (error) {
        fail(error)
      }
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
