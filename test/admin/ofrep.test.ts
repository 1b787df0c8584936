/**
 * The OFREP endpoints at the protocol level: status codes and bodies of the OpenFeature
 * Remote Evaluation Protocol, the bulk ETag, CORS, the rate limit, the change stream and the
 * `flag_track` events. (The stock OFREP clients are exercised in test/ofrep/.)
 */
import type { FastifyInstance } from 'fastify'
import { afterEach, describe, expect, it } from 'vitest'
import { FlagService } from '../../src/flags/service.js'
import type { OfrepOptions } from '../../src/admin/ofrep/index.js'
import { booleanFlag, storedFlag } from '../flags/helpers.js'
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

const theme = {
  key: 'theme',
  name: 'Theme',
  type: 'string',
  variations: [
    { name: 'light', value: 'light' },
    { name: 'dark', value: 'dark' },
  ],
  off_variation: 'light',
  fallthrough: 'light',
  metadata: { owner: 'web-team', tier: 2, beta: false },
  rules: [
    {
      id: 'staff-dark',
      clauses: [{ attribute: 'key', operator: 'in_segment', values: ['staff'] }],
      variation: 'dark',
    },
  ],
}

const split = booleanFlag('split', {
  fallthrough: [
    { variation: 'on', weight: 50_000 },
    { variation: 'off', weight: 50_000 },
  ],
})

/** An admin app with flags, a logged-in token and an evaluation key. */
async function ofrepAdmin(ofrep: OfrepOptions = {}) {
  const { app, engine, token } = await ofrepAdminWith({
    ofrep,
    segments: [{ key: 'staff', name: 'Staff', included: ['emp-1'] }],
    flags: [
      theme,
      split,
      {
        key: 'limits',
        name: 'Limits',
        type: 'json',
        variations: [
          { name: 'basic', value: { rps: 10 } },
          { name: 'pro', value: { rps: 100 } },
        ],
        off_variation: 'basic',
        fallthrough: 'pro',
        enabled: false,
      },
    ],
  })
  const { key, id } = await createEvaluationKey(app, 'web', token)
  const post = (
    url: string,
    payload: unknown,
    headers: Record<string, string> = {},
    credential = key,
  ) =>
    app.inject({
      method: 'POST',
      url,
      headers: {
        authorization: `Bearer ${credential}`,
        // A raw string is sent as it is (malformed JSON), with the JSON media type.
        ...(typeof payload === 'string' ? { 'content-type': 'application/json' } : {}),
        ...headers,
      },
      payload: payload as string | object,
    })
  return { app, engine, token, key, keyId: id, post }
}

