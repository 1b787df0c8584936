/**
 * Forward compatibility of multi-service mode, so a fleet can be upgraded one instance at a
 * time: an SDK app ignores the event types and fields a newer server adds and applies the rest;
 * the server accepts the fields a newer SDK adds and stores none of them; both sides name their
 * protocol version, and another major version is refused with a clear 400 while the app keeps
 * serving.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import type { FastifyInstance } from 'fastify'
import type { HttpMethod } from '../../src/core/route-key.js'
import { declaredState } from '../../src/core/route-state.js'
import { PROTOCOL_VERSION } from '../../src/sdk/wire.js'
import { recordingLogger } from '../helpers/logger.js'
import { api, memoryServeForFile, sdkApp, statusOf } from './helpers.js'

/** A route state the stub pushes. */
function disabledState(route: string, reason: string): Record<string, unknown> {
  const [method, path] = route.split(':') as [HttpMethod, string]
  return {
    ...declaredState({ route, method, path, service: 'shop' }, null),
    status: 'disabled',
    reason,
    since: new Date().toISOString(),
  }
}

const EMPTY_MAINTENANCE = {
  active: false,
  reason: '',
  include_force_active: false,
  exempt_paths: [],
}

/** One server-sent event frame. */
const frame = (type: string, data: unknown) => `event: ${type}\ndata: ${JSON.stringify(data)}\n\n`

/**
 * A central server stub: answers registrations and reports, and streams what the test pushes.
 * `refuse` set to a version makes it answer every call as a server of that version would.
 */
class StubServer {
  readonly protocols: (string | undefined)[] = []
  readonly streams = new Set<ServerResponse>()
  refuse: string | null = null
  private readonly server: Server

