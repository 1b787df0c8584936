/**
 * Who an OFREP caller is and what it may see: the client address behind proxies (rate-limit
 * buckets), the per-key cap on change streams, and evaluation keys limited to some flags.
 */
import type { FastifyInstance } from 'fastify'
import { afterEach, describe, expect, it } from 'vitest'
import type { OfrepOptions } from '../../src/admin/ofrep/index.js'
import { booleanFlag } from '../flags/helpers.js'
import {
  API,
  buildAdmin,
  closeAdmins,
  closeLater,
  createEvaluationKey,
  ofrepAdminWith,
} from './helpers.js'
import { openStream, type Frame } from './sse-client.js'

afterEach(closeAdmins)

const OFREP = '/switchyard/ofrep/v1/evaluate/flags'

function ofrepAdmin(ofrep: OfrepOptions = {}, trustedProxies?: string[]) {
  return ofrepAdminWith({
    ofrep,
    ...(trustedProxies === undefined ? {} : { trustedProxies }),
    flags: [
      booleanFlag('checkout-banner', { tags: ['shop'] }),
      booleanFlag('checkout-express'),
      booleanFlag('theme', { tags: ['web'] }),
      booleanFlag('billing-v2', { tags: ['internal'] }),
    ],
  })
}

/** Creates a key through the API; answers the raw response. */
function createKey(app: FastifyInstance, token: string, body: Record<string, unknown>) {
  return app.inject({
    method: 'POST',
    url: `${API}/evaluation-keys`,
    headers: { authorization: `Bearer ${token}` },
    payload: body,
  })
}

function evaluate(
  app: FastifyInstance,
  credential: string,
  url: string,
  headers: Record<string, string> = {},
  remoteAddress?: string,
) {
  return app.inject({
    method: 'POST',
    url,
    headers: { authorization: `Bearer ${credential}`, ...headers },
    payload: { context: { targetingKey: 'u-1' } },
    ...(remoteAddress === undefined ? {} : { remoteAddress }),
  })
}

const messagesOf = (frames: Frame[]) => frames.filter((frame) => frame.event === 'message')

describe('OFREP client address', () => {
  it('gives each client behind a trusted proxy its own bucket', async () => {
    // 1/minute is a bucket of 2 (bursts up to twice the count).
    const { app, token } = await ofrepAdmin({ rateLimit: '1/minute' })
    const { key } = await createEvaluationKey(app, 'web', token)
    const from = (address: string) =>
      evaluate(app, key, `${OFREP}/theme`, { 'x-forwarded-for': address })
    expect((await from('203.0.113.1')).statusCode).toBe(200)
    expect((await from('203.0.113.1')).statusCode).toBe(200)
    expect((await from('203.0.113.1')).statusCode).toBe(429)
    // Same key, same proxy (the loopback peer of inject), another client.
    expect((await from('203.0.113.2')).statusCode).toBe(200)
  })

  it('ignores the X-Forwarded-For of a peer that is not a trusted proxy', async () => {
    const { app, token } = await ofrepAdmin({ rateLimit: '1/minute' }, ['198.51.100.0/24'])
    const { key } = await createEvaluationKey(app, 'web', token)
    const statuses = []
    for (const claimed of ['203.0.113.1', '203.0.113.2', '203.0.113.3']) {
      const response = await evaluate(
        app,
        key,
        `${OFREP}/theme`,
        { 'x-forwarded-for': claimed },
        '192.0.2.9',
      )
      statuses.push(response.statusCode)
    }
    expect(statuses).toEqual([200, 200, 429])
    // A trusted proxy's header is followed.
    const proxied = await evaluate(
      app,
      key,
      `${OFREP}/theme`,
      { 'x-forwarded-for': '203.0.113.1' },
      '198.51.100.7',
    )
    expect(proxied.statusCode).toBe(200)
  })
})

