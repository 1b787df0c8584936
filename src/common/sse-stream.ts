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

/** Writes the status line and headers of an event stream (no caching, no proxy buffering). */
export function writeStreamHead(response: ServerResponse): void {
  response.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache, no-transform',
    connection: 'keep-alive',
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
