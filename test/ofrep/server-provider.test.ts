/**
 * A stock OFREP client — `@openfeature/server-sdk` with `@openfeature/ofrep-provider`, not
 * switchyard code — against a live switchyard admin app on a loopback port, compared with the
 * in-process provider on the same engine: every value, variant, reason, error code and piece
 * of metadata must be the same.
 */
import { OFREPProvider } from '@openfeature/ofrep-provider'
import { OpenFeature, type Client } from '@openfeature/server-sdk'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildAdmin } from '../admin/helpers.js'
import { corpusContexts, corpusFlags, corpusServer, serverDetails } from './corpus.js'

/** The admin app on its port, its engine, its evaluation key and the in-process client. */
let server: Awaited<ReturnType<typeof corpusServer>>
let remote: Client

beforeAll(async () => {
  server = await corpusServer('go-service', { rateLimit: null, detailedMetadata: true })
  const { baseUrl, key } = server
  await OpenFeature.setProviderAndWait(
    'remote',
    new OFREPProvider({ baseUrl, headers: [['Authorization', `Bearer ${key}`]] }),
  )
  remote = OpenFeature.getClient('remote')
})

afterAll(async () => {
  await OpenFeature.close()
  await server.app.close()
})

const outcome = serverDetails

describe('@openfeature/ofrep-provider against switchyard', () => {
  const cases = corpusFlags.flatMap(({ flag, kind, fallback }) =>
    corpusContexts.map(
      (context) => [flag.key, JSON.stringify(context), kind, fallback, context] as const,
    ),
  )

  it.each(cases)(
    '%s for %s: same details as the in-process provider',
    async (key, _, kind, fallback, context) => {
      const expected = await outcome(server.local, kind, key, fallback, context)
      const actual = await outcome(remote, kind, key, fallback, context)
      expect(actual).toEqual(expected)
    },
  )

  it('covers every reason and the error codes of the protocol', async () => {
    const reasons = new Set<string>()
    const codes = new Set<string>()
    for (const [key, , kind, fallback, context] of cases) {
      const result = await outcome(remote, kind, key, fallback, context)
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
      const expected = await outcome(server.local, kind, key, fallback, context)
      expect(expected.errorCode).toMatch(/FLAG_NOT_FOUND|TYPE_MISMATCH/)
      expect(await outcome(remote, kind, key, fallback, context)).toEqual(expected)
    }
  })

  it('sees a change at the next evaluation (no cache to invalidate)', async () => {
    const context = { targetingKey: 'user-6' }
    expect(await remote.getBooleanValue('new-checkout', false, context)).toBe(true)
    await server.engine.flags.disableFlag('banner')
    const after = await remote.getBooleanDetails('new-checkout', true, context)
    expect(after).toMatchObject({
      value: false,
      reason: 'DISABLED',
      flagMetadata: {
        owner: 'checkout-team',
        version: 2,
        ratio: 0.5,
        beta: true,
        'switchyard.reason': 'PREREQUISITE_FAIL',
        'switchyard.prerequisite_key': 'banner',
      },
    })
    expect(await outcome(remote, 'boolean', 'new-checkout', true, context)).toEqual(
      await outcome(server.local, 'boolean', 'new-checkout', true, context),
    )
    await server.engine.flags.enableFlag('banner')
  })

  it('gets the caller default for a revoked or unknown key', async () => {
    await OpenFeature.setProviderAndWait(
      'stranger',
      new OFREPProvider({
        baseUrl: server.baseUrl,
        headers: [['Authorization', 'Bearer syk_not-a-real-key']],
      }),
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
