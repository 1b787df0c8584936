/**
 * The frames switchyard writes on a server-sent event stream (`text/event-stream`). Reading
 * one is left to `eventsource-parser` (see sdk/sse-reader.ts), which follows the whole format.
 */

/**
 * One event as a frame: `event: <type>`, `data: <data as JSON>` (JSON has no raw newline, so
 * one data line), preceded by `id: <id>` when given.
 */
export function eventFrame(type: string, data: unknown, id?: number): string {
  const frame = `event: ${type}\ndata: ${JSON.stringify(data)}\n\n`
  return id === undefined ? frame : `id: ${id}\n${frame}`
}