describe('ofrep.maxStreamsPerKey', () => {
  it('answers 503 to a key at its own cap while another key still opens a stream', async () => {
    const { app, token } = await ofrepAdmin({ maxStreams: 10, maxStreamsPerKey: 1 })
    const address = await app.listen({ host: '127.0.0.1', port: 0 })
    const uriOf = async (key: string) =>
      (await evaluate(app, key, OFREP)).json().eventStreams[0].endpoint.requestUri as string
    const one = await createEvaluationKey(app, 'one', token)
    const two = await createEvaluationKey(app, 'two', token)
    const first = openStream(`${address}${await uriOf(one.key)}`, {})
    expect((await first.ready).statusCode).toBe(200)
    const again = openStream(`${address}${await uriOf(one.key)}`, {})
    const refused = await again.ready
    expect(refused.statusCode).toBe(503)
    expect(refused.headers['retry-after']).toBe('30')
    const other = openStream(`${address}${await uriOf(two.key)}`, {})
    expect((await other.ready).statusCode).toBe(200)
    // A closed stream gives its slot back.
    first.close()
    let reopened = openStream(`${address}${await uriOf(one.key)}`, {})
    // The server sees the close asynchronously: retry until the slot is free.
    for (let attempt = 0; (await reopened.ready).statusCode === 503 && attempt < 500; attempt++) {
      reopened.close()
      await new Promise((resolve) => setImmediate(resolve))
      reopened = openStream(`${address}${await uriOf(one.key)}`, {})
    }
    expect((await reopened.ready).statusCode).toBe(200)
    for (const stream of [again, other, reopened]) stream.close()
  })

  it('counts per client address in open mode', async () => {
    const { app } = await buildAdmin({ ofrep: { maxStreams: 10, maxStreamsPerKey: 1 } })
    closeLater(app)
    const address = await app.listen({ host: '127.0.0.1', port: 0 })
    const bulk = await app.inject({ method: 'POST', url: OFREP, payload: {} })
    const uri = bulk.json().eventStreams[0].endpoint.requestUri as string
    const from = (client: string) => openStream(`${address}${uri}`, { 'x-forwarded-for': client })
    const first = from('203.0.113.1')
    expect((await first.ready).statusCode).toBe(200)
    const second = from('203.0.113.1')
    expect((await second.ready).statusCode).toBe(503)
    const other = from('203.0.113.2')
    expect((await other.ready).statusCode).toBe(200)
    for (const stream of [first, second, other]) stream.close()
  })

  it('defaults to a tenth of maxStreams, at least 1, and rejects a bad value at startup', async () => {
    const { resolveOfrepOptions } = await import('../../src/admin/ofrep/index.js')
    expect(resolveOfrepOptions({}).maxStreamsPerKey).toBe(100)
    expect(resolveOfrepOptions({ maxStreams: 5 }).maxStreamsPerKey).toBe(1)
    expect(resolveOfrepOptions({ maxStreams: 0 }).maxStreamsPerKey).toBe(1)
    for (const bad of [0, -1, 1.5, '3']) {
      expect(() => resolveOfrepOptions({ maxStreamsPerKey: bad as number })).toThrow(
        /ofrep\.maxStreamsPerKey/,
      )
    }
  })
})

