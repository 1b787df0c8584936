import type { ServerResponse } from 'node:http'
import type { FastifyInstance } from 'fastify'
import { afterEach, describe, expect, it } from 'vitest'
import { EventHub } from '../../src/common/sse-hub.js'
import { FlagService } from '../../src/flags/service.js'
import { booleanFlag } from '../flags/helpers.js'
import { ADMIN, buildAdmin, login } from './helpers.js'
import { openStream } from './sse-client.js'

let apps: FastifyInstance[] = []
afterEach(async () => {
  await Promise.all(apps.map((app) => app.close()))
  apps = []
})

async function listening(options: Parameters<typeof buildAdmin>[0] = {}) {
  const built = await buildAdmin({ auth: ADMIN, ...options })
  apps.push(built.app)
  const address = await built.app.listen({ host: '127.0.0.1', port: 0 })
  const token = await login(built.app)
  return { ...built, url: `${address}/switchyard/api/events`, token }
}

describe('GET /api/events', () => {
  it('needs authentication', async () => {
    const { url } = await listening()
    const stream = openStream(url, {})
    const response = await stream.ready
    expect(response.statusCode).toBe(401)
    stream.close()
  })

  it('streams changes with ids and types, and resumes after a reconnect with Last-Event-ID', async () => {
    const { url, token, engine } = await listening()
    const auth = { authorization: `Bearer ${token}` }
    const first = openStream(url, auth)
    const response = await first.ready
    expect(response.statusCode).toBe(200)
    expect(response.headers['content-type']).toMatch(/^text\/event-stream/)

    await engine.disable('GET:/payments', { reason: 'x', actor: 'admin', platform: 'cli' })
    await first.whenFrames((frames) => frames.some((f) => f.event === 'audit'))
    const routeFrame = first.frames.find((f) => f.event === 'route_state')!
    expect(JSON.parse(routeFrame.data!)).toMatchObject({
      service: 'default',
      route: 'GET:/payments',
      state: { status: 'disabled', reason: 'x' },
    })
    const auditFrame = first.frames.find((f) => f.event === 'audit')!
    expect(JSON.parse(auditFrame.data!)).toMatchObject({ action: 'disable', actor: 'admin' })
    expect(Number(auditFrame.id)).toBeGreaterThan(Number(routeFrame.id))
    const lastSeen = auditFrame.id!
    first.close()

    // Changes while disconnected are replayed on resume, and nothing seen before.
    await engine.enableGlobalMaintenance({ reason: 'upgrade' })
    await engine.enableServiceMaintenance('billing', { reason: 'inv' })
    await engine.audit.flush()
    const second = openStream(url, { ...auth, 'last-event-id': lastSeen })
    await second.ready
    await second.whenFrames(
      (frames) =>
        frames.filter((f) => f.event === 'audit').length >= 2 &&
        frames.some((f) => f.event === 'service_maintenance'),
    )
    const ids = second.frames.filter((f) => f.id !== undefined).map((f) => Number(f.id))
    expect(Math.min(...ids)).toBe(Number(lastSeen) + 1)
    expect(ids).toEqual([...ids].sort((a, b) => a - b))
    const types = second.frames.map((f) => f.event).filter(Boolean)
    expect(types).toContain('global_maintenance')
    expect(types).toContain('service_maintenance')
    const global = second.frames.find((f) => f.event === 'global_maintenance')!
    expect(JSON.parse(global.data!).config).toMatchObject({ active: true, reason: 'upgrade' })
    second.close()
  })

  it('streams rate-limit policy changes, blocked requests and live flag evaluations', async () => {
    const { url, token, engine } = await listening()
    const stream = openStream(url, { authorization: `Bearer ${token}` })
    await stream.ready
    await engine.rateLimits.setRateLimitPolicy({
      path: '/orders',
      method: 'GET',
      limit: '1/minute',
    })
    await engine.rateLimits.global.set({ limit: '100/minute' })
    const slot = engine.registerRoute('GET', '/orders')
    const request = { method: 'GET', url: '/orders', headers: {}, ip: '10.0.0.1' }
    await engine.decide(slot, request)
    expect(await engine.decide(slot, request)).toMatchObject({ statusCode: 429 })
    await engine.saveFlag(booleanFlag('beta'))
    engine.flags.evaluate('beta', { key: 'u1' })
    await stream.whenFrames((frames) =>
      ['rl_policy', 'global_rl_policy', 'rl_hit', 'flag_evaluation'].every((type) =>
        frames.some((f) => f.event === type),
      ),
    )
    const policy = stream.frames.find((f) => f.event === 'rl_policy')!
    expect(JSON.parse(policy.data!)).toMatchObject({
      route: 'GET:/orders',
      policy: { limit: '1/minute' },
    })
    const hit = stream.frames.find((f) => f.event === 'rl_hit')!
    expect(JSON.parse(hit.data!)).toMatchObject({
      path: '/orders',
      method: 'GET',
      limit: '1/minute',
    })
    const evaluation = stream.frames.find((f) => f.event === 'flag_evaluation')!
    expect(JSON.parse(evaluation.data!)).toMatchObject({ flag_key: 'beta', context_key: 'u1' })
    stream.close()
  })

  it('ends open streams when the app closes', async () => {
    const { app, url, token } = await listening()
    const stream = openStream(url, { authorization: `Bearer ${token}` })
    const response = await stream.ready
    const ended = new Promise<void>((resolve) => response.once('end', resolve))
    await app.close()
    await ended
  })

  it('rejects a malformed Last-Event-ID', async () => {
    const { app, token } = await listening()
    const response = await app.inject({
      url: '/switchyard/api/events',
      headers: { authorization: `Bearer ${token}`, 'last-event-id': 'abc' },
    })
    expect(response.statusCode).toBe(400)
    expect(response.json().error.code).toBe('VALIDATION_ERROR')
  })

  it('sends keepalive comments at the configured interval', async () => {
    const { url, token } = await listening({ keepaliveInterval: 0.02 })
    const stream = openStream(url, { authorization: `Bearer ${token}` })
    await stream.ready
    await stream.whenFrames((frames) => frames.some((f) => f.comment === 'keepalive'))
    stream.close()
  })
})

