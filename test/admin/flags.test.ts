import { afterEach, describe, expect, it } from 'vitest'
import { FlagService } from '../../src/flags/service.js'
import { booleanFlag } from '../flags/helpers.js'
import { authedAdmin, closeAdmins } from './helpers.js'

afterEach(closeAdmins)

async function authed(withFlags = true) {
  const flags = new FlagService()
  await flags.start()
  const built = await authedAdmin(withFlags ? { flags } : {}, { 'x-ctl-platform': 'dashboard' })
  return { ...built, flags }
}

describe('flag endpoints', () => {
  it('reads a PATCH sent as application/merge-patch+json (RFC 7396)', async () => {
    const { call } = await authed()
    await call('POST', '/flags', booleanFlag('checkout'))
    const patched = await call(
      'PATCH',
      '/flags/checkout',
      JSON.stringify({ description: 'merge patch' }),
      { 'content-type': 'application/merge-patch+json' },
    )
    expect(patched.statusCode).toBe(200)
    expect(patched.json()).toMatchObject({ key: 'checkout', description: 'merge patch' })
  })

  it('answers 415 to a body that is not JSON, plain text included, and changes nothing', async () => {
    const { call } = await authed()
    await call('POST', '/flags', booleanFlag('checkout'))
    for (const type of ['text/plain', 'application/xml']) {
      const refused = await call('PATCH', '/flags/checkout', '{"description":"x"}', {
        'content-type': type,
      })
      expect(refused.statusCode, type).toBe(415)
      expect(refused.json().error.code).toBe('UNSUPPORTED_MEDIA_TYPE')
    }
    expect((await call('GET', '/flags/checkout')).json().description).not.toBe('x')
  })

  it('creates, reads, replaces, patches, toggles, evaluates and deletes flags', async () => {
    const { call } = await authed()
    const created = await call('POST', '/flags', booleanFlag('checkout'))
    expect(created.statusCode).toBe(201)
    expect(created.json()).toMatchObject({ key: 'checkout', enabled: true, created_by: 'admin' })
    expect((await call('POST', '/flags', booleanFlag('checkout'))).json().error.code).toBe(
      'FLAG_EXISTS',
    )
    expect((await call('GET', '/flags')).json().map((f: { key: string }) => f.key)).toEqual([
      'checkout',
    ])
    expect((await call('GET', '/flags/checkout')).json().name).toBe('checkout')
    expect((await call('GET', '/flags/nope')).json().error.code).toBe('FLAG_NOT_FOUND')

    const replaced = await call(
      'PUT',
      '/flags/checkout',
      booleanFlag('checkout', { name: 'Checkout v2' }),
    )
    expect(replaced.statusCode).toBe(200)
    const createdByPut = await call('PUT', '/flags/search', booleanFlag('search'))
    expect(createdByPut.statusCode).toBe(201)
    const mismatch = await call('PUT', '/flags/search', booleanFlag('other'))
    expect(mismatch.statusCode).toBe(400)

    const patched = await call('PATCH', '/flags/checkout', {
      description: 'patched',
      tags: ['web'],
    })
    expect(patched.json()).toMatchObject({
      description: 'patched',
      tags: ['web'],
      name: 'Checkout v2',
    })
    expect((await call('PATCH', '/flags/checkout', { type: 'string' })).statusCode).toBe(400)

    expect((await call('POST', '/flags/checkout/disable')).json().enabled).toBe(false)
    const off = (await call('POST', '/flags/checkout/evaluate', { context: { key: 'u1' } })).json()
    expect(off).toMatchObject({
      flag_key: 'checkout',
      value: false,
      variation: 'off',
      reason: 'OFF',
    })
    expect((await call('POST', '/flags/checkout/enable')).json().enabled).toBe(true)
    const on = (await call('POST', '/flags/checkout/evaluate', { context: { key: 'u1' } })).json()
    expect(on).toMatchObject({ value: true, variation: 'on', reason: 'FALLTHROUGH', rule_id: null })
    expect(
      (await call('POST', '/flags/nope/evaluate', { context: { key: 'u1' } })).statusCode,
    ).toBe(404)

    const deleted = await call('DELETE', '/flags/search')
    expect(deleted.statusCode).toBe(204)
    expect(deleted.body).toBe('')
    expect((await call('GET', '/flags/search')).statusCode).toBe(404)
  })

  it('stores, returns, patches and evaluates metadata; refuses bad metadata with its path', async () => {
    const { call, flags } = await authed()
    const metadata = { string: '1.0.2', integer: 2, float: 0.1, boolean: true }
    const created = await call('POST', '/flags', booleanFlag('checkout', { metadata }))
    expect(created.statusCode).toBe(201)
    expect(created.json().metadata).toEqual(metadata)
    expect((await call('GET', '/flags/checkout')).json().metadata).toEqual(metadata)
    const patched = await call('PATCH', '/flags/checkout', { metadata: { float: null } })
    expect(patched.json().metadata).toStrictEqual({ string: '1.0.2', integer: 2, boolean: true })
    const evaluated = await call('POST', '/flags/checkout/evaluate', { context: { key: 'u1' } })
    expect(evaluated.json()).toMatchObject({
      value: true,
      reason: 'FALLTHROUGH',
      rule_id: null,
      metadata: { string: '1.0.2', integer: 2, boolean: true },
    })
    await call('POST', '/flags', booleanFlag('plain'))
    expect(
      (await call('POST', '/flags/plain/evaluate', { context: { key: 'u1' } })).json().metadata,
    ).toEqual({})

    // Typed loosely on purpose: the point is what the server does with bad input.
    const badEntries: [Record<string, never>, string][] = [
      [{ 'switchyard.reason': 'x' } as never, '/metadata/switchyard.reason'],
      [{ nested: { a: 1 } } as never, '/metadata/nested'],
      [{ long: 'v'.repeat(257) } as never, '/metadata/long'],
      [{ ['k'.repeat(65)]: 1 } as never, `/metadata/${'k'.repeat(65)}`],
    ]
    for (const [bad, field] of badEntries) {
      for (const [method, url, body] of [
        ['PUT', '/flags/checkout', booleanFlag('checkout', { metadata: bad })],
        ['PATCH', '/flags/checkout', { metadata: bad }],
        ['POST', '/flags', booleanFlag('other', { metadata: bad })],
      ] as const) {
        const refused = await call(method, url, body)
        expect(refused.statusCode, `${method} ${field}`).toBe(400)
        expect(refused.json().error.code).toBe('VALIDATION_ERROR')
        // Named as a JSON pointer by the flag service, or as `metadata.<key>` by the body check.
        const { details } = refused.json().error as { details: { field: string }[] }
        expect(
          details.some(
            (detail) => detail.field.replace(/^\/?metadata[./]/, '/metadata/') === field,
          ),
          `${method} ${field}`,
        ).toBe(true)
      }
    }
    expect((await flags.getFlag('checkout'))?.metadata).toStrictEqual({
      string: '1.0.2',
      integer: 2,
      boolean: true,
    })
    expect(await flags.getFlag('other')).toBeNull()
  })

  it('describes metadata in the OpenAPI document: flag bodies and the evaluate answer', async () => {
    const { call } = await authed()
    const doc = (await call('GET', '/openapi.json')).json()
    const body = (path: string, method: string) =>
      doc.paths[path][method].requestBody.content['application/json'].schema.properties as Record<
        string,
        unknown
      >
    for (const [path, method] of [
      ['/api/flags', 'post'],
      ['/api/flags/{key}', 'put'],
    ] as const) {
      const metadata = body(path, method).metadata
      expect(metadata, path).toMatchObject({ type: 'object', maxProperties: 32 })
      expect(JSON.stringify(metadata)).toContain('"maxLength":256')
    }
    const answer =
      doc.paths['/api/flags/{key}/evaluate'].post.responses['200'].content['application/json']
        .schema
    expect(answer.properties.metadata).toMatchObject({ type: 'object' })
    expect(answer.required).toContain('metadata')
  })

  it('rejects invalid flags and prerequisite cycles with nothing stored', async () => {
    const { call, flags } = await authed()
    await call('POST', '/flags', booleanFlag('a'))
    await call(
      'POST',
      '/flags',
      booleanFlag('b', { prerequisites: [{ flag_key: 'a', variation: 'on' }] }),
    )
    const cycle = await call(
      'PUT',
      '/flags/a',
      booleanFlag('a', { prerequisites: [{ flag_key: 'b', variation: 'on' }] }),
    )
    expect(cycle.statusCode).toBe(409)
    expect(cycle.json().error).toMatchObject({ code: 'FLAG_PREREQUISITE_CYCLE' })
    expect(cycle.json().error.cycle).toEqual(expect.arrayContaining(['a', 'b']))
    expect(
      (
        await call(
          'POST',
          '/flags',
          booleanFlag('c', { variations: [{ name: 'on', value: true }] }),
        )
      ).statusCode,
    ).toBe(400)
    expect((await call('POST', '/flags', { key: 'd' })).statusCode).toBe(400)
    expect((await call('DELETE', '/flags/a')).json().error.code).toBe('FLAG_IN_USE')
    expect((await flags.listFlags()).map((f) => f.key)).toEqual(['a', 'b'])
    expect((await flags.getFlag('a'))?.prerequisites).toEqual([])
  })

  it("serves the engine's own flag service when no `flags` option is given", async () => {
    const { call, engine } = await authed(false)
    await engine.saveFlag(booleanFlag('from-engine'))
    const response = await call('GET', '/flags')
    expect(response.statusCode).toBe(200)
    expect(response.json().map((flag: { key: string }) => flag.key)).toEqual(['from-engine'])
  })
})