describe('POST {admin}/ofrep/v1/evaluate/flags/{key}', () => {
  it("answers 200 with key, value, reason, variant and the flag's metadata", async () => {
    const { post } = await ofrepAdmin()
    const staff = await post(`${OFREP}/theme`, { context: { targetingKey: 'emp-1' } })
    expect(staff.statusCode).toBe(200)
    expect(staff.headers['content-type']).toMatch(/^application\/json/)
    expect(staff.json()).toEqual({
      key: 'theme',
      value: 'dark',
      reason: 'TARGETING_MATCH',
      variant: 'dark',
      metadata: { owner: 'web-team', tier: 2, beta: false },
    })
    expect((await post(`${OFREP}/theme`, { context: { targetingKey: 'u' } })).json()).toMatchObject(
      {
        value: 'light',
        reason: 'DEFAULT',
        metadata: { owner: 'web-team', tier: 2, beta: false },
      },
    )
    expect((await post(`${OFREP}/split`, { context: { targetingKey: 'u' } })).json()).toMatchObject(
      {
        reason: 'SPLIT',
      },
    )
    expect((await post(`${OFREP}/limits`, {})).json()).toEqual({
      key: 'limits',
      value: { rps: 10 },
      reason: 'DISABLED',
      variant: 'basic',
      metadata: {},
    })
  })

  it("adds switchyard's reason, rule and prerequisite under reserved keys with detailedMetadata", async () => {
    const { post, engine } = await ofrepAdmin({ detailedMetadata: true })
    expect((await post(`${OFREP}/theme`, { context: { targetingKey: 'emp-1' } })).json()).toEqual({
      key: 'theme',
      value: 'dark',
      reason: 'TARGETING_MATCH',
      variant: 'dark',
      metadata: {
        owner: 'web-team',
        tier: 2,
        beta: false,
        'switchyard.reason': 'RULE_MATCH',
        'switchyard.rule_id': 'staff-dark',
      },
    })
    await engine.saveFlag(
      booleanFlag('gated', { prerequisites: [{ flag_key: 'limits', variation: 'pro' }] }),
    )
    expect((await post(`${OFREP}/gated`, { context: { targetingKey: 'u' } })).json()).toEqual({
      key: 'gated',
      value: false,
      reason: 'DISABLED',
      variant: 'off',
      metadata: {
        'switchyard.reason': 'PREREQUISITE_FAIL',
        'switchyard.prerequisite_key': 'limits',
      },
    })
  })

  it('answers 404 FLAG_NOT_FOUND for an unknown flag', async () => {
    const { post } = await ofrepAdmin()
    const response = await post(`${OFREP}/nope`, { context: {} })
    expect(response.statusCode).toBe(404)
    expect(response.json()).toEqual({
      key: 'nope',
      errorCode: 'FLAG_NOT_FOUND',
      errorDetails: 'flag nope not found',
    })
  })

  it('answers 400 PARSE_ERROR, INVALID_CONTEXT and TARGETING_KEY_MISSING', async () => {
    const { post } = await ofrepAdmin()
    const cases = [
      ['{"context": ', 'PARSE_ERROR'],
      [[1, 2], 'PARSE_ERROR'],
      [{ context: 'user-1' }, 'INVALID_CONTEXT'],
      [{ context: [] }, 'INVALID_CONTEXT'],
      [{ context: { targetingKey: 42 } }, 'INVALID_CONTEXT'],
      [{ context: { plan: 'pro' } }, 'TARGETING_KEY_MISSING'],
    ] as const
    for (const [payload, errorCode] of cases) {
      const response = await post(`${OFREP}/split`, payload)
      expect(response.statusCode, JSON.stringify(payload)).toBe(400)
      expect(response.json()).toMatchObject({ key: 'split', errorCode })
      expect(response.json().errorDetails).toEqual(expect.any(String))
    }
  })

  it('answers 500 GENERAL for an evaluation error', async () => {
    const { post, engine } = await ofrepAdmin()
    // A prerequisite chain deeper than the evaluator follows (11 links) is an evaluation
    // error. Saving refuses such a chain, so it arrives as replicated records.
    for (let n = 0; n <= 11; n++) {
      const prerequisites = n === 0 ? [] : [{ flag_key: `chain-${n - 1}`, variation: 'on' }]
      engine.flags.applyRemote({
        type: 'flag',
        key: `chain-${n}`,
        flag: storedFlag(`chain-${n}`, { prerequisites }),
      })
    }
    const response = await post(`${OFREP}/chain-11`, { context: { targetingKey: 'u' } })
    expect(response.statusCode).toBe(500)
    expect(response.json()).toMatchObject({ key: 'chain-11', errorCode: 'GENERAL' })
  })

  it('needs a credential: none is 401, an admin token works too', async () => {
    const { app, token, post } = await ofrepAdmin()
    const anonymous = await app.inject({ method: 'POST', url: `${OFREP}/theme`, payload: {} })
    expect(anonymous.statusCode).toBe(401)
    expect(anonymous.json().errorDetails).toMatch(/Authentication required/)
    const admin = await post(`${OFREP}/theme`, {}, {}, token)
    expect(admin.statusCode).toBe(200)
  })

  it('answers 503 with Retry-After until the flags are loaded', async () => {
    const flags = new FlagService()
    const { app } = await buildAdmin({ flags })
    closeLater(app)
    const response = await app.inject({ method: 'POST', url: `${OFREP}/theme`, payload: {} })
    expect(response.statusCode).toBe(503)
    expect(response.headers['retry-after']).toBe('5')
    await flags.saveFlag(booleanFlag('f'))
    await flags.start()
    const ready = await app.inject({ method: 'POST', url: `${OFREP}/f`, payload: {} })
    expect(ready.statusCode).toBe(200)
  })
})