describe('flag events', () => {
  it('streams flag and segment changes', async () => {
    const flags = new FlagService()
    await flags.start()
    const { url, token } = await listening({ flags })
    const stream = openStream(url, { authorization: `Bearer ${token}` })
    await stream.ready
    await flags.saveSegment({ key: 'beta', name: 'Beta' })
    await flags.saveFlag(booleanFlag('checkout'))
    await stream.whenFrames((frames) => frames.some((f) => f.event === 'flag'))
    const segment = stream.frames.find((f) => f.event === 'segment')!
    expect(JSON.parse(segment.data!)).toMatchObject({ key: 'beta', segment: { name: 'Beta' } })
    const flag = stream.frames.find((f) => f.event === 'flag')!
    expect(JSON.parse(flag.data!)).toMatchObject({ key: 'checkout', flag: { enabled: true } })
    expect(Number(flag.id)).toBeGreaterThan(Number(segment.id))
    stream.close()
  })
})

describe('EventHub', () => {
  function fakeClient(writableLength = 0) {
    const written: string[] = []
    const client = {
      writableLength,
      destroyed: false,
      writableEnded: false,
      write: (text: string) => written.push(text),
      destroy() {
        this.destroyed = true
      },
      end() {
        this.writableEnded = true
      },
    }
    return { client, written, response: client as unknown as ServerResponse }
  }

  it('drops a slow client without affecting the others', () => {
    const hub = new EventHub({ clientBufferBytes: 100 })
    const slow = fakeClient(0)
    const fast = fakeClient(0)
    hub.connect(slow.response, null)
    hub.connect(fast.response, null)
    hub.publish({ type: 'audit', data: { n: 1 } })
    slow.client.writableLength = 1000
    hub.publish({ type: 'audit', data: { n: 2 } })
    expect(slow.client.destroyed).toBe(true)
    expect(hub.clientCount).toBe(1)
    hub.publish({ type: 'audit', data: { n: 3 } })
    expect(fast.written.filter((t) => t.startsWith('id:'))).toHaveLength(3)
    hub.close()
    expect(fast.client.writableEnded).toBe(true)
  })

  it('keeps a bounded buffer for resume', () => {
    const hub = new EventHub({ eventBufferSize: 3 })
    for (let n = 1; n <= 5; n++) hub.publish({ type: 'audit', data: { n } })
    const late = fakeClient()
    hub.connect(late.response, 0)
    expect(late.written.filter((t) => t.startsWith('id:')).map((t) => t.split('\n')[0])).toEqual([
      'id: 3',
      'id: 4',
      'id: 5',
    ])
    hub.close()
    expect(() => new EventHub({ eventBufferSize: 0 })).toThrow(/eventBufferSize/)
  })

  it('runs a feed only while a client is connected', () => {
    const hub = new EventHub()
    const log: string[] = []
    const remove = hub.whileConnected(() => {
      log.push('start')
      return () => log.push('stop')
    })
    expect(log).toEqual([])
    const first = hub.connect(fakeClient().response, null)
    const second = hub.connect(fakeClient().response, null)
    expect(log).toEqual(['start'])
    first()
    expect(log).toEqual(['start'])
    second()
    expect(log).toEqual(['start', 'stop'])
    const slow = fakeClient()
    hub.connect(slow.response, null)
    expect(log).toEqual(['start', 'stop', 'start'])
    // A client dropped by the hub itself stops the feed too.
    slow.client.destroyed = true
    hub.publish({ type: 'audit', data: {} })
    expect(log).toEqual(['start', 'stop', 'start', 'stop'])
    remove()
    hub.connect(fakeClient().response, null)
    expect(log).toHaveLength(4)
    hub.close()
  })

  it('leaves live evaluations unrecorded while nobody listens to the admin stream', async () => {
    const flags = new FlagService()
    await flags.start()
    const { app } = await buildAdmin({ flags })
    apps.push(app)
    expect(flags.stream.active).toBe(false)
    const address = await app.listen({ host: '127.0.0.1', port: 0 })
    const stream = openStream(`${address}/switchyard/api/events`, {})
    await stream.ready
    await stream.whenFrames((frames) => frames.length > 0)
    expect(flags.stream.active).toBe(true)
    stream.close()
    await new Promise<void>((resolve) => {
      const check = () => (flags.stream.active ? setTimeout(check, 5) : resolve())
      check()
    })
    expect(flags.stream.active).toBe(false)
  })
})
