import { createHmac, timingSafeEqual } from 'node:crypto'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { createEngine, type Engine } from '../../src/create-engine.js'
import { ValidationError } from '../../src/core/errors.js'
import {
  chatFormatter,
  SIGNATURE_HEADER,
  TIMESTAMP_HEADER,
  WebhookDispatcher,
} from '../../src/core/webhooks.js'
import { memoryStore } from '../../src/stores/memory.js'
import { redisStore } from '../../src/stores/redis.js'
import type { Store } from '../../src/stores/types.js'
import { FakeClock } from '../helpers/clock.js'
import { until } from '../helpers/wait.js'
import { deleteKeys, redisTestsEnabled, TEST_REDIS_URL, testPrefix } from '../helpers/redis.js'
import { pushMessage } from '../helpers/logger.js'

/**
 * The verification recipe of docs/audit-and-webhooks.md: the HMAC of `<timestamp>.<body>`,
 * compared in constant time, and a timestamp within 5 minutes.
 */
function verifySwitchyardWebhook(
  request: { headers: IncomingMessage['headers']; body: string },
  secret: string,
  toleranceSeconds = 300,
): boolean {
  const timestamp = request.headers['x-switchyard-timestamp']
  const signature = request.headers['x-switchyard-signature']
  if (typeof timestamp !== 'string' || typeof signature !== 'string') return false
  if (!/^\d+$/.test(timestamp)) return false
  if (Math.abs(Date.now() / 1000 - Number(timestamp)) > toleranceSeconds) return false
  const expected = `sha256=${createHmac('sha256', secret).update(`${timestamp}.${request.body}`).digest('hex')}`
  const a = Buffer.from(signature)
  const b = Buffer.from(expected)
  return a.length === b.length && timingSafeEqual(a, b)
}

interface Received {
  headers: IncomingMessage['headers']
  body: string
}