describe('POST {admin}/ofrep/v1/evaluate/flags (bulk)', () => {
  it('evaluates every flag, with per-flag errors', async () => {
    const { post } = await ofrepAdmin()
    const response = await post(OFREP, { context: { plan: 'pro' } })
    expect(response.statusCode).toBe(200)
    expect(response.json().flags).toEqual([
      {
        key: 'limits',
        value: { rps: 10 },
        reason: 'DISABLED',
        variant: 'basic',
        metadata: {},
      },
      {
        key: 'split',
        errorCode: 'TARGETING_KEY_MISSING',
        errorDetails: 'a percentage rollout needs a context key',
      },
      {
        key: 'theme',
        value: 'light',
        reason: 'DEFAULT',
        variant: 'light',
        metadata: { owner: 'web-team', tier: 2, beta: false },
      },
    ])
  })

  it('answers a bad body with 400 and the error code, without evaluating', async () => {
    const { post, engine } = await ofrepAdmin()
    const seen: unknown[] = []
    engine.flags.stream.subscribe((batch) => seen.push(...batch))
    for (const [payload, errorCode] of [
      ['not json', 'PARSE_ERROR'],
      [{ context: 3 }, 'INVALID_CONTEXT'],
    ] as const) {
      const response = await post(OFREP, payload)
      expect(response.statusCode).toBe(400)
      expect(response.json()).toEqual({ errorCode, errorDetails: expect.any(String) })
    }
    await new Promise((resolve) => setImmediate(resolve))
    expect(seen).toEqual([])
  })

  it('sends an ETag and answers 304 to If-None-Match until a flag or segment changes', async () => {
    const { post, engine } = await ofrepAdmin()
    const context = { context: { targetingKey: 'emp-1' } }
    const first = await post(OFREP, context)
    const etag = String(first.headers.etag)
    expect(etag).toMatch(/^"[\w-]+\.[\w-]+"$/)
    const same = await post(OFREP, context, { 'if-none-match': etag })
    expect(same.statusCode).toBe(304)
    expect(same.body).toBe('')
    expect((await post(OFREP, context, { 'if-none-match': `"x", W/${etag}` })).statusCode).toBe(304)
    // Another context has another ETag.
    const other = await post(OFREP, { context: { targetingKey: 'u' } }, { 'if-none-match': etag })
    expect(other.statusCode).toBe(200)
    // A flag change changes it.
    await engine.flags.disableFlag('theme')
    const changed = await post(OFREP, context, { 'if-none-match': etag })
    expect(changed.statusCode).toBe(200)
    expect(changed.headers.etag).not.toBe(etag)
    expect(changed.json().flags[2]).toMatchObject({ key: 'theme', reason: 'DISABLED' })
    // So does a segment change, which alters evaluations without touching a flag.
    const etag2 = String(changed.headers.etag)
    await engine.flags.saveSegment({ key: 'staff', name: 'Staff', included: [] })
    const afterSegment = await post(OFREP, context, { 'if-none-match': etag2 })
    expect(afterSegment.statusCode).toBe(200)
    expect(afterSegment.headers.etag).not.toBe(etag2)
  })

  it('lists its change stream for an evaluation key, not for an admin token', async () => {
    const { post, token, keyId } = await ofrepAdmin()
    const withKey = (await post(OFREP, {})).json()
    expect(withKey.eventStreams).toEqual([
      {
        type: 'sse',
        endpoint: {
          requestUri: expect.stringMatching(
            new RegExp(`^/switchyard/ofrep/stream\\?token=${keyId}\\.`),
          ),
        },
      },
    ])
    expect((await post(OFREP, {}, {}, token)).json().eventStreams).toBeUndefined()
  })
})