describe('evaluation keys limited to flags', () => {
  it('are created with patterns, listed with them, and see only those flags', async () => {
    const { app, token } = await ofrepAdmin()
    const created = await createKey(app, token, {
      name: 'shop',
      flags: ['checkout-*', 'tag:web', ' checkout-*'],
    })
    expect(created.statusCode).toBe(201)
    expect(created.json().flags).toEqual(['checkout-*', 'tag:web'])
    const { key, id } = created.json<{ key: string; id: string }>()
    const list = await app.inject({
      method: 'GET',
      url: `${API}/evaluation-keys`,
      headers: { authorization: `Bearer ${token}` },
    })
    expect(list.json().items.find((item: { id: string }) => item.id === id).flags).toEqual([
      'checkout-*',
      'tag:web',
    ])

    for (const flag of ['checkout-banner', 'checkout-express', 'theme']) {
      expect((await evaluate(app, key, `${OFREP}/${flag}`)).statusCode, flag).toBe(200)
    }
    const bulk = await evaluate(app, key, OFREP)
    expect(bulk.json().flags.map((flag: { key: string }) => flag.key)).toEqual([
      'checkout-banner',
      'checkout-express',
      'theme',
    ])
    // An unlimited key still sees everything.
    const all = await createEvaluationKey(app, 'all', token)
    expect((await evaluate(app, all.key, OFREP)).json().flags).toHaveLength(4)
  })

  it('answer a flag outside the set exactly as a flag that does not exist', async () => {
    const { app, token } = await ofrepAdmin()
    const { key } = (await createKey(app, token, { name: 'shop', flags: ['checkout-*'] })).json()
    const hidden = await evaluate(app, key, `${OFREP}/billing-v2`)
    const missing = await evaluate(app, key, `${OFREP}/billing-v3`)
    expect(hidden.statusCode).toBe(404)
    expect(missing.statusCode).toBe(404)
    expect(hidden.json()).toEqual({
      key: 'billing-v2',
      errorCode: 'FLAG_NOT_FOUND',
      errorDetails: 'flag billing-v2 not found',
    })
    expect(hidden.body.replaceAll('billing-v2', 'X')).toBe(
      missing.body.replaceAll('billing-v3', 'X'),
    )
    expect(hidden.headers['content-type']).toBe(missing.headers['content-type'])
    expect(hidden.headers['content-length']).toBe(missing.headers['content-length'])
  })

  it('match at each evaluation: flags created or retagged later fall in or out', async () => {
    const { app, engine, token } = await ofrepAdmin()
    const { key } = (await createKey(app, token, { name: 'web', flags: ['tag:web'] })).json()
    expect((await evaluate(app, key, `${OFREP}/search`)).statusCode).toBe(404)
    await engine.saveFlag(booleanFlag('search', { tags: ['web'] }))
    expect((await evaluate(app, key, `${OFREP}/search`)).statusCode).toBe(200)
    await engine.saveFlag(booleanFlag('search', { tags: ['backend'] }))
    expect((await evaluate(app, key, `${OFREP}/search`)).statusCode).toBe(404)
    expect(
      (await evaluate(app, key, OFREP)).json().flags.map((f: { key: string }) => f.key),
    ).toEqual(['theme'])
  })

  it('keep the bulk ETag when a flag outside the set changes, and change it for one inside', async () => {
    const { app, engine, token } = await ofrepAdmin()
    const { key } = (await createKey(app, token, { name: 'shop', flags: ['checkout-*'] })).json()
    const first = String((await evaluate(app, key, OFREP)).headers.etag)
    await engine.flags.disableFlag('billing-v2')
    await engine.saveFlag(booleanFlag('secret-new-thing'))
    const second = await evaluate(app, key, OFREP, { 'if-none-match': first })
    expect(second.statusCode).toBe(304)
    await engine.flags.disableFlag('checkout-banner')
    const third = await evaluate(app, key, OFREP, { 'if-none-match': first })
    expect(third.statusCode).toBe(200)
    expect(String(third.headers.etag)).not.toBe(first)
  })

  it('hear on their change stream of changes to their flags only', async () => {
    const { app, engine, token } = await ofrepAdmin()
    const address = await app.listen({ host: '127.0.0.1', port: 0 })
    const { key } = (await createKey(app, token, { name: 'shop', flags: ['checkout-*'] })).json()
    const uri = (await evaluate(app, key, OFREP)).json().eventStreams[0].endpoint.requestUri
    const stream = openStream(`${address}${uri}`, {})
    expect((await stream.ready).statusCode).toBe(200)
    await engine.flags.disableFlag('billing-v2')
    await engine.flags.disableFlag('theme')
    await engine.flags.disableFlag('checkout-express')
    await stream.whenFrames((frames) => messagesOf(frames).length > 0)
    const bulk = await evaluate(app, key, OFREP)
    const fingerprint = /^"([^.]+)\./.exec(String(bulk.headers.etag))![1]
    // Had the other flags' changes been announced, the first event would carry an older etag.
    const messages = messagesOf(stream.frames).map((frame) => JSON.parse(frame.data!) as object)
    expect(messages).toHaveLength(1)
    expect(messages[0]).toMatchObject({ type: 'refetchEvaluation', etag: fingerprint })
    // And the since of the key's stream URL is its own fingerprint.
    expect(
      new URL(bulk.json().eventStreams[0].endpoint.requestUri, address).searchParams.get('since'),
    ).toBe(fingerprint)
    stream.close()
  })

  it('refuse bad patterns with 400 VALIDATION_ERROR and store nothing', async () => {
    const { app, token } = await ofrepAdmin()
    const bad: unknown[] = [
      [],
      [''],
      ['  '],
      ['check*out'],
      ['*-banner'],
      ['a**'],
      ['tag:'],
      ['tag:we*'],
      ['x'.repeat(201)],
      Array.from({ length: 101 }, (_, n) => `flag-${n}`),
      [1],
      'checkout-*',
    ]
    for (const flags of bad) {
      const response = await createKey(app, token, { name: 'bad', flags })
      expect(response.statusCode, JSON.stringify(flags)).toBe(400)
      expect(response.json().error.code, JSON.stringify(flags)).toBe('VALIDATION_ERROR')
    }
    const list = await app.inject({
      method: 'GET',
      url: `${API}/evaluation-keys`,
      headers: { authorization: `Bearer ${token}` },
    })
    expect(list.json().total).toBe(0)
    // The limits themselves are accepted.
    const edge = await createKey(app, token, {
      name: 'edge',
      flags: ['x'.repeat(200), ...Array.from({ length: 99 }, (_, n) => `flag-${n}`)],
    })
    expect(edge.statusCode).toBe(201)
  })
})
