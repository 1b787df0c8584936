/**
 * The SDK repeats a call the server turns away for now (429, 503) instead of failing: with
 * backoff and jitter, or after the server's Retry-After, both bounded.
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import Fastify from 'fastify'
import { afterEach, describe, expect, it } from 'vitest'
import { switchyardSdk } from '../../src/sdk/index.js'
import { MAX_RETRY_MS, retryDelay } from '../../src/sdk/retry.js'

const servers: Server[] = []
afterEach(async () => {
  for (const server of servers.splice(0)) await new Promise((resolve) => server.close(resolve))
})

/**
 * A fake switchyard server: the first two registrations and the first stream request are
 * answered 429 (with `Retry-After: 0`), then it behaves.
 */
async function flakyServer() {
  const seen: { method: string; url: string; status: number; authorization: string }[] = []
  let registrations = 0
  let streams = 0
  const server = createServer((request, response) => {
    const record = (status: number) =>
      seen.push({
        method: request.method ?? '',
        url: request.url ?? '',
        status,
        authorization: request.headers.authorization ?? '',
      })
    request.resume()
    request.on('end', () => {
      if (request.url?.startsWith('/switchyard/api/sdk/register')) {
        registrations += 1
        if (registrations <= 2) {
          record(429)
          response.writeHead(429, { 'content-type': 'application/json', 'retry-after': '0' })
          response.end(JSON.stringify({ error: { code: 'RATE_LIMITED', message: 'slow down' } }))
          return
        }
        record(200)
        response.writeHead(200, { 'content-type': 'application/json' })
        response.end(JSON.stringify({ states: [], vanished: [] }))
        return
      }
      if (request.url?.startsWith('/switchyard/api/sdk/events')) {
        streams += 1
        if (streams === 1) {
          record(503)
          response.writeHead(503, { 'content-type': 'application/json' })
          response.end(JSON.stringify({ error: { code: 'BACKEND_UNAVAILABLE', message: 'x' } }))
          return
        }
        record(200)
        response.writeHead(200, { 'content-type': 'text/event-stream' })
        const snapshot = {
          app_id: 'shop',
          routes: [],
          global_maintenance: {
            active: false,
            reason: '',
            exempt_paths: [],
            include_force_active: false,
          },
          service_maintenance: {
            active: false,
            reason: '',
            exempt_paths: [],
            include_force_active: false,
          },
          global_rl_policy: null,
          service_rl_policy: null,
          rl_policies: [],
          flags: [],
          segments: [],
        }
        response.write(`event: snapshot\ndata: ${JSON.stringify(snapshot)}\n\n`)
        return
      }
      record(404)
      response.writeHead(404).end()
    })
  })
  servers.push(server)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/switchyard`, seen }
}

describe('SDK retries', () => {
  it('registers after two 429 answers and opens its stream after a 503', async () => {
    const server = await flakyServer()
    const app = Fastify()
    await app.register(switchyardSdk, {
      server: server.url,
      appId: 'shop',
      token: 'syt_test-token',
      timeout: 5,
    })
    app.get('/pay', () => ({ ok: true }))
    try {
      await app.ready()
      expect(app.switchyardSdk.status).toBe('live')
      expect(
        server.seen.filter((call) => call.url.includes('/register')).map((call) => call.status),
      ).toEqual([429, 429, 200])
      expect(
        server.seen.filter((call) => call.url.includes('/events')).map((call) => call.status),
      ).toEqual([503, 200])
      expect(server.seen.every((call) => call.authorization === 'Bearer syt_test-token')).toBe(true)
    } finally {
      await app.close()
    }
  })

  it('waits with exponential backoff and jitter, or the server’s Retry-After, never beyond 30 s', () => {
    const low = () => 0
    const high = () => 1
    expect(retryDelay(0, null, 0, low)).toBe(250)
    expect(retryDelay(0, null, 0, high)).toBe(500)
    expect(retryDelay(3, null, 0, high)).toBe(4000)
    expect(retryDelay(3, null, 0, low)).toBe(2000)
    expect(retryDelay(20, null, 0, high)).toBe(MAX_RETRY_MS)
    expect(retryDelay(0, '2', 0, low)).toBe(2000)
    expect(retryDelay(0, '3600', 0, low)).toBe(MAX_RETRY_MS)
    expect(retryDelay(0, new Date(5000).toUTCString(), 1000, low)).toBe(4000)
    // A malformed Retry-After falls back to the backoff.
    expect(retryDelay(1, 'soon', 0, high)).toBe(1000)
  })
})
