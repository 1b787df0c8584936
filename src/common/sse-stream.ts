/**
 * The request side of an SSE stream served by an {@link EventHub}: the `Last-Event-ID` a
 * reconnecting client sends, and the response headers every stream needs.
 */
import type { IncomingHttpHeaders, ServerResponse } from 'node:http'
import type { InvalidOption } from './sse-hub.js'

/**
 * The event id after which a reconnecting client resumes, or null for a new client. Throws
 * `invalid(message)` for anything but a non-negative integer.
 */
export function lastEventId(headers: IncomingHttpHeaders, invalid: InvalidOption): number | null {
  const header = headers['last-event-id']
  if (header === undefined || header === '') return null
  if (typeof header !== 'string' || !/^\d{1,15}$/.test(header)) {
    throw invalid('Last-Event-ID must be an event id (a non-negative integer).')
  }
  return Number(header)
}

/**
 * Writes the status line and headers of an event stream (no caching, no proxy buffering).
 *
 * With `untilClose`, the body is delimited by the end of the connection instead of chunked
 * (`Connection: close`, no `Transfer-Encoding`): each frame then goes out as one plain write of
 * its bytes, where chunked encoding adds a length line and a trailing CRLF, corks the socket and
 * flushes it on the next tick as a three-part `writev`. For a server fanning every change out
 * to many long-lived streams that is half the system time of each write. A stream never ends
 * but by closing, so nothing is lost: the connection is not reusable either way.
 */
export function writeStreamHead(response: ServerResponse, untilClose = false): void {
  if (untilClose) response.removeHeader('transfer-encoding')
  response.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache, no-transform',
    connection: untilClose ? 'close' : 'keep-alive',
    'x-accel-buffering': 'no',
  })
}

/**
 * Ends the answer to a HEAD request for an event stream right after its head; true when it
 * did (the caller then connects nothing). A HEAD answer has no body, so Node holds the head
 * back until `end()`: without this the client waited for ever while the request held a place
 * among the stream's clients.
 */
export function endHeadRequest(method: string, response: ServerResponse): boolean {
  if (method !== 'HEAD') return false
  response.end()
  return true
}