describe('CORS (ofrep.cors)', () => {
  const preflight = (
    app: FastifyInstance,
    origin: string,
    headers = 'authorization, content-type',
  ) =>
    app.inject({
      method: 'OPTIONS',
      url: OFREP,
      headers: {
        origin,
        'access-control-request-method': 'POST',
        'access-control-request-headers': headers,
      },
    })

  it('answers preflights of allowed origins and exposes ETag on responses, errors included', async () => {
    const { app, post } = await ofrepAdmin({ cors: ['https://shop.example.com'] })
    const allowed = await preflight(
      app,
      'https://shop.example.com',
      'authorization, content-type, if-none-match',
    )
    expect(allowed.statusCode).toBe(204)
    expect(allowed.headers).toMatchObject({
      'access-control-allow-origin': 'https://shop.example.com',
      'access-control-allow-methods': 'POST',
      'access-control-allow-headers': 'authorization, content-type, if-none-match',
      vary: 'Origin',
    })
    const response = await post(OFREP, {}, { origin: 'https://shop.example.com' })
    expect(response.headers['access-control-allow-origin']).toBe('https://shop.example.com')
    expect(response.headers['access-control-expose-headers']).toBe('ETag, Retry-After')
    const unauthorised = await post(
      `${OFREP}/theme`,
      {},
      { origin: 'https://shop.example.com' },
      'syk_wrong',
    )
    expect(unauthorised.statusCode).toBe(401)
    expect(unauthorised.headers['access-control-allow-origin']).toBe('https://shop.example.com')
  })

  it('refuses other origins, other headers, and preflights of other admin routes', async () => {
    const { app, post } = await ofrepAdmin({ cors: ['https://shop.example.com'] })
    const stranger = await preflight(app, 'https://evil.example.com')
    expect(stranger.statusCode).toBe(403)
    expect(stranger.headers['access-control-allow-origin']).toBeUndefined()
    expect((await preflight(app, 'https://shop.example.com', 'x-custom')).statusCode).toBe(403)
    const response = await post(OFREP, {}, { origin: 'https://evil.example.com' })
    expect(response.headers['access-control-allow-origin']).toBeUndefined()
    const admin = await app.inject({
      method: 'OPTIONS',
      url: `${API}/flags`,
      headers: { origin: 'https://shop.example.com', 'access-control-request-method': 'POST' },
    })
    expect(admin.statusCode).not.toBe(204)
    expect(admin.headers['access-control-allow-origin']).toBeUndefined()
  })

  it('allows no origin by default, any origin with "*", and rejects malformed origins at startup', async () => {
    const closed = await ofrepAdmin()
    expect((await preflight(closed.app, 'https://shop.example.com')).statusCode).toBe(403)
    const open = await ofrepAdmin({ cors: ['*'] })
    const any = await preflight(open.app, 'https://anything.example')
    expect(any.headers['access-control-allow-origin']).toBe('*')
    await expect(
      buildAdmin({ ofrep: { cors: ['https://shop.example.com/path'] } }),
    ).rejects.toThrow(/ofrep\.cors/)
  })
})

describe('rate limit (ofrep.rateLimit)', () => {
  it('answers 429 with Retry-After per caller, and leaves other callers alone', async () => {
    const { post, token } = await ofrepAdmin({ rateLimit: '2/minute' })
    const statuses = []
    for (let n = 0; n < 5; n++) statuses.push((await post(`${OFREP}/theme`, {})).statusCode)
    expect(statuses).toEqual([200, 200, 200, 200, 429])
    const limited = await post(OFREP, {})
    expect(limited.statusCode).toBe(429)
    expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1)
    expect(limited.json().errorDetails).toMatch(/Too many OFREP requests/)
    expect((await post(`${OFREP}/theme`, {}, {}, token)).statusCode).toBe(200)
  })

  it('rejects a malformed limit at startup', async () => {
    await expect(buildAdmin({ ofrep: { rateLimit: 'lots' } })).rejects.toThrow(/ofrep\.rateLimit/)
  })
})

