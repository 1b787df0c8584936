/**
 * The socket of an SDK app's event stream has no idle timeout: Node's global agent would give
 * it one of 5 s, refreshed on every read (every change the app receives) and never used, since
 * a quiet stream is normal. The request otherwise goes out as before (`Connection: keep-alive`,
 * through the global agent).
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, expect, it } from 'vitest'
import { ServerClient } from '../../src/sdk/server-client.js'

const servers: Server[] = []
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
  }
})

it('opens the event stream on a socket without an idle timeout', async () => {
  let headers: IncomingHttpHeaders = {}
  const server = createServer((request, response) => {
    headers = request.headers
    response.writeHead(200, { 'content-type': 'text/event-stream', connection: 'close' })
    response.write('retry: 1000\n\n')
  })
  servers.push(server)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  const client = new ServerClient({
    server: `http://127.0.0.1:${port}/switchyard`,
    appId: 'payments',
    token: null,
    timeoutMs: 5000,
  })
  const abort = new AbortController()
  const response = await client.openStream(abort.signal)
  expect(response.statusCode).toBe(200)
  expect(response.socket.timeout ?? 0).toBe(0)
  expect(headers.connection).toBe('keep-alive')
  expect(headers.accept).toBe('text/event-stream')
  abort.abort()
})
