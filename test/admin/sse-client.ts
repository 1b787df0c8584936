/**
 * A minimal server-sent events client for tests: the real HTTP stream, parsed by
 * `eventsource-parser` as the SDK parses its server's stream.
 */
import { request as httpRequest, type IncomingMessage } from 'node:http'
import { createParser } from 'eventsource-parser'

/**
 * One thing the stream said, in order: an event (`data`, with `event` and `id` as sent), a
 * comment line (`comment`, its text without the colon) or a `retry:` line (`retry`).
 */
export interface Frame {
  id?: string
  event?: string
  data?: string
  comment?: string
  retry?: number
}

/** Opens an SSE stream and collects parsed frames; `whenFrames` waits for a condition on them. */
export function openStream(url: string, headers: Record<string, string>) {
  const frames: Frame[] = []
  const waiters: (() => void)[] = []
  const add = (frame: Frame) => {
    frames.push(frame)
    for (const waiter of waiters.splice(0)) waiter()
  }
  const parser = createParser({
    onEvent: ({ id, event, data }) =>
      add({ ...(id === undefined ? {} : { id }), ...(event === undefined ? {} : { event }), data }),
    onComment: (comment) => add({ comment }),
    onRetry: (retry) => add({ retry }),
  })
  let response: IncomingMessage | undefined
  const request = httpRequest(url, { headers })
  const ready = new Promise<IncomingMessage>((resolve, reject) => {
    request.on('response', (res) => {
      response = res
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => parser.feed(chunk))
      resolve(res)
    })
    request.on('error', reject)
  })
  request.end()
  const whenFrames = async (predicate: (frames: Frame[]) => boolean) => {
    while (!predicate(frames)) await new Promise<void>((resolve) => waiters.push(resolve))
  }
  return {
    frames,
    ready,
    whenFrames,
    close: () => (response ? response.destroy() : request.destroy()),
  }
}