describe('GET {admin}/ofrep/stream', () => {
  it('tells a key holder to re-fetch when flags change, and ends at revocation', async () => {
    const { app, post, engine, token, keyId } = await ofrepAdmin()
    const address = await app.listen({ host: '127.0.0.1', port: 0 })
    const uri = (await post(OFREP, {})).json().eventStreams[0].endpoint.requestUri as string
    const stream = openStream(`${address}${uri}`, {})
    const response = await stream.ready
    expect(response.statusCode).toBe(200)
    expect(response.headers['content-type']).toMatch(/^text\/event-stream/)
    await engine.flags.disableFlag('theme')
    await engine.flags.enableFlag('split')
    await stream.whenFrames((frames) => frames.some((frame) => frame.event === 'message'))
    const message = stream.frames.find((frame) => frame.event === 'message')!
    const data = JSON.parse(message.data!)
    expect(data).toEqual({
      type: 'refetchEvaluation',
      etag: expect.any(String),
      lastModified: expect.any(Number),
    })
    const bulk = await post(OFREP, {})
    expect(String(bulk.headers.etag).startsWith(`"${data.etag}.`)).toBe(true)
    const ended = new Promise((resolve) => response.once('end', resolve))
    await app.inject({
      method: 'DELETE',
      url: `${API}/evaluation-keys/${keyId}`,
      headers: { authorization: `Bearer ${token}` },
    })
    await ended
  })

  it('refuses a missing, forged or revoked stream token', async () => {
    const { app, post } = await ofrepAdmin()
    const address = await app.listen({ host: '127.0.0.1', port: 0 })
    const uri = (await post(OFREP, {})).json().eventStreams[0].endpoint.requestUri as string
    const token = new URL(uri, address).searchParams.get('token')!
    const forged = uri.replace(encodeURIComponent(token), `${token.slice(0, -4)}AAAA`)
    expect(forged).not.toBe(uri)
    for (const path of ['/switchyard/ofrep/stream', forged, '/switchyard/ofrep/stream?token=x']) {
      const stream = openStream(`${address}${path}`, {})
      expect((await stream.ready).statusCode, path).toBe(401)
      stream.close()
    }
  })

  it('carries the fingerprint its bulk answer was computed from (since), in open mode too', async () => {
    const { post, engine } = await ofrepAdmin()
    const first = await post(OFREP, {})
    const uri = streamUri(first)
    expect(uri).toMatch(/^\/switchyard\/ofrep\/stream\?token=[^&]+&since=[\w-]+$/)
    expect(sinceOf(uri)).toBe(fingerprintOf(first))
    await engine.flags.disableFlag('theme')
    const second = await post(OFREP, {})
    expect(sinceOf(streamUri(second))).toBe(fingerprintOf(second))
    expect(sinceOf(streamUri(second))).not.toBe(sinceOf(uri))

    const { app } = await buildAdmin({})
    closeLater(app)
    const open = await app.inject({ method: 'POST', url: OFREP, payload: {} })
    expect(streamUri(open)).toBe(`/switchyard/ofrep/stream?since=${fingerprintOf(open)}`)
  })

  it('tells a stream opened with an out-of-date since to re-fetch at once, and that stream only', async () => {
    const { app, post, engine } = await ofrepAdmin()
    const address = await app.listen({ host: '127.0.0.1', port: 0 })
    const current = openStream(`${address}${streamUri(await post(OFREP, {}))}`, {})
    expect((await current.ready).statusCode).toBe(200)
    const stale = await post(OFREP, {})
    const uri = streamUri(stale)
    // The change the page would miss: after its bulk answer, before its stream attaches.
    await engine.flags.disableFlag('theme')
    const now = fingerprintOf(await post(OFREP, {}))
    expect(now).not.toBe(fingerprintOf(stale))
    // The broadcast of that change reaches the stream already open, and only that.
    await current.whenFrames((frames) => messagesOf(frames).length > 0)
    const late = openStream(`${address}${uri}`, {})
    expect((await late.ready).statusCode).toBe(200)
    await late.whenFrames((frames) => messagesOf(frames).length > 0)
    const [first] = messagesOf(late.frames)
    expect(first!.id).toBeUndefined()
    expect(JSON.parse(first!.data!)).toEqual({
      type: 'refetchEvaluation',
      etag: now,
      lastModified: expect.any(Number),
    })
    // Nobody else heard of the late stream's catching up: the next change is the next event.
    await engine.flags.enableFlag('theme')
    await current.whenFrames((frames) => messagesOf(frames).length > 1)
    await late.whenFrames((frames) => messagesOf(frames).length > 1)
    expect(messagesOf(current.frames)).toHaveLength(2)
    expect(messagesOf(late.frames)).toHaveLength(2)
    current.close()
    late.close()
  })

  it('sends nothing extra to a stream opened with the current since, or without one', async () => {
    const { app, post, engine } = await ofrepAdmin()
    const address = await app.listen({ host: '127.0.0.1', port: 0 })
    const uri = streamUri(await post(OFREP, {}))
    const withSince = openStream(`${address}${uri}`, {})
    const without = openStream(`${address}${uri.replace(/&since=.*$/, '')}`, {})
    expect((await withSince.ready).statusCode).toBe(200)
    expect((await without.ready).statusCode).toBe(200)
    await engine.flags.disableFlag('theme')
    const now = fingerprintOf(await post(OFREP, {}))
    // An event sent at connection would come before this change's, so it would be first.
    for (const stream of [withSince, without]) {
      await stream.whenFrames((frames) => messagesOf(frames).length > 0)
      const messages = messagesOf(stream.frames)
      expect(messages).toHaveLength(1)
      expect(JSON.parse(messages[0]!.data!)).toMatchObject({ etag: now })
      stream.close()
    }
  })

  it('treats any since but the current fingerprint as out of date, and refuses an overlong one', async () => {
    const { app, post } = await ofrepAdmin()
    const address = await app.listen({ host: '127.0.0.1', port: 0 })
    const bulk = await post(OFREP, {})
    const base = streamUri(bulk).replace(/&since=.*$/, '')
    const garbled = ['', 'x', '%00%FF%C3', encodeURIComponent('"ü"\n\ndata: x'), 'A'.repeat(64)]
    for (const since of garbled) {
      const stream = openStream(`${address}${base}&since=${since}`, {})
      expect((await stream.ready).statusCode, since).toBe(200)
      await stream.whenFrames((frames) => messagesOf(frames).length > 0)
      expect(JSON.parse(messagesOf(stream.frames)[0]!.data!), since).toMatchObject({
        type: 'refetchEvaluation',
        etag: fingerprintOf(bulk),
      })
      stream.close()
    }
    for (const query of [
      `since=${'A'.repeat(65)}`,
      `since=${'A'.repeat(10_000)}`,
      'since=a&since=b',
    ]) {
      const refused = openStream(`${address}${base}&${query}`, {})
      const response = await refused.ready
      expect(response.statusCode, query).toBe(400)
      refused.close()
    }
  })

  it('answers 503 past ofrep.maxStreams', async () => {
    const { app, post } = await ofrepAdmin({ maxStreams: 1 })
    const address = await app.listen({ host: '127.0.0.1', port: 0 })
    const uri = (await post(OFREP, {})).json().eventStreams[0].endpoint.requestUri as string
    const first = openStream(`${address}${uri}`, {})
    expect((await first.ready).statusCode).toBe(200)
    const second = openStream(`${address}${uri}`, {})
    expect((await second.ready).statusCode).toBe(503)
    first.close()
    second.close()
  })
})