/** A real HTTP receiver on loopback; `respond` decides each answer. */
async function receiver(
  respond: (n: number, res: ServerResponse) => void | Promise<void> = (_, res) => {
    res.end('ok')
  },
) {
  const received: Received[] = []
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') })
      void respond(received.length, res)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`
  servers.push(server)
  return { url, received }
}

const servers: Server[] = []
const engines: Engine[] = []
afterEach(async () => {
  await Promise.all(engines.splice(0).map((engine) => engine.close()))
  for (const server of servers.splice(0)) server.closeAllConnections()
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))))
})

function logs() {
  const warn: string[] = []
  const error: string[] = []
  return {
    warn,
    error,
    logger: { warn: pushMessage(warn), error: pushMessage(error) },
  }
}

async function engineWith(
  options: { store?: Store; logger?: ReturnType<typeof logs>['logger'] } = {},
) {
  const engine = createEngine({
    store: options.store ?? memoryStore(),
    clock: new FakeClock(),
    service: 'shop',
    ...(options.logger ? { logger: options.logger } : {}),
  })
  engines.push(engine)
  engine.registerRoute('GET', '/payments')
  await engine.start()
  return engine
}

describe('webhooks', () => {
  it('POSTs the audit entry with its action as event, signed with the secret', async () => {
    const { url, received } = await receiver()
    const engine = await engineWith()
    engine.addWebhook(url, { secret: 's3cret' })
    await engine.disable('GET:/payments', { reason: 'fraud', actor: 'alice', platform: 'cli' })
    await engine.webhooksIdle()
    expect(received).toHaveLength(1)
    const [request] = received as [Received]
    const [entry] = (await engine.getAuditLog()).items
    expect(JSON.parse(request.body)).toEqual({ event: 'disable', ...entry })
    expect(request.headers['content-type']).toBe('application/json')
    const timestamp = String(request.headers[TIMESTAMP_HEADER.toLowerCase()])
    expect(Math.abs(Number(timestamp) - Date.now() / 1000)).toBeLessThan(60)
    const expected = createHmac('sha256', 's3cret')
      .update(`${timestamp}.${request.body}`)
      .digest('hex')
    expect(request.headers[SIGNATURE_HEADER.toLowerCase()]).toBe(`sha256=${expected}`)
    expect(verifySwitchyardWebhook(request, 's3cret')).toBe(true)
    expect(verifySwitchyardWebhook({ ...request, body: `${request.body} ` }, 's3cret')).toBe(false)
    const stale = { ...request, headers: { ...request.headers } }
    const old = String(Number(timestamp) - 600)
    stale.headers[TIMESTAMP_HEADER.toLowerCase()] = old
    stale.headers[SIGNATURE_HEADER.toLowerCase()] = `sha256=${createHmac('sha256', 's3cret')
      .update(`${old}.${request.body}`)
      .digest('hex')}`
    expect(verifySwitchyardWebhook(stale, 's3cret')).toBe(false)
  })

  it('never follows a redirect, and does not retry one', async () => {
    const target = await receiver()
    const { url, received } = await receiver((_, res) => {
      res.statusCode = 307
      res.setHeader('location', target.url)
      res.end()
    })
    const log = logs()
    const engine = await engineWith({ logger: log.logger })
    engine.addWebhook(url, { secret: 's3cret', retryDelay: 0.01 })
    await engine.disable('GET:/payments')
    await engine.webhooksIdle()
    expect(received).toHaveLength(1)
    expect(target.received).toHaveLength(0)
    expect(log.error.join()).toMatch(/redirect not followed/)
  })

  it('keeps at most maxConcurrentDeliveries requests in flight', async () => {
    let open = 0
    let most = 0
    const held: ServerResponse[] = []
    const { url, received } = await receiver((_, res) => {
      open++
      most = Math.max(most, open)
      held.push(res)
    })
    const dispatcher = new WebhookDispatcher(logs().logger, { maxConcurrentDeliveries: 3 })
    dispatcher.add(url)
    for (let i = 0; i < 10; i++)
      dispatcher.dispatch({
        id: `e${i}`,
        timestamp: new Date().toISOString(),
        route: '/x',
        service: null,
        action: 'enable',
        actor: 'system',
        platform: '',
        reason: '',
        previous_status: null,
        new_status: null,
      })
    // The limit is reached before any response ends (a request still on its way when the first
    // one was answered would leave the peak below the limit without a fault of the dispatcher).
    await until(() => held.length === 3)
    for (let served = 0; served < 10; served++) {
      await until(() => held.length > 0)
      const res = held.shift() as ServerResponse
      open--
      res.end('ok')
    }
    await dispatcher.idle()
    expect(received).toHaveLength(10)
    expect(most).toBe(3)
  })

  it('the chat formatter escapes Slack markup in every field', () => {
    const { text } = chatFormatter({
      event: 'disable',
      id: '1',
      timestamp: '2026-11-21T12:00:00.000+00:00',
      route: 'GET:/a<b>',
      service: 'shop',
      action: 'disable',
      actor: '<@U123>',
      platform: 'cli',
      reason: '<!channel> fraud & <https://evil.example|click>',
      previous_status: 'active',
      new_status: 'disabled',
    })
    expect(text).not.toMatch(/[<>]/)
    expect(text).toContain('&lt;!channel&gt; fraud &amp; &lt;https://evil.example|click&gt;')
    expect(text).toContain('GET:/a&lt;b&gt;')
    expect(text).toContain('&lt;@U123&gt; via cli')
  })

  it('sends no signature without a secret, and stops after removal', async () => {
    const { url, received } = await receiver()
    const engine = await engineWith()
    const remove = engine.addWebhook(url)
    await engine.disable('GET:/payments')
    await engine.webhooksIdle()
    remove()
    await engine.enable('GET:/payments')
    await engine.webhooksIdle()
    expect(received).toHaveLength(1)
    expect(received[0]!.headers[SIGNATURE_HEADER.toLowerCase()]).toBeUndefined()
  })

  it('formats with the chat formatter and with async custom formatters', async () => {
    const chat = await receiver()
    const custom = await receiver()
    const engine = await engineWith()
    engine.addWebhook(chat.url, { formatter: chatFormatter })
    engine.addWebhook(custom.url, {
      formatter: async (payload) => {
        await new Promise((resolve) => setTimeout(resolve, 5))
        return { kind: payload.event, where: payload.route }
      },
    })
    await engine.disable('GET:/payments', { reason: 'fraud', actor: 'alice', platform: 'cli' })
    await engine.webhooksIdle()
    const text = (JSON.parse(chat.received[0]!.body) as { text: string }).text
    expect(text).toContain(
      '*disable* GET:/payments [shop] (ACTIVE → DISABLED) — fraud by alice via cli',
    )
    expect(JSON.parse(custom.received[0]!.body)).toEqual({
      kind: 'disable',
      where: 'GET:/payments',
    })
  })

  it('retries failed deliveries with backoff, then succeeds', async () => {
    const { url, received } = await receiver((n, res) => {
      res.statusCode = n < 3 ? 500 : 200
      res.end()
    })
    const log = logs()
    const engine = await engineWith({ logger: log.logger })
    engine.addWebhook(url, { retryDelay: 0.01 })
    await engine.disable('GET:/payments')
    await engine.webhooksIdle()
    expect(received).toHaveLength(3)
    expect(new Set(received.map((r) => r.body)).size).toBe(1) // the same body each time
    expect(log.warn).toEqual([
      expect.stringMatching(/attempt 1 failed \(HTTP 500\); retrying in 10 ms/),
      expect.stringMatching(/attempt 2 failed \(HTTP 500\); retrying in 20 ms/),
    ])
    expect(log.error).toEqual([])
  })

  it('gives up after the retries, logs it, and the change stands', async () => {
    const { url, received } = await receiver((_, res) => {
      res.statusCode = 503
      res.end()
    })
    const log = logs()
    const engine = await engineWith({ logger: log.logger })
    engine.addWebhook(url, { retries: 2, retryDelay: 0 })
    const [state] = await engine.disable('GET:/payments')
    await engine.webhooksIdle()
    expect(state!.status).toBe('disabled')
    expect(received).toHaveLength(3)
    expect(log.error).toEqual([
      expect.stringMatching(/disable GET:\/payments not delivered after 3 attempts \(HTTP 503\)/),
    ])
  })

  it('times out a receiver that never answers', async () => {
    const { url } = await receiver(() => undefined) // never responds
    const log = logs()
    const engine = await engineWith({ logger: log.logger })
    engine.addWebhook(url, { timeout: 0.05, retries: 0 })
    await engine.disable('GET:/payments')
    await engine.webhooksIdle()
    expect(log.error).toEqual([expect.stringMatching(/not delivered after 1 attempts/)])
  })

  it('does not hold the change while a slow receiver answers', async () => {
    let release!: () => void
    const held = new Promise<void>((resolve) => (release = resolve))
    const { url, received } = await receiver(async (_, res) => {
      await held
      res.end('late')
    })
    const engine = await engineWith()
    engine.addWebhook(url)
    let answered = false
    void held.then(() => (answered = true))
    const [state] = await engine.disable('GET:/payments')
    expect(state!.status).toBe('disabled')
    expect(answered).toBe(false) // the change completed while the receiver still holds its answer
    await until(() => received.length === 1)
    release()
    await engine.webhooksIdle()
  })

  it('logs a formatter that throws and still makes the change', async () => {
    const { url, received } = await receiver()
    const log = logs()
    const engine = await engineWith({ logger: log.logger })
    engine.addWebhook(url, {
      formatter: () => {
        throw new Error('boom')
      },
    })
    const [state] = await engine.disable('GET:/payments')
    await engine.webhooksIdle()
    expect(state!.status).toBe('disabled')
    expect(received).toEqual([])
    expect(log.error).toEqual([expect.stringMatching(/formatter failed/)])
  })

  it.each([
    ['a relative URL', '/hook', {}],
    ['an ftp URL', 'ftp://example.com/x', {}],
    ['an empty secret', 'http://127.0.0.1/x', { secret: '' }],
    ['a formatter that is not a function', 'http://127.0.0.1/x', { formatter: 'text' }],
    ['a negative timeout', 'http://127.0.0.1/x', { timeout: -1 }],
    ['fractional retries', 'http://127.0.0.1/x', { retries: 1.5 }],
  ])('rejects %s and adds nothing', async (_, url, options) => {
    const { received } = await receiver()
    const engine = await engineWith()
    expect(() => engine.addWebhook(url, options as never)).toThrow(ValidationError)
    await engine.disable('GET:/payments')
    await engine.webhooksIdle()
    expect(received).toEqual([])
  })
})

const redisEnabled = await redisTestsEnabled('test/core/webhooks.test.ts')

describe.skipIf(!redisEnabled)('webhooks with several instances sharing Redis', () => {
  const prefix = testPrefix('webhooks')
  afterAll(() => deleteKeys(prefix))

  it('delivers each change once, from the instance that made it', async () => {
    const { url, received } = await receiver()
    const a = await engineWith({ store: redisStore({ url: TEST_REDIS_URL, prefix }) })
    const b = await engineWith({ store: redisStore({ url: TEST_REDIS_URL, prefix }) })
    const bSawAudit: string[] = []
    b.onChange((event) => {
      if (event.type === 'audit') bSawAudit.push(event.entry.action)
    })
    a.addWebhook(url)
    b.addWebhook(url)
    await a.disable('GET:/payments')
    await until(() => bSawAudit.length === 1) // b heard of the entry too
    await Promise.all([a.webhooksIdle(), b.webhooksIdle()])
    expect(received.map((r) => (JSON.parse(r.body) as { event: string }).event)).toEqual([
      'disable',
    ])
  })
})