  constructor(private readonly snapshotExtra: Record<string, unknown> = {}) {
    this.server = createServer((request, response) => this.answer(request, response))
  }

  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve))
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`
  }

  push(type: string, data: unknown): void {
    for (const stream of this.streams) stream.write(frame(type, data))
  }

  async close(): Promise<void> {
    for (const stream of this.streams) stream.destroy()
    this.server.closeAllConnections()
    await new Promise<void>((resolve) => this.server.close(() => resolve()))
  }

  private answer(request: IncomingMessage, response: ServerResponse): void {
    const sent = request.headers['switchyard-protocol']
    this.protocols.push(typeof sent === 'string' ? sent : undefined)
    if (this.refuse !== null) {
      response.writeHead(400, {
        'content-type': 'application/json',
        'switchyard-protocol': this.refuse,
      })
      response.end(
        JSON.stringify({
          error: {
            code: 'SDK_PROTOCOL_UNSUPPORTED',
            message: `This server speaks SDK protocol ${this.refuse}.`,
            server_protocol: this.refuse,
            client_protocol: sent ?? null,
          },
        }),
      )
      return
    }
    const url = request.url ?? ''
    if (url.startsWith('/api/sdk/events')) {
      response.writeHead(200, { 'content-type': 'text/event-stream' })
      response.write(
        frame('snapshot', {
          app_id: 'shop',
          protocol: '1.9',
          routes: [],
          global_maintenance: EMPTY_MAINTENANCE,
          service_maintenance: EMPTY_MAINTENANCE,
          global_rl_policy: null,
          service_rl_policy: null,
          rl_policies: [],
          flags: [],
          segments: [],
          ...this.snapshotExtra,
        }),
      )
      this.streams.add(response)
      response.once('close', () => this.streams.delete(response))
      return
    }
    request.resume()
    response.writeHead(200, { 'content-type': 'application/json' })
    response.end(
      JSON.stringify(
        url.startsWith('/api/sdk/register')
          ? { states: [], vanished: [], future_answer: { a: 1 } }
          : { hits: 0, audit: 0 },
      ),
    )
  }
}

const cleanup: (() => Promise<unknown>)[] = []
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step()
})

async function stubAndApp(
  snapshotExtra: Record<string, unknown> = {},
  configure: (stub: StubServer) => void = () => undefined,
): Promise<{
  stub: StubServer
  app: FastifyInstance
  url: string
  logger: ReturnType<typeof recordingLogger>
}> {
  const stub = new StubServer(snapshotExtra)
  configure(stub)
  const server = await stub.listen()
  cleanup.push(() => stub.close())
  const logger = recordingLogger()
  const { app, url } = await sdkApp({ server, appId: 'shop', logger })
  cleanup.push(() => app.close())
  return { stub, app, url, logger }
}

describe('an SDK app reading a newer server', { timeout: 30_000 }, () => {
  it('applies the known part of each event, ignores unknown types and fields, logs each type once', async () => {
    const { stub, app, url, logger } = await stubAndApp({ future_section: { anything: [1, 2] } })
    expect(app.switchyardSdk.status).toBe('live')
    expect(stub.protocols.length).toBeGreaterThanOrEqual(2)
    expect(stub.protocols.every((sent) => sent === PROTOCOL_VERSION)).toBe(true)
    expect(await statusOf(url, '/pay')).toBe(200)

    // A type this version does not know, twice, and a known one with fields it does not know.
    stub.push('route_forecast', { service: 'shop', route: 'GET:/pay', at: 'tomorrow' })
    stub.push('route_forecast', { service: 'shop', route: 'GET:/search' })
    stub.push('route_state', {
      service: 'shop',
      route: 'GET:/pay',
      state: { ...disabledState('GET:/pay', 'incident'), severity: 'high' },
      trace_id: 'abc',
    })
    await expect.poll(() => statusOf(url, '/pay')).toBe(503)
    const body = (await (await fetch(`${url}/pay`)).json()) as { error: Record<string, unknown> }
    expect(body.error).toMatchObject({ code: 'ROUTE_DISABLED', reason: 'incident' })

    // Later known events still apply: the stream goes on.
    stub.push('route_forecast', { again: true })
    stub.push('route_state', { service: 'shop', route: 'GET:/pay', state: null })
    await expect.poll(() => statusOf(url, '/pay')).toBe(200)
    expect(app.switchyardSdk.status).toBe('live')

    const warnings = logger.messages('warn').filter((line) => line.includes('route_forecast'))
    expect(warnings).toHaveLength(1)
    expect(warnings[0]).toContain('unknown type "route_forecast" ignored')
    expect(logger.messages('error')).toEqual([])
  })
})

describe('an SDK app and a server of another major protocol version', { timeout: 30_000 }, () => {
  it('starts on its declared states, logs why, and connects once the server speaks its version', async () => {
    const { stub, app, url, logger } = await stubAndApp({}, (server) => {
      server.refuse = '2.0'
    })
    // Started although the server refused it (the default start): the declared states apply.
    expect(app.switchyardSdk.status).toBe('disconnected')
    expect(await statusOf(url, '/pay')).toBe(200)
    expect(await statusOf(url, '/legacy')).toBe(503)
    const refused = logger
      .messages('warn')
      .find((line) => line.includes('SDK_PROTOCOL_UNSUPPORTED'))
    expect(refused).toContain('another protocol version')
    expect(refused).toContain('2.0')

    // The server is rolled back to (or replaced by) one of the app's major: the app connects.
    stub.refuse = null
    await expect.poll(() => app.switchyardSdk.status, { timeout: 10_000 }).toBe('live')
    stub.push('route_state', {
      service: 'shop',
      route: 'GET:/pay',
      state: disabledState('GET:/pay', 'after upgrade'),
    })
    await expect.poll(() => statusOf(url, '/pay')).toBe(503)
  })
})

describe('the central server and SDKs of other versions', { timeout: 60_000 }, () => {
  const serve = memoryServeForFile()
  const call = (path: string, body: unknown, protocol?: string) =>
    fetch(`${serve.server.url}${path}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(protocol === undefined ? {} : { 'switchyard-protocol': protocol }),
      },
      body: JSON.stringify(body),
    })

  it('accepts fields a newer SDK adds to register and report bodies, and stores none of them', async () => {
    const token = await serve.token({ service: 'inventory' })
    const send = (path: string, body: unknown) =>
      fetch(`${serve.server.url}${path}`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          authorization: `Bearer ${token}`,
          'switchyard-protocol': '1.7',
        },
        body: JSON.stringify(body),
      })
    const registered = await send('/api/sdk/register', {
      app_id: 'inventory',
      sdk_features: ['batching'],
      routes: [
        {
          route: 'GET:/stock',
          status: 'disabled',
          reason: 'migrating',
          priority: 3,
          window: null,
        },
      ],
    })
    expect(registered.status).toBe(200)
    expect(registered.headers.get('switchyard-protocol')).toBe(PROTOCOL_VERSION)
    const routes = (await serve.call('GET', '/api/routes?service=inventory')).body.items
    expect(routes).toMatchObject([{ route: 'GET:/stock', status: 'disabled', reason: 'migrating' }])
    expect(routes[0]).not.toHaveProperty('priority')

    const reported = await send('/api/sdk/report', {
      app_id: 'inventory',
      batch_id: 'b-1',
      hits: [],
      audit: [
        {
          action: 'disable',
          route: 'GET:/stock',
          actor: 'ops',
          reason: 'compat check',
          previous_status: 'active',
          new_status: 'disabled',
          correlation_id: 'c-9',
        },
      ],
    })
    expect(reported.status).toBe(200)
    expect(await reported.json()).toEqual({ hits: 0, audit: 1 })
    const audit = (await serve.call('GET', '/api/audit?service=inventory')).body
    const entry = (audit.items as Record<string, unknown>[]).find(
      (item) => item.reason === 'compat check',
    )
    expect(entry).toMatchObject({ action: 'disable', route: 'GET:/stock', service: 'inventory' })
    expect(entry).not.toHaveProperty('correlation_id')
  })

  it('serves any minor and no header, and refuses another major with SDK_PROTOCOL_UNSUPPORTED', async () => {
    const token = await serve.token({ service: 'catalog' })
    const register = (protocol?: string) =>
      fetch(`${serve.server.url}/api/sdk/register`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          authorization: `Bearer ${token}`,
          ...(protocol === undefined ? {} : { 'switchyard-protocol': protocol }),
        },
        body: JSON.stringify({
          app_id: 'catalog',
          routes: [{ route: 'GET:/c', status: 'active' }],
        }),
      })
    for (const protocol of [undefined, '1.0', '1.1', '1.99']) {
      const answer = await register(protocol)
      expect(answer.status, String(protocol)).toBe(200)
      expect(answer.headers.get('switchyard-protocol')).toBe(PROTOCOL_VERSION)
    }
    const before = (await serve.call('GET', '/api/routes?service=catalog')).body
    for (const protocol of ['2.0', '0.9', 'one', '1', '1.1.1', '']) {
      const answer = await register(protocol)
      expect(answer.status, protocol).toBe(400)
      expect(answer.headers.get('switchyard-protocol')).toBe(PROTOCOL_VERSION)
      const body = (await answer.json()) as { error: Record<string, unknown> }
      expect(body.error).toMatchObject({
        code: 'SDK_PROTOCOL_UNSUPPORTED',
        server_protocol: PROTOCOL_VERSION,
        client_protocol: protocol,
      })
      expect(body.error.message).toContain('same major version')
    }
    // The stream and the report are refused the same way, and nothing changed.
    const stream = await fetch(`${serve.server.url}/api/sdk/events?app_id=catalog`, {
      headers: { authorization: `Bearer ${token}`, 'switchyard-protocol': '2.0' },
    })
    expect(stream.status).toBe(400)
    expect(((await stream.json()) as { error: { code: string } }).error.code).toBe(
      'SDK_PROTOCOL_UNSUPPORTED',
    )
    const report = await fetch(`${serve.server.url}/api/sdk/report`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${token}`,
        'switchyard-protocol': '3.1',
      },
      body: JSON.stringify({ app_id: 'catalog', hits: [], audit: [] }),
    })
    expect(report.status).toBe(400)
    expect((await serve.call('GET', '/api/routes?service=catalog')).body).toEqual(before)
    // Credentials are checked first: no token is a 401, whatever the version.
    expect((await call('/api/sdk/register', { app_id: 'catalog', routes: [] }, '2.0')).status).toBe(
      401,
    )
  })

  it('sends its version in the snapshot', async () => {
    const token = await serve.token({ service: 'search' })
    const answer = await api(serve.server.url, token, 'POST', '/api/sdk/register', {
      app_id: 'search',
      routes: [],
    })
    expect(answer.status).toBe(200)
    const controller = new AbortController()
    const stream = await fetch(`${serve.server.url}/api/sdk/events?app_id=search`, {
      headers: { authorization: `Bearer ${token}` },
      signal: controller.signal,
    })
    expect(stream.headers.get('switchyard-protocol')).toBe(PROTOCOL_VERSION)
    const reader = stream.body!.getReader()
    let text = ''
    const decoder = new TextDecoder()
    while (!/event: snapshot\ndata: .*\n/.test(text))
      text += decoder.decode((await reader.read()).value, { stream: true })
    const data = JSON.parse(/event: snapshot\ndata: (.*)\n/.exec(text)![1]!) as { protocol: string }
    expect(data.protocol).toBe(PROTOCOL_VERSION)
    await reader.cancel()
    controller.abort()
  })
})
