/**
 * A minimal server-sent events client for tests: the real HTTP stream, parsed into frames by
 * the splitter the SDK reads its server with.
 */
import { request as httpRequest, type IncomingMessage } from 'node:http'
import { SseFrameSplitter } from '../../src/common/sse-frames.js'

/** One parsed server-sent event frame. */
export interface Frame {
  id?: string
  event?: string
  data?: string
  comment?: string
}

/** Opens an SSE stream and collects parsed frames; `whenFrames` waits for a condition on them. */
export function openStream(url: string, headers: Record<string, string>) {
  const frames: Frame[] = []
  const splitter = new SseFrameSplitter()
  let response: IncomingMessage | undefined
  const waiters: (() => void)[] = []
  const request = httpRequest(url, { headers })
  const ready = new Promise<IncomingMessage>((resolve, reject) => {
    request.on('response', (res) => {
      response = res
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => {
        splitter.push(chunk, ({ comments, ...fields }) => {
          const comment = comments.at(-1)
          frames.push(comment === undefined ? fields : { ...fields, comment })
          for (const waiter of waiters.splice(0)) waiter()
        })
      })
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
