/**
 * Reads a server-sent event stream from a fetch response: one call of `onEvent` per frame with
 * an `event:` type and JSON `data:`; comments (`: keepalive`) and `retry:`/`id:` lines are
 * skipped. Resolves when the stream ends, rejects when it breaks.
 *
 * Why a frame is bounded: the server is trusted, but a proxy or a wrong URL could send an
 * endless line; a frame larger than `maxFrameBytes` ends the stream with an error instead of
 * growing the buffer.
 */

/** Largest frame accepted (a snapshot of many flags is the biggest one). */
export const MAX_FRAME_BYTES = 64 * 1024 * 1024

/** Reads every event of `response` until its body ends. */
export async function readEvents(
  response: Response,
  onEvent: (type: string, data: unknown) => void,
  maxFrameBytes = MAX_FRAME_BYTES,
): Promise<void> {
  if (response.body === null) return
  const decoder = new TextDecoder()
  let buffer = ''
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true })
    let end = buffer.indexOf('\n\n')
    while (end >= 0) {
      const frame = buffer.slice(0, end)
      buffer = buffer.slice(end + 2)
      dispatch(frame, onEvent)
      end = buffer.indexOf('\n\n')
    }
    if (buffer.length > maxFrameBytes)
      throw new Error(`an event stream frame exceeds ${maxFrameBytes} bytes`)
  }
}

function dispatch(frame: string, onEvent: (type: string, data: unknown) => void): void {
  let type = 'message'
  const data: string[] = []
  for (const line of frame.split('\n')) {
    if (line.startsWith('event:')) type = line.slice(6).trim()
    else if (line.startsWith('data:')) data.push(line.slice(line.startsWith('data: ') ? 6 : 5))
  }
  if (data.length === 0) return
  onEvent(type, JSON.parse(data.join('\n')) as unknown)
}
