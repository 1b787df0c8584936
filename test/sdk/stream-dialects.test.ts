/**
 * The SDK reads every form of the event-stream format, end to end: a small relay between an
 * SDK app and a real central server re-encodes each event of the server's stream as raw bytes
 * in one dialect — CRLF or CR-only line endings, frames ending in `\r\n\r\n`, comment lines,
 * `retry:` lines, multi-line `data:` (the JSON pretty-printed over several lines) — and splits
 * every frame across writes. The app must get its snapshot (status `live`, the declared and
 * server-side states enforced) and then a change made on the server.
 */
import {
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http'
import type { AddressInfo } from 'node:net'
import { createParser } from 'eventsource-parser'
import Fastify, { type FastifyInstance } from 'fastify'
import { afterEach, describe, expect, it } from 'vitest'
import { startServer, type RunningServer } from '../../src/cli/serve.js'
import { disabled, switchyardSdk } from '../../src/sdk/index.js'
import { until } from '../helpers/wait.js'

/** How the relay writes a frame. */
interface Dialect {
  /** The line ending. */
  eol: string
  /** The blank line that ends a frame (after the last line's own ending). */
  end: string
}

const DIALECTS: Record<string, Dialect> = {
  'CRLF line endings, frames ending in \\r\\n\\r\\n': { eol: '\r\n', end: '\r\n' },
  'CR-only line endings': { eol: '\r', end: '\r' },
  'LF lines, frames ending in \\r\\n': { eol: '\n', end: '\r\n' },
}

/** One event re-encoded: a comment, a `retry:` line, the type, the JSON over several lines. */
function encode(dialect: Dialect, type: string | undefined, data: string, id?: string): string {
  const lines = [': relayed', 'retry: 1500']
  if (id !== undefined) lines.push(`id: ${id}`)
  if (type !== undefined) lines.push(`event: ${type}`)
  for (const line of JSON.stringify(JSON.parse(data), null, 2).split('\n'))
    lines.push(`data: ${line}`)
  return lines.map((line) => line + dialect.eol).join('') + dialect.end
}

/** Writes `text` in two writes, cut in the middle (inside a line ending when there is one). */
function writeSplit(response: ServerResponse, text: string): void {
  const cut = text.indexOf('\r\n') >= 0 ? text.indexOf('\r\n') + 1 : Math.floor(text.length / 2)
  response.write(text.slice(0, cut))
  response.write(text.slice(cut))
}

/** A relay to `upstream` (an origin) that re-encodes the SDK event stream in `dialect`. */
async function relay(upstream: string, dialect: Dialect): Promise<Server> {
  const server = createServer((request, response) => {
    const upstreamRequest = httpRequest(
      `${upstream}${request.url ?? '/'}`,
      { method: request.method, headers: request.headers },
      (answer: IncomingMessage) => {
        response.writeHead(answer.statusCode ?? 502, answer.headers)
        const isStream = (answer.headers['content-type'] ?? '').startsWith('text/event-stream')
        if (!isStream) {
          answer.pipe(response)
          return
        }
        response.flushHeaders()
        const parser = createParser({
          onEvent: (event) =>
            writeSplit(response, encode(dialect, event.event, event.data, event.id)),
        })
        answer.setEncoding('utf8')
        answer.on('data', (chunk: string) => parser.feed(chunk))
        answer.on('end', () => response.end())
        response.on('close', () => answer.destroy())
      },
    )
    upstreamRequest.on('error', () => response.destroy())
    request.pipe(upstreamRequest)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return server
}

const closing: (() => Promise<unknown>)[] = []
afterEach(async () => {
  for (const close of closing.splice(0).reverse()) await close()
})

async function statusOf(url: string): Promise<number> {
  const response = await fetch(url)
  await response.arrayBuffer()
  return response.status
}

describe('the SDK reads every dialect of the event-stream format', () => {
  for (const [name, dialect] of Object.entries(DIALECTS)) {
    it(name, async () => {
      const central: RunningServer = await startServer({
        host: '127.0.0.1',
        port: 0,
        path: '/switchyard',
        env: { LOG_LEVEL: 'silent' },
      })
      closing.push(() => central.app.close())
      const origin = new URL(central.url).origin
      const proxy = await relay(origin, dialect)
      closing.push(
        () =>
          new Promise<void>((resolve) => {
            proxy.closeAllConnections()
            proxy.close(() => resolve())
          }),
      )
      const relayed = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}/switchyard`
      const app: FastifyInstance = Fastify()
      closing.push(() => app.close())
      await app.register(switchyardSdk, { server: relayed, appId: 'dialects', timeout: 10 })
      app.get('/pay', () => ({ ok: true }))
      app.get('/legacy', { onRequest: disabled({ reason: 'gone' }) }, () => ({ ok: true }))
      const url = await app.listen({ host: '127.0.0.1', port: 0 })

      // Listening means the snapshot arrived through the relay (startup waits for it).
      expect(app.switchyardSdk.status).toBe('live')
      expect(await statusOf(`${url}/pay`)).toBe(200)
      expect(await statusOf(`${url}/legacy`)).toBe(503)

      // A change on the server reaches the app as a re-encoded frame.
      const change = await fetch(`${central.url}/api/routes/disable`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ route: 'GET:/pay', service: 'dialects', reason: 'incident' }),
      })
      expect(change.status).toBe(200)
      await until(async () => (await statusOf(`${url}/pay`)) === 503)
      const blocked = await fetch(`${url}/pay`)
      expect(await blocked.json()).toMatchObject({
        error: { code: 'ROUTE_DISABLED', reason: 'incident' },
      })
    })
  }
})