describe('segment endpoints', () => {
  it('creates, reads, replaces and deletes segments; refuses to delete one in use', async () => {
    const { call } = await authed()
    const segment = { key: 'beta', name: 'Beta users', included: ['u1'] }
    expect((await call('POST', '/segments', segment)).statusCode).toBe(201)
    expect((await call('POST', '/segments', segment)).json().error.code).toBe('SEGMENT_EXISTS')
    expect((await call('GET', '/segments')).json()).toHaveLength(1)
    expect((await call('GET', '/segments/beta')).json()).toMatchObject({
      key: 'beta',
      included: ['u1'],
    })
    expect((await call('GET', '/segments/nope')).json().error.code).toBe('SEGMENT_NOT_FOUND')
    expect((await call('PUT', '/segments/beta', { ...segment, excluded: ['u2'] })).statusCode).toBe(
      200,
    )
    expect((await call('PUT', '/segments/gamma', { key: 'gamma', name: 'G' })).statusCode).toBe(201)
    await call(
      'POST',
      '/flags',
      booleanFlag('beta-ui', {
        rules: [
          {
            clauses: [{ attribute: 'key', operator: 'in_segment', values: ['beta'] }],
            variation: 'on',
          },
        ],
        fallthrough: 'off',
      }),
    )
    const evaluated = (
      await call('POST', '/flags/beta-ui/evaluate', { context: { key: 'u1' } })
    ).json()
    expect(evaluated).toMatchObject({ value: true, reason: 'RULE_MATCH' })
    expect(evaluated.rule_id).toEqual(expect.any(String))
    expect((await call('DELETE', '/segments/beta')).json().error.code).toBe('SEGMENT_IN_USE')
    expect((await call('DELETE', '/segments/gamma')).statusCode).toBe(204)
    expect((await call('DELETE', '/segments/gamma')).statusCode).toBe(404)
    expect((await call('POST', '/segments', { key: 'bad key!', name: 'x' })).statusCode).toBe(400)
  })

  it('answers 409 FLAG_PREREQUISITE_CYCLE with cycle [key] for a self prerequisite', async () => {
    const { call } = await authed()
    const self = { prerequisites: [{ flag_key: 'loop', variation: 'on' }] }
    const created = await call('PUT', '/flags/loop', booleanFlag('loop', self))
    expect(created.statusCode).toBe(409)
    expect(created.json().error).toMatchObject({ code: 'FLAG_PREREQUISITE_CYCLE', cycle: ['loop'] })
    expect((await call('GET', '/flags')).json()).toEqual([])
    await call('PUT', '/flags/loop', booleanFlag('loop'))
    const patched = await call('PATCH', '/flags/loop', self)
    expect(patched.statusCode).toBe(409)
    expect(patched.json().error.cycle).toEqual(['loop'])
    expect((await call('GET', '/flags/loop')).json().prerequisites).toEqual([])
  })

  it('accepts a segment whose included and excluded lists overlap', async () => {
    const { call } = await authed()
    const answer = await call('POST', '/segments', {
      key: 'beta',
      name: 'Beta',
      included: ['u1'],
      excluded: ['u1'],
    })
    expect(answer.statusCode).toBe(201)
    expect(answer.json()).toMatchObject({ included: ['u1'], excluded: ['u1'] })
  })
})
