/**
 * A minimal server-sent events client for tests: the real HTTP stream, parsed into frames.
 */
import { request as httpRequest, type IncomingMessage } from 'node:http'

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
  let buffer = ''
  let response: IncomingMessage | undefined
  const waiters: (() => void)[] = []
  const request = httpRequest(url, { headers })
  const ready = new Promise<IncomingMessage>((resolve, reject) => {
    request.on('response', (res) => {
      response = res
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => {
        buffer += chunk
        let index
        while ((index = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, index)
          buffer = buffer.slice(index + 2)
          const frame: Frame = {}
          for (const line of block.split('\n')) {
            if (line.startsWith(':')) frame.comment = line.slice(1).trim()
            else {
              const [key, ...rest] = line.split(': ')
              if (key === 'id' || key === 'event' || key === 'data') frame[key] = rest.join(': ')
            }
          }
          frames.push(frame)
          for (const waiter of waiters.splice(0)) waiter()
        }
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