/** The change stream URL of a bulk answer. */
function streamUri(bulk: { json: () => { eventStreams: { endpoint: { requestUri: string } }[] } }) {
  return bulk.json().eventStreams[0]!.endpoint.requestUri
}

/** The `since` of a stream URL. */
const sinceOf = (uri: string) => new URL(uri, 'http://localhost').searchParams.get('since')

/** The flag-set fingerprint a bulk answer was computed from (its ETag is `"<fingerprint>.…"`). */
const fingerprintOf = (bulk: { headers: Record<string, unknown> }) =>
  /^"([^.]+)\./.exec(String(bulk.headers.etag))![1]

/** The `message` frames (refetch events) of a stream. */
const messagesOf = (frames: Frame[]) => frames.filter((frame) => frame.event === 'message')

describe('flag_track on the admin event stream', () => {
  it('carries OpenFeature tracking events, bounded', async () => {
    const { app, engine, token } = await ofrepAdmin()
    const address = await app.listen({ host: '127.0.0.1', port: 0 })
    const stream = openStream(`${address}${API}/events`, { authorization: `Bearer ${token}` })
    expect((await stream.ready).statusCode).toBe(200)
    engine.flags.track('checkout-completed', 'user-1', {
      value: 42.5,
      plan: 'pro',
      nested: { dropped: true },
      long: 'x'.repeat(500),
    })
    await stream.whenFrames((frames) => frames.some((frame) => frame.event === 'flag_track'))
    const frame = stream.frames.find((candidate) => candidate.event === 'flag_track')!
    expect(JSON.parse(frame.data!)).toEqual({
      event_name: 'checkout-completed',
      context_key: 'user-1',
      value: 42.5,
      details: { plan: 'pro', long: 'x'.repeat(200) },
      timestamp: expect.any(String),
    })
    expect(() => engine.flags.track('', 'user-1')).toThrow(/name/)
    stream.close()
  })
})
