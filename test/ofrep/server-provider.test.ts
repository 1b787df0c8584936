/**
 * A stock OFREP client — `@openfeature/server-sdk` with `@openfeature/ofrep-provider`, not
 * switchyard code — against a live switchyard admin app on a loopback port, compared with the
 * in-process provider on the same engine: every value, variant, reason, error code and piece
 * of metadata must be the same.
 */
import { OFREPProvider } from '@openfeature/ofrep-provider'
import {
  OpenFeature,
  type Client,
  type EvaluationContext,
  type JsonValue,
} from '@openfeature/server-sdk'
import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Engine } from '../../src/index.js'
import { SwitchyardProvider } from '../../src/flags/openfeature.js'
import { ADMIN, API, buildAdmin, login } from '../admin/helpers.js'
import { corpusContexts, corpusFlags, corpusSegments, type Kind } from './corpus.js'

let app: FastifyInstance
let engine: Engine
let baseUrl: string
let evaluationKey: string
let local: Client
let remote: Client

beforeAll(async () => {
  const built = await buildAdmin({ auth: ADMIN, clock: null, ofrep: { rateLimit: null } })
  app = built.app
  engine = built.engine
  for (const segment of corpusSegments) await engine.saveSegment(segment)
  for (const { flag } of corpusFlags) await engine.saveFlag(flag)
  const address = await app.listen({ host: '127.0.0.1', port: 0 })
  baseUrl = `${address}/switchyard`
  const token = await login(app)
  const created = await app.inject({
    method: 'POST',
    url: `${API}/evaluation-keys`,
    headers: { authorization: `Bearer ${token}` },
    payload: { name: 'go-service' },
  })
  evaluationKey = created.json<{ key: string }>().key
  await OpenFeature.setProviderAndWait('local', new SwitchyardProvider(engine.flags))
  await OpenFeature.setProviderAndWait(
    'remote',
    new OFREPProvider({ baseUrl, headers: [['Authorization', `Bearer ${evaluationKey}`]] }),
  )
  local = OpenFeature.getClient('local')
  remote = OpenFeature.getClient('remote')
})

afterAll(async () => {
  await OpenFeature.close()
  await app.close()
})

function details(
  client: Client,
  kind: Kind,
  key: string,
  fallback: unknown,
  context: EvaluationContext,
) {
  switch (kind) {
    case 'boolean':
      return client.getBooleanDetails(key, fallback as boolean, context)
    case 'string':
      return client.getStringDetails(key, fallback as string, context)
    case 'number':
      return client.getNumberDetails(key, fallback as number, context)
    case 'object':
      return client.getObjectDetails(key, fallback as JsonValue, context)
  }
}

/** What both providers must agree on (error messages are worded by each client). */
async function outcome(
  client: Client,
  kind: Kind,
  key: string,
  fallback: unknown,
  context: EvaluationContext,
) {
  const { value, variant, reason, errorCode, flagMetadata } = await details(
    client,
    kind,
    key,
    fallback,
    context,
  )
  return { value, variant, reason, errorCode, flagMetadata }
}

describe('@openfeature/ofrep-provider against switchyard', () => {
  const cases = corpusFlags.flatMap(({ flag, kind, fallback }) =>
    corpusContexts.map(
      (context) => [flag.key, JSON.stringify(context), kind, fallback, context] as const,
    ),
  )

  it.each(cases)(
    '%s for %s: same details as the in-process provider',
    async (key, _, kind, fallback, context) => {
      const expected = await outcome(local, kind, key, fallback, context as EvaluationContext)
      const actual = await outcome(remote, kind, key, fallback, context as EvaluationContext)
      expect(actual).toEqual(expected)
    },
  )

  it('covers every reason and the error codes of the protocol', async () => {
    const reasons = new Set<string>()
    const codes = new Set<string>()
    for (const [key, , kind, fallback, context] of cases) {
      const result = await outcome(remote, kind, key, fallback, context as EvaluationContext)
      reasons.add(result.reason ?? '')
      if (result.errorCode !== undefined) codes.add(result.errorCode)
    }
    expect([...reasons].sort()).toEqual([
      'DEFAULT',
      'DISABLED',
      'ERROR',
      'SPLIT',
      'STATIC',
      'TARGETING_MATCH',
    ])
    expect([...codes]).toEqual(['TARGETING_KEY_MISSING'])
  })

  it('answers FLAG_NOT_FOUND and TYPE_MISMATCH like the in-process provider', async () => {
    for (const [kind, key, fallback] of [
      ['boolean', 'no-such-flag', true],
      ['string', 'banner', 'x'],
      ['number', 'theme', 3],
      ['object', 'page-size', { a: 1 }],
    ] as const) {
      const context = { targetingKey: 'user-1' }
      const expected = await outcome(local, kind, key, fallback, context)
      expect(expected.errorCode).toMatch(/FLAG_NOT_FOUND|TYPE_MISMATCH/)
      expect(await outcome(remote, kind, key, fallback, context)).toEqual(expected)
    }
  })

  it('sees a change at the next evaluation (no cache to invalidate)', async () => {
    const context = { targetingKey: 'user-6' }
    expect(await remote.getBooleanValue('new-checkout', false, context)).toBe(true)
    await engine.flags.disableFlag('banner')
    const after = await remote.getBooleanDetails('new-checkout', true, context)
    expect(after).toMatchObject({
      value: false,
      reason: 'DISABLED',
      flagMetadata: { reason: 'PREREQUISITE_FAIL', prerequisite_key: 'banner' },
    })
    expect(await outcome(remote, 'boolean', 'new-checkout', true, context)).toEqual(
      await outcome(local, 'boolean', 'new-checkout', true, context),
    )
    await engine.flags.enableFlag('banner')
  })

  it('gets the caller default for a revoked or unknown key', async () => {
    await OpenFeature.setProviderAndWait(
      'stranger',
      new OFREPProvider({ baseUrl, headers: [['Authorization', 'Bearer syk_not-a-real-key']] }),
    )
    const stranger = OpenFeature.getClient('stranger')
    expect(await stranger.getBooleanDetails('banner', false, { targetingKey: 'u' })).toMatchObject({
      value: false,
      reason: 'ERROR',
      errorCode: 'GENERAL',
    })
  })

  it('honours 429 Retry-After: the provider pauses and sends nothing until then', async () => {
    const limitedApp = await buildAdmin({ clock: null, ofrep: { rateLimit: '2/minute' } })
    await limitedApp.engine.saveFlag(corpusFlags[0]!.flag)
    const address = await limitedApp.app.listen({ host: '127.0.0.1', port: 0 })
    let sent = 0
    limitedApp.app.server.on('request', () => sent++)
    await OpenFeature.setProviderAndWait(
      'limited',
      new OFREPProvider({ baseUrl: `${address}/switchyard` }),
    )
    const client = OpenFeature.getClient('limited')
    const context = { targetingKey: 'user-1' }
    // A token bucket of 2 per minute holds 4 (the burst): the fifth request is refused.
    for (let n = 0; n < 4; n++)
      expect(await client.getBooleanValue('banner', false, context)).toBe(true)
    const refused = await client.getBooleanDetails('banner', false, context)
    expect(refused).toMatchObject({ value: false, reason: 'ERROR', errorCode: 'GENERAL' })
    expect(sent).toBe(5)
    const paused = await client.getBooleanDetails('banner', false, context)
    expect(paused.errorMessage).toMatch(/paused due to TooManyRequests/)
    expect(sent).toBe(5)
    await limitedApp.app.close()
  })
})
